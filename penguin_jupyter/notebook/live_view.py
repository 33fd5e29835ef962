"""The live widget view of one Task: routes each OmniMessage to the widget it belongs to.

Owns the routing rules of notebook-design.md §4: one widget per message segment (thinking,
assistant text, tool card, event), tool outputs joined to their call by `tool_call_id`,
subagent messages nested by `origin` (a background subagent's card titled "(background)"),
retry countdowns and notices. The header, cards, blocks
and throttling live in their own `live_*` modules; the runner owns the Task lifecycle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as widgets

from ..omni import OmniMessage
from .approval import ApprovalRow
from .live_blocks import SplitTextBlock
from .live_cards import ToolCardWidget
from .live_header import HeaderWidget, usage_text
from .live_holdback import SecretHoldBack
from .live_render import muted_html, note_html, pre_html
from .live_shared import plain_html, plain_vbox, shared_layout
from .live_stream import StreamTextBlock, streaming_available
from .live_teardown import close_widgets_paced
from .markdown_html import markdown_html

# A finished assistant text up to this long is shown rendered once the Task goes on past it (one
# more copy of it on the wire); a longer one stays plain until the static transcript.
RENDER_FINISHED_MAX_CHARS = 32_000
TextBlock = StreamTextBlock | SplitTextBlock


def _event_text(payload: Any) -> tuple[str, str] | None:
    """(text, color) for the notices a reader should see, None for silent events."""
    kind = payload.type
    if kind == "request_end" and payload.status != "completed":
        detail = f": {payload.error_message}" if payload.error_message else ""
        if payload.retry_in_ms is not None:
            return None  # handled by the countdown
        return f"request {payload.status}{detail}", "#c62828"
    if kind == "compaction_begin":
        return f"compacting context ({payload.reason}, {payload.mode})…", "#555"
    if kind == "compaction_end":
        detail = f": {payload.error_message}" if payload.error_message else ""
        return f"compaction {payload.status}{detail}", "#555" if payload.status == "completed" else "#c62828"
    if kind == "mcp_connect_begin":
        return f"connecting MCP servers: {', '.join(payload.servers)}…", "#555"
    if kind == "mcp_connect_end":
        parts = [
            f"{r.server} {r.status}" + (f" ({r.tools} tools)" if r.tools is not None else "")
            for r in payload.results
        ]
        return f"MCP connect {payload.status}" + (": " + ", ".join(parts) if parts else ""), "#555"
    if kind == "abort":
        return f"interrupted ({payload.reason})" if payload.reason else "interrupted", "#b26a00"
    return None


class LiveScope:
    """The widgets of one session scope (the main Session or one subagent)."""

    def __init__(
        self,
        container: widgets.Box,
        *,
        quiet: bool,
        redact: Callable[[str], str],
        holdback: SecretHoldBack | None = None,
    ) -> None:
        self.container = container
        self.quiet = quiet
        self.redact = redact
        self.holdback = holdback or SecretHoldBack()
        self.text: TextBlock | None = None
        self.finished_text: TextBlock | None = None  # ended, still plain (see `_render_finished`)
        self.thinking: TextBlock | None = None
        self.streaming = streaming_available()
        self.thinking_box: widgets.Accordion | None = None
        self.cards: dict[str, ToolCardWidget] = {}
        self.children: dict[str, LiveScope] = {}
        self.countdown: asyncio.Task | None = None
        self.blocks: list[Any] = []
        self.title_holder: tuple[widgets.Accordion, str] | None = None
        self.model_label = ""
        self.background = False

    def add(self, widget: widgets.Widget) -> None:
        self.container.children = (*self.container.children, widget)

    def note(self, text: str, color: str = "#555") -> widgets.HTML:
        widget = plain_html(note_html(self.redact(text), color))
        self.add(widget)
        return widget

    # --- segments ---------------------------------------------------------------------
    def _open_text(self) -> TextBlock:
        if self.text is None:
            if self.streaming:
                self.text = StreamTextBlock(self.container, redact=self.redact, holdback=self.holdback)
            else:
                box = plain_vbox()
                self.add(box)
                self.text = SplitTextBlock(box, markdown_html, redact=self.redact, holdback=self.holdback)
            self.blocks.append(self.text)
        return self.text

    def _end_text(self) -> None:
        """The open text block is finished: send what it still holds and release its capture.
        It is shown rendered only if the Task goes on (`_render_finished`): when the Task ends
        here, the static transcript replaces it anyway and a rendered copy would be wasted."""
        if self.text is not None:
            self.text.flush()
            self.finished_text, self.text = self.text, None

    def _render_finished(self) -> None:
        if isinstance(self.finished_text, StreamTextBlock):
            self.finished_text.show_rendered(markdown_html, RENDER_FINISHED_MAX_CHARS)
        self.finished_text = None

    def _open_thinking(self) -> TextBlock:
        if self.thinking is None:
            box = plain_vbox()
            self.thinking_box = widgets.Accordion(children=[box], selected_index=None, layout=shared_layout())
            self.thinking_box.set_title(0, "Thinking…")
            self.add(self.thinking_box)
            if self.streaming:
                self.thinking = StreamTextBlock(box, redact=self.redact, holdback=self.holdback)
            else:
                self.thinking = SplitTextBlock(
                    box, pre_html, boundary="\n", redact=self.redact, holdback=self.holdback
                )
            self.blocks.append(self.thinking)
        return self.thinking

    def _end_thinking(self) -> None:
        if self.thinking is not None:
            self.thinking.flush()
            self.thinking = None

    def card(self, tool_call_id: str, name: str = "") -> ToolCardWidget:
        card = self.cards.get(tool_call_id)
        if card is None:
            card = ToolCardWidget(
                tool_call_id, name, quiet=self.quiet, redact=self.redact, holdback=self.holdback
            )
            self.cards[tool_call_id] = card
            self.blocks.append(card)
            self.add(card.widget)
        return card

    def child(self, hop: str) -> LiveScope:
        scope = self.children.get(hop)
        if scope is None:
            box = plain_vbox()
            accordion = widgets.Accordion(children=[box], selected_index=0, layout=shared_layout())
            self.add(accordion)
            scope = LiveScope(box, quiet=self.quiet, redact=self.redact, holdback=self.holdback)
            scope.title_holder = (accordion, hop)
            scope._show_title()
            self.children[hop] = scope
        return scope

    def mark_background(self) -> None:
        """This subagent scope runs in the background (its title says so)."""
        if not self.background:
            self.background = True
            self._show_title()

    def _show_title(self) -> None:
        if self.title_holder is None:
            return
        accordion, hop = self.title_holder
        title = f"Subagent {hop}" + (f" — {self.model_label}" if self.model_label else "")
        accordion.set_title(0, title + (" (background)" if self.background else ""))

    # --- routing ----------------------------------------------------------------------
    def handle(self, msg: OmniMessage, origin: list[str]) -> None:
        if origin:
            self.child(origin[0]).handle(msg, origin[1:])
            return
        payload = msg.payload
        kind = msg.kind
        if kind == "session_meta":
            self.model_label = f"{payload.provider}/{payload.model_id}"
            self._show_title()
            return
        if kind != "request_end":
            self._stop_countdown()
        if kind in ("partial_text", "partial_thinking", "partial_tool_call", "tool_call"):
            self._render_finished()  # the Task goes on past the last text
        if kind == "partial_text":
            if payload.event_type == "start":
                self._end_text()
            self._open_text().append(payload.text)
        elif kind == "text":
            if payload.role == "assistant":
                self._open_text().replace(payload.text)
                self._end_text()
            else:
                self.add(plain_html(muted_html(self.redact("▸ " + payload.text))))
        elif kind == "partial_thinking":
            if payload.event_type == "start":
                self._end_thinking()
            self._open_thinking().append(payload.thinking)
        elif kind == "thinking":
            if payload.thinking:
                self._open_thinking().replace(payload.thinking)
            self._end_thinking()
            if self.thinking_box is not None:
                self.thinking_box.set_title(0, "Thinking")
        elif kind == "partial_tool_call":
            self._end_text()
            if payload.event_type == "start":
                self.card(payload.tool_call_id, payload.name)
        elif kind == "tool_call":
            self._end_text()
            self.card(payload.tool_call_id, payload.name).set_call(msg)
        elif kind == "partial_tool_call_output":
            card = self.card(payload.tool_call_id)
            card.append_output(payload.output)
            card.add_images(payload.images)
        elif kind == "tool_call_output":
            self.card(payload.tool_call_id).finish(msg)
        elif kind == "approval_decision":
            self.card(payload.tool_call_id).set_decision(payload.decision)
        elif kind in ("image_url", "inline_data"):
            self.add(plain_html(muted_html(f"[{kind}]")))
        elif kind == "request_end" and payload.status != "completed" and payload.retry_in_ms is not None:
            self._start_countdown(payload)
        else:
            shown = _event_text(payload)
            if shown is not None:
                self.note(*shown)

    def _start_countdown(self, payload: Any) -> None:
        self._stop_countdown()
        detail = f": {payload.error_message}" if payload.error_message else ""
        prefix = f"request {payload.status}{detail} — attempt {payload.attempt}, retrying"
        label = self.note(f"{prefix} in {payload.retry_in_ms / 1000:.0f}s", "#b26a00")

        async def tick() -> None:
            left = payload.retry_in_ms / 1000
            while left > 0:
                await asyncio.sleep(min(1.0, left))
                left -= 1.0
                label.value = note_html(self.redact(f"{prefix} in {max(left, 0):.0f}s"), "#b26a00")
            label.value = note_html(self.redact(f"{prefix} now"), "#b26a00")

        try:
            self.countdown = asyncio.get_running_loop().create_task(tick())
        except RuntimeError:
            self.countdown = None

    def _stop_countdown(self) -> None:
        if self.countdown is not None:
            self.countdown.cancel()
            self.countdown = None

    def flush(self) -> None:
        self._stop_countdown()
        for block in self.blocks:
            block.flush()
        for child in self.children.values():
            child.flush()


class LiveView:
    """Header + body for one Task; implements the approval surface for `NotebookApprover`."""

    def __init__(
        self,
        info: dict[str, Any],
        on_stop: Callable[[], None],
        *,
        quiet: bool = False,
        redact: Callable[[str], str],
        secrets: Iterable[str] = (),
    ) -> None:
        self.header = HeaderWidget(info, on_stop)
        self.body = plain_vbox()
        self.scope = LiveScope(self.body, quiet=quiet, redact=redact, holdback=SecretHoldBack(secrets))
        self.root = plain_vbox([self.header.widget, self.body])

    def handle(self, msg: OmniMessage) -> None:
        if msg.kind == "token_usage" and not msg.origin:
            p = msg.payload
            self.header.set_usage(usage_text(p.session.total, p.request.total, p.request.output))
            return
        if msg.kind == "request_begin" and not msg.origin:
            self.header.set_status("waiting for the model…")
        elif msg.kind in ("partial_text", "partial_thinking", "partial_tool_call") and not msg.origin:
            self.header.set_status("model responding…")
        elif msg.kind == "tool_call" and not msg.origin:
            self.header.set_status(f"running {msg.payload.name}…")
        self.scope.handle(msg, list(msg.origin or []))

    def handle_background(self, msg: OmniMessage) -> None:
        """A live message of a background subagent: its card is marked, the header is left alone."""
        origin = list(msg.origin or [])
        if not origin:
            return
        self.scope.child(origin[0]).mark_background()
        self.scope.handle(msg, origin)

    def show_approval(self, tool_call: OmniMessage, row: ApprovalRow | None) -> None:
        scope = self.scope
        for hop in tool_call.origin or []:
            scope = scope.child(hop)
        scope._render_finished()
        card = scope.card(tool_call.payload.tool_call_id, tool_call.payload.name)
        card.set_call(tool_call)
        if row is not None:
            self.header.set_status(f"waiting for approval of {tool_call.payload.name}")
            card.show_approval_row(row.widget)
        else:
            card.show_approval_row(None, "approval requested")

    def show_note(self, text: str) -> None:
        self.scope.note(text, "#b26a00")

    def finish(self, status_text: str) -> None:
        self.scope.flush()
        self.header.finish(status_text)

    def display_object(self) -> Any:
        return self.root

    def close(self) -> None:
        """Close every widget of the view (after the static transcript replaced it), paced."""
        close_widgets_paced([self.root])
