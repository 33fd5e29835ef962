"""Plain-text live view for places without a widget frontend (terminal IPython).

Owns the text stream: assistant text and tool output as they arrive, one line per tool call,
approval and event notices. Background subagents' messages are printed as whole lines with the
same `[hop] ` prefix as foreground subagent lines (their text streams alongside the main one,
so it is line-buffered per subagent). Implements `cell_view.CellView`, like `LiveView`; the
notice texts come from `view_notices.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from ...omni import (
    AbortPayload,
    ApprovalDecisionPayload,
    OmniMessage,
    PartialTextPayload,
    PartialToolCallOutputPayload,
    TextPayload,
    ToolCallOutputPayload,
    ToolCallPayload,
)
from ...redaction import EMPTY, Redactor
from ..transcript.cell_sources import CellPreview
from ..transcript.transcript_model import approval_body, session_label, tool_card_summary
from ..transcript.visible_text import visible_controls
from .approval_row import ApprovalRow
from .view_notices import interrupted_text, notice_for


class PlainView:
    def __init__(
        self,
        info: Mapping[str, str],
        *,
        quiet: bool = False,
        redactor: Redactor = EMPTY,
        stream: TextIO | None = None,
    ) -> None:
        self.quiet = quiet
        self.redactor = redactor
        self.stream = stream or sys.stdout
        self.at_line_start = True
        self.shown_calls: set[str] = set()
        self.background_text: dict[str, str] = {}  # per background hop: streamed, not yet printed
        self.background_streamed: set[str] = set()  # hops whose current answer was streamed
        self.background_seen: set[str] = set()
        self._write(
            f"🐧 {info.get('provider')}/{info.get('model_id')} · workspace {info.get('workspace')} · "
            f"{session_label(info.get('session_id'))} · approve: {info.get('approval_mode')}"
            f"{' · kernel: ' + info['kernel'] if info.get('kernel') else ''}\n"
        )

    def _write(self, text: str) -> None:
        if not text:
            return
        self.stream.write(self.redactor.text(text))
        self.stream.flush()
        self.at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        if not self.at_line_start:
            self._write("\n")
        self._write(text + "\n")

    def _prefix(self, msg: OmniMessage) -> str:
        return "".join(f"[{hop}] " for hop in msg.origin or [])

    def handle(self, msg: OmniMessage) -> None:
        p = msg.payload
        if isinstance(p, PartialTextPayload):
            self._write(p.text)
        elif isinstance(p, TextPayload):
            if p.role == "assistant" and not self.at_line_start:
                self._write("\n")
        elif isinstance(p, ToolCallPayload):
            self._show_call(msg, p)
        elif isinstance(p, PartialToolCallOutputPayload):
            if not self.quiet:
                self._write(p.output)
        elif isinstance(p, ToolCallOutputPayload):
            self._line(f"{self._prefix(msg)}  → {p.stop_reason}")
        elif isinstance(p, ApprovalDecisionPayload):
            self._line(f"{self._prefix(msg)}  approval: {p.decision}")
        else:
            notice = notice_for(p)
            if notice is not None:
                self._line(notice.text)

    def handle_background(self, msg: OmniMessage) -> None:
        """A live message of a background subagent, printed as prefixed whole lines."""
        if not msg.origin:
            return
        hop = msg.origin[0]
        prefix = self._prefix(msg)
        if hop not in self.background_seen:
            self.background_seen.add(hop)
            self._line(f"[{hop}] background subagent")
        p = msg.payload
        direct = len(msg.origin) == 1
        if isinstance(p, PartialTextPayload) and direct:
            self._background_delta(hop, prefix, p.text)
        elif isinstance(p, TextPayload) and p.role == "assistant" and direct:
            self._background_answer(hop, prefix, p.text)
        elif isinstance(p, AbortPayload):
            self._line(prefix + interrupted_text(p.reason))
        elif isinstance(p, (ToolCallPayload, ToolCallOutputPayload, ApprovalDecisionPayload)):
            self.handle(msg)

    def _background_delta(self, hop: str, prefix: str, text: str) -> None:
        self.background_streamed.add(hop)
        pending = self.background_text.get(hop, "") + text
        *done, rest = pending.split("\n")
        self.background_text[hop] = rest
        for line in done:
            self._line(prefix + line)

    def _background_answer(self, hop: str, prefix: str, text: str) -> None:
        rest = self.background_text.pop(hop, "")
        if hop not in self.background_streamed:
            rest = text
        self.background_streamed.discard(hop)
        for line in rest.split("\n") if rest else []:
            self._line(prefix + line)

    def _show_call(self, msg: OmniMessage, payload: ToolCallPayload) -> None:
        if payload.tool_call_id in self.shown_calls:
            return
        self.shown_calls.add(payload.tool_call_id)
        title, detail = tool_card_summary(msg)
        self._line(visible_controls(f"{self._prefix(msg)}🔧 {title} {self.redactor.text(detail)}".rstrip()))

    def show_decision_reason(self, decision: OmniMessage, reason: str) -> None:
        self._line(f"{self._prefix(decision)}  ({reason})")

    def show_approval(
        self,
        tool_call: OmniMessage,
        row: ApprovalRow | None,
        *,
        background: bool = False,
        preview: CellPreview | None = None,
        touches: Sequence[str] = (),
    ) -> None:
        payload = tool_call.payload
        if not isinstance(payload, ToolCallPayload):
            return
        self._show_call(tool_call, payload)
        for line in touches:
            self._line(f"    {visible_controls(self.redactor.text(line))}")
        if preview is not None:
            self._line(f"    {visible_controls(self.redactor.text(preview.label()))}")
        body = approval_body(payload.name, payload.arguments, preview)
        for line in visible_controls(self.redactor.text(body)).split("\n") if body else []:
            self._line(f"    │ {line}")

    def show_note(self, text: str) -> None:
        self._line(text)

    def show_cost(self, text: str) -> None:
        """Printed once, at the end, by the transcript (a line per request would be noise)."""

    def finish(self, status_text: str) -> None:
        self._line(f"— {status_text}")

    def display_object(self) -> object | None:
        return None

    def close(self) -> None:
        return None
