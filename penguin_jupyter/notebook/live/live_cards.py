"""Live tool-call cards: header, diff preview, approval row, streamed output, final status.

Owns one card's widgets. The header text and the diff come from `transcript_model`
(`tool_card_summary`, `tool_description`, `diff_preview`) so live and static cards read alike.
Output streams into line-batch widgets (never re-sending finished lines); a long output is
collapsed at the end to head and tail lines with the full text one click away.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import ipywidgets as widgets

from ...omni import OmniMessage, ToolCallOutputPayload, ToolCallPayload
from ..transcript.no_fetch_html import image_html
from ..transcript.transcript_model import diff_preview, tool_card_summary, tool_description
from .live_blocks import SplitTextBlock
from .live_holdback import SecretHoldBack
from .live_render import head_tail, muted_html, pre_html
from .live_shared import plain_hbox, plain_html, plain_vbox, shared_layout

COLLAPSE_LINES = 40
STATUS_COLORS = {"completed": "#2e7d32", "failed": "#c62828", "aborted": "#b26a00", "timeout": "#b26a00"}
DECISION_TEXT = {"allow": "approved", "deny": "denied", "forbidden": "forbidden by policy"}
CARD_STYLE = {"border": "1px solid #d0d7de", "padding": "4px 8px", "margin": "4px 0"}


def close_widget_tree(roots: tuple[widgets.Widget, ...] | list[widgets.Widget]) -> None:
    """Close widgets and all their descendants (they are no longer displayed)."""
    pending = list(roots)
    while pending:
        widget = pending.pop()
        pending.extend(getattr(widget, "children", ()) or ())
        widget.close()


class ToolCardWidget:
    """One tool call, its approval and its output, joined by `tool_call_id`."""

    def __init__(
        self,
        tool_call_id: str,
        name: str = "",
        *,
        quiet: bool = False,
        redact: Callable[[str], str],
        holdback: SecretHoldBack | None = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.name = name
        self.quiet = quiet
        self.redact = redact
        self.title = plain_html(self._title_html(name or "tool", ""))
        self.detail = plain_html()
        self.approval_box = plain_hbox()
        self.output_box = widgets.VBox([], layout=shared_layout(max_height="24em", overflow="auto"))
        self.status = plain_html()
        self.output = SplitTextBlock(
            self.output_box, pre_html, boundary="\n", chunk_chars=4000, redact=redact, holdback=holdback
        )
        children = [self.title, self.detail, self.approval_box, self.status]
        if quiet:
            self.output_accordion = widgets.Accordion(
                children=[self.output_box], selected_index=None, layout=shared_layout()
            )
            self.output_accordion.set_title(0, "Output")
            children.insert(3, self.output_accordion)
        else:
            children.insert(3, self.output_box)
        self.widget = widgets.VBox(children, layout=shared_layout(**CARD_STYLE))
        self.images: list[str] = []

    def _title_html(self, name: str, detail: str) -> str:
        text = f"<b>{html.escape(name)}</b>"
        if detail:
            text += f' <code style="font-size:12px">{html.escape(self.redact(detail))}</code>'
        return text

    def set_call(self, tool_call: OmniMessage) -> None:
        payload = tool_call.payload
        if not isinstance(payload, ToolCallPayload):
            return
        self.name = payload.name
        title, detail = tool_card_summary(tool_call)
        self.title.value = self._title_html(title, detail)
        parts = []
        description = tool_description(payload.arguments)
        if description:
            parts.append(muted_html(self.redact(description)))
        diff = diff_preview(payload.name, payload.arguments)
        if diff:
            parts.append(pre_html(self.redact(diff)))
        if payload.stop_reason != "completed":
            parts.append(muted_html(f"(call {payload.stop_reason}; not executed)"))
        self.detail.value = "".join(parts)

    def show_approval_row(self, row_widget: widgets.Widget | None, note: str = "") -> None:
        self.approval_box.children = (
            (row_widget,) if row_widget is not None else (plain_html(muted_html(note)),)
        )

    def set_decision(self, decision: str) -> None:
        text = DECISION_TEXT.get(decision, decision)
        replaced = self.approval_box.children
        self.approval_box.children = (plain_html(muted_html(f"Approval: {text}")),)
        close_widget_tree(replaced)

    def append_output(self, delta: str) -> None:
        self.output.append(delta)

    def add_images(self, images: list[str] | None) -> None:
        for url in images or []:
            if url not in self.images:
                self.images.append(url)
                img = plain_html(image_html(url))
                self.output_box.children = (*self.output_box.children, img)

    def finish(self, output: OmniMessage) -> None:
        payload = output.payload
        if not isinstance(payload, ToolCallOutputPayload):
            return
        self.output.replace(payload.output)
        self.output.flush()
        self.add_images(payload.images)
        lines = len(payload.output.splitlines())
        if lines > COLLAPSE_LINES and not self.quiet:
            short, _hidden = head_tail(self.redact(payload.output))
            full = widgets.Accordion(
                children=[plain_vbox(self.output_box.children)], selected_index=None, layout=shared_layout()
            )
            full.set_title(0, f"Full output ({lines} lines)")
            self.output_box.layout = shared_layout()
            self.output_box.children = (plain_html(pre_html(short)), full)
        color = STATUS_COLORS.get(payload.stop_reason, "#555")
        self.status.value = (
            f'<span style="color:{color};font-size:12px">{html.escape(payload.stop_reason)}</span>'
        )

    def flush(self) -> None:
        self.output.flush()
