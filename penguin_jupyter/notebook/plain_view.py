"""Plain-text live view for places without a widget frontend (terminal IPython).

Owns the text stream: assistant text and tool output as they arrive, one line per tool call,
approval and event notices. Background subagents' messages are printed as whole lines with the
same `[hop] ` prefix as foreground subagent lines (their text streams alongside the main one,
so it is line-buffered per subagent). Same interface as `LiveView` (handle, handle_background,
show_approval, show_note, finish, display_object).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from ..omni import OmniMessage
from .transcript_model import session_label, tool_card_summary


class PlainView:
    def __init__(
        self,
        info: dict[str, Any],
        *,
        quiet: bool = False,
        redact: Callable[[str], str],
        stream: TextIO | None = None,
    ) -> None:
        self.quiet = quiet
        self.redact = redact
        self.stream = stream or sys.stdout
        self.at_line_start = True
        self.shown_calls: set[str] = set()
        self.background_text: dict[str, str] = {}  # per background hop: streamed, not yet printed
        self.background_streamed: set[str] = set()  # hops whose current answer was streamed
        self.background_seen: set[str] = set()
        self._write(
            f"🐧 {info.get('provider')}/{info.get('model_id')} · workspace {info.get('workspace')} · "
            f"{session_label(info.get('session_id'))} · approve: {info.get('approval_mode')}\n"
        )

    def _write(self, text: str) -> None:
        if not text:
            return
        self.stream.write(self.redact(text))
        self.stream.flush()
        self.at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        if not self.at_line_start:
            self._write("\n")
        self._write(text + "\n")

    def _prefix(self, msg: OmniMessage) -> str:
        return "".join(f"[{hop}] " for hop in msg.origin or [])

    def handle(self, msg: OmniMessage) -> None:
        kind, p = msg.kind, msg.payload
        if kind == "partial_text":
            self._write(p.text)
        elif kind == "text" and p.role == "assistant":
            if not self.at_line_start:
                self._write("\n")
        elif kind == "tool_call":
            self._show_call(msg)
        elif kind == "partial_tool_call_output" and not self.quiet:
            self._write(p.output)
        elif kind == "tool_call_output":
            self._line(f"{self._prefix(msg)}  → {p.stop_reason}")
        elif kind == "approval_decision":
            self._line(f"{self._prefix(msg)}  approval: {p.decision}")
        elif kind == "abort":
            self._line(f"interrupted ({p.reason})" if p.reason else "interrupted")
        elif kind == "request_end" and p.status != "completed":
            retry = f" — retrying in {p.retry_in_ms / 1000:.0f}s" if p.retry_in_ms is not None else ""
            self._line(f"request {p.status}: {p.error_message or ''}{retry}")
        elif kind == "compaction_begin":
            self._line(f"compacting context ({p.reason}, {p.mode})…")
        elif kind == "compaction_end":
            self._line(f"compaction {p.status}")

    def handle_background(self, msg: OmniMessage) -> None:
        """A live message of a background subagent, printed as prefixed whole lines."""
        if not msg.origin:
            return
        hop = msg.origin[0]
        prefix = self._prefix(msg)
        if hop not in self.background_seen:
            self.background_seen.add(hop)
            self._line(f"[{hop}] background subagent")
        kind, p = msg.kind, msg.payload
        if kind == "partial_text" and len(msg.origin) == 1:
            self.background_streamed.add(hop)
            pending = self.background_text.get(hop, "") + p.text
            *done, rest = pending.split("\n")
            self.background_text[hop] = rest
            for line in done:
                self._line(prefix + line)
        elif kind == "text" and p.role == "assistant" and len(msg.origin) == 1:
            rest = self.background_text.pop(hop, "")
            if hop not in self.background_streamed:
                rest = p.text
            self.background_streamed.discard(hop)
            for line in rest.split("\n") if rest else []:
                self._line(prefix + line)
        elif kind == "abort":
            self._line(prefix + (f"interrupted ({p.reason})" if p.reason else "interrupted"))
        elif kind in ("tool_call", "tool_call_output", "approval_decision"):
            self.handle(msg)

    def _show_call(self, msg: OmniMessage) -> None:
        call_id = msg.payload.tool_call_id
        if call_id in self.shown_calls:
            return
        self.shown_calls.add(call_id)
        title, detail = tool_card_summary(msg)
        self._line(f"{self._prefix(msg)}🔧 {title} {detail}".rstrip())

    def show_approval(self, tool_call: OmniMessage, row: Any) -> None:
        self._show_call(tool_call)

    def show_note(self, text: str) -> None:
        self._line(text)

    def finish(self, status_text: str) -> None:
        self._line(f"— {status_text}")

    def display_object(self) -> Any:
        return None

    def close(self) -> None:
        return None
