"""Live tool-call cards: header, what the call will do, approval row, streamed output, status.

Owns one card's widgets. The header text, the body and the diff come from `transcript_model`
(`tool_card_summary`, `tool_description`, `approval_body`) so live and static cards
read alike. The body is the call's whole command / code / cell source / prompt (or, for
delete_cell and run_cell, the cell's source; for edit_cell, the diff against the cell as the
frontend holds it at approval time: a `CellPreview`), scrollable monospace, anything beyond
`CARD_HEAD_LINES` folded behind a visible "N more lines" that expands; every string taken from
the call is redacted, then shown with its invisible characters made visible (`visible_controls`).
Output streams into line-batch widgets (never re-sending finished lines); a long output is
collapsed at the end to head and tail lines with the full text one click away.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import ipywidgets as widgets

from ...omni import OmniMessage, ToolCallOutputPayload, ToolCallPayload
from ...redaction import EMPTY, Redactor
from ..transcript.cell_sources import CellPreview
from ..transcript.no_fetch_html import image_html
from ..transcript.transcript_model import (
    approval_body,
    card_roles_of,
    tool_card_summary,
    tool_description,
)
from ..transcript.visible_text import visible_controls
from .live_blocks import SplitTextBlock
from .live_holdback import SecretHoldBack
from .live_render import PRE_STYLE, head_tail, muted_html, pre_html
from .live_shared import plain_hbox, plain_html, plain_vbox, shared_layout
from .live_teardown import close_widgets_now

COLLAPSE_LINES = 40
CARD_HEAD_LINES = 12
BODY_STYLE = PRE_STYLE + ";max-height:24em;overflow:auto;padding:4px;background:var(--jp-layout-color2,#f6f8fa)"
STATUS_COLORS = {"completed": "#2e7d32", "failed": "#c62828", "aborted": "#b26a00", "timeout": "#b26a00"}
DECISION_TEXT = {"allow": "approved", "deny": "denied", "forbidden": "forbidden by policy"}
CARD_STYLE = {"border": "1px solid #d0d7de", "padding": "4px 8px", "margin": "4px 0"}


class ToolCardWidget:
    """One tool call, its approval and its output, joined by `tool_call_id`."""

    def __init__(
        self,
        tool_call_id: str,
        name: str = "",
        *,
        quiet: bool = False,
        redactor: Redactor = EMPTY,
        holdback: SecretHoldBack | None = None,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.name = name
        self.quiet = quiet
        self.redactor = redactor
        self.title = plain_html(self._title_html(name or "tool", ""))
        self.detail = plain_html()
        self.body_box = plain_vbox()
        self.approval_box = plain_hbox()
        self.output_box = widgets.VBox([], layout=shared_layout(max_height="24em", overflow="auto"))
        self.status = plain_html()
        self.output = SplitTextBlock(
            self.output_box, pre_html, boundary="\n", chunk_chars=4000, redactor=redactor, holdback=holdback
        )
        children = [self.title, self.detail, self.body_box, self.approval_box, self.status]
        if quiet:
            self.output_accordion = widgets.Accordion(
                children=[self.output_box], selected_index=None, layout=shared_layout()
            )
            self.output_accordion.set_title(0, "Output")
            children.insert(4, self.output_accordion)
        else:
            children.insert(4, self.output_box)
        self.widget = widgets.VBox(children, layout=shared_layout(**CARD_STYLE))
        self.images: list[str] = []

    def _shown(self, text: str) -> str:
        """Model-written text as a card shows it: redacted, invisible characters made visible."""
        return visible_controls(self.redactor.text(text))

    def _title_html(self, name: str, detail: str) -> str:
        text = f"<b>{html.escape(visible_controls(self.redactor.text(name)))}</b>"
        if detail:
            text += f' <code style="font-size:12px">{html.escape(self._shown(detail))}</code>'
        return text

    def set_call(
        self, tool_call: OmniMessage, preview: CellPreview | None = None, touches: Sequence[str] = ()
    ) -> None:
        """Show the call; `preview` is the cell a notebook tool's approval card shows, `touches`
        the paths that land elsewhere than they read (`CallEffect.where_lines`)."""
        payload = tool_call.payload
        if not isinstance(payload, ToolCallPayload):
            return
        self.name = payload.name
        roles = card_roles_of(payload.name)
        title, detail = tool_card_summary(tool_call, roles)
        self.title.value = self._title_html(title, detail)
        parts = []
        description = tool_description(payload.arguments)
        if description:
            parts.append(muted_html(self._shown(description)))
        parts += [muted_html(self._shown(line)) for line in touches]
        body = approval_body(payload.name, payload.arguments, preview, roles)
        if preview is not None and roles.get("cell"):
            parts.append(muted_html(self._shown(preview.label())))
        if payload.stop_reason != "completed":
            parts.append(muted_html(f"(call {payload.stop_reason}; not executed)"))
        self.detail.value = "<br>".join(parts)  # one line each: never "Run itcell a1 as …"
        self._show_body(self._shown(body) if body else "")

    def _show_body(self, text: str) -> None:
        """`text` in a scrollable monospace block; lines beyond CARD_HEAD_LINES behind an
        Accordion titled "N more lines" (collapsed, visible, one click expands it)."""
        replaced = self.body_box.children
        lines = text.split("\n") if text else []
        children: list[widgets.Widget] = []
        if lines:
            children.append(plain_html(pre_html("\n".join(lines[:CARD_HEAD_LINES]), BODY_STYLE)))
        rest = lines[CARD_HEAD_LINES:]
        if rest:
            more = widgets.Accordion(
                children=[plain_html(pre_html("\n".join(rest), BODY_STYLE))],
                selected_index=None,
                layout=shared_layout(),
            )
            more.set_title(0, f"{len(rest)} more line{'s' if len(rest) != 1 else ''}")
            children.append(more)
        self.body_box.children = tuple(children)
        close_widgets_now(replaced)

    def show_approval_row(self, row_widget: widgets.Widget | None, note: str = "") -> None:
        replaced = [w for w in self.approval_box.children if w is not row_widget]
        self.approval_box.children = (
            (row_widget,) if row_widget is not None else (plain_html(muted_html(note)),)
        )
        close_widgets_now(replaced)

    def set_decision(self, decision: str, reason: str | None = None) -> None:
        """The row becomes "Approval: approved", plus why when no click decided (a rule, the
        administrator's policy, the cell's mode)."""
        text = DECISION_TEXT.get(decision, decision) + (f" — {reason}" if reason else "")
        replaced = self.approval_box.children
        self.approval_box.children = (plain_html(muted_html(f"Approval: {text}")),)
        close_widgets_now(replaced)

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
            short, _hidden = head_tail(self.redactor.text(payload.output))
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
