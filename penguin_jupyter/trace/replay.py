"""Replay of one Trace file into resumable session state (docs/traces.md "Replay rules").

Owns `resume_trace(records) -> ReplayState`: the committed history a fresh model receives
via `set_history`, the carry-over the next run resends, the carried token counters and turn
count, the render view, a closed-context summary and a dangling compaction span. It reads
records only; locating files and appending the closing `compaction_end` is `resume.py`'s job.

A damaged trace (lines re-appended after a crash, a hand edit, a sync tool) is repaired where it
can be, and each repair is one line in `ReplayState.notes`: one call and one output per
`tool_call_id` (the first wins), no output whose call was never committed, no `request_end`
without its `request_begin`, the outputs of a turn before its other user messages. So the history
and carry-over always have the shape every provider accepts: each committed call answered once,
right after the turn that made it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..omni import (
    CompactionBeginPayload,
    CompactionEndPayload,
    OmniMessage,
    RequestEndPayload,
    TextPayload,
    TokenCounts,
    TokenUsagePayload,
    ToolCallOutputPayload,
    ToolCallPayload,
    is_complete_model_message,
    is_event,
    is_event_message,
    is_session_meta,
    markers,
    payload_as,
    tool_call_output,
    user_text,
)
from ..omni.models import CompactionMode, CompactionReason

PROCESS_EXIT_PLACEHOLDER = "[interrupted: process exited before the tool finished]"


@dataclass
class DanglingCompaction:
    reason: CompactionReason
    mode: CompactionMode


@dataclass
class ReplayState:
    history: list[OmniMessage] = field(default_factory=list)
    carry_over: list[OmniMessage] = field(default_factory=list)
    context_closed: bool = False
    pending_summary: OmniMessage | None = None
    session_tokens: TokenCounts = field(default_factory=TokenCounts)
    last_request_total: int = 0
    session_turns: int = 0
    render_messages: list[OmniMessage] = field(default_factory=list)
    meta: OmniMessage | None = None
    dangling_compaction: DanglingCompaction | None = None
    notes: list[str] = field(default_factory=list)  # one line per repair of a damaged trace


def _output_id(msg: OmniMessage) -> str | None:
    payload = msg.payload
    return payload.tool_call_id if isinstance(payload, ToolCallOutputPayload) else None


def _role(msg: OmniMessage) -> str | None:
    return getattr(msg.payload, "role", None)


def _call_id(msg: OmniMessage) -> str | None:
    payload = msg.payload
    return payload.tool_call_id if isinstance(payload, ToolCallPayload) else None


def _outputs_first(messages: list[OmniMessage]) -> list[OmniMessage]:
    """Tool outputs before the other user messages of the same turn (stable): providers want a
    turn's results first (Anthropic: `tool_result` blocks lead their message)."""
    outputs = [m for m in messages if _output_id(m) is not None]
    if not outputs or messages[: len(outputs)] == outputs:
        return messages
    return [*outputs, *(m for m in messages if _output_id(m) is None)]


def _placeholder(tool_call_id: str) -> OmniMessage:
    return tool_call_output(PROCESS_EXIT_PLACEHOLDER, tool_call_id, stop_reason="aborted")


def _last_usage(records: list[OmniMessage]) -> TokenUsagePayload | None:
    for msg in reversed(records):
        usage = payload_as(msg, TokenUsagePayload)
        if usage is not None and msg.type == "event_msg":
            return usage
    return None


def _request_completed(msg: OmniMessage) -> bool | None:
    """For a `request_end` event: whether the request completed; None for any other message."""
    end = payload_as(msg, RequestEndPayload)
    if end is None or msg.type != "event_msg":
        return None
    return end.status == "completed"


def _last_completed_request_text(records: list[OmniMessage]) -> str:
    """Concatenated assistant text of the last completed request (a textless one still wins)."""
    result = ""
    current: list[str] = []
    in_request = False
    for msg in records:
        completed = _request_completed(msg)
        if is_event(msg, "request_begin"):
            in_request, current = True, []
        elif completed is not None:
            if completed:
                result = "".join(current)
            in_request = False
        elif in_request and is_complete_model_message(msg):
            payload = msg.payload
            if isinstance(payload, TextPayload) and payload.role == "assistant":
                current.append(payload.text)
    return result


def _closed_context(records: list[OmniMessage], state: ReplayState) -> ReplayState | None:
    """The closed-context result when the file ends in a completed compaction, else None."""
    last = records[-1] if records else None
    end = payload_as(last, CompactionEndPayload) if last is not None and last.type == "event_msg" else None
    if end is None or end.status != "completed":
        return None
    closed = ReplayState(
        context_closed=True,
        session_tokens=state.session_tokens,
        meta=state.meta,
    )
    if end.mode != "summarize":
        return closed
    summary = markers.extract_summary(_last_completed_request_text(records))
    if not summary:
        return None  # a textless closure is void: replay turn by turn
    closed.pending_summary = user_text(markers.build_context_summary_text(summary))
    return closed


class _TurnReplayer:
    """Walks the records once, attributing user-side messages to requests by position."""

    def __init__(self) -> None:
        self.history: list[OmniMessage] = []
        self.pending: list[OmniMessage] = []
        self.snapshot: list[OmniMessage] = []
        self.outputs: list[OmniMessage] = []
        self.in_request = False
        self.in_compaction = False
        self.dangling: CompactionBeginPayload | None = None
        self.committed: dict[str, None] = {}  # insertion-ordered set of committed call ids
        self.answered: set[str] = set()
        self.turns = 0
        self.render: list[OmniMessage] = []
        self.notes: list[str] = []

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _pairs_open_call(self, msg: OmniMessage) -> bool:
        call_id = _output_id(msg)
        return call_id is None or (call_id in self.committed and call_id not in self.answered)

    def _answers(self, messages: list[OmniMessage]) -> list[OmniMessage]:
        """The user messages that can go to the model: outputs of committed, unanswered calls
        (the first output per call), outputs first; the rest dropped with a note."""
        kept: list[OmniMessage] = []
        seen: set[str] = set()
        for msg in messages:
            call_id = _output_id(msg)
            if call_id is None:
                kept.append(msg)
            elif call_id in seen:
                self._note(f"dropped a second output of tool call {call_id} (the first is kept)")
            elif call_id in self.answered:
                self._note(f"dropped an output of tool call {call_id}, which was already answered")
            elif call_id not in self.committed:
                self._note(f"dropped an output of tool call {call_id}, whose call is not in the trace")
            else:
                seen.add(call_id)
                kept.append(msg)
        return _outputs_first(kept)

    def _unique_calls(self, outputs: list[OmniMessage]) -> list[OmniMessage]:
        """The request's model output with one message per tool call id (the first wins)."""
        kept: list[OmniMessage] = []
        seen: set[str] = set()
        for msg in outputs:
            call_id = _call_id(msg)
            if call_id is not None:
                if call_id in seen or call_id in self.committed:
                    self._note(f"dropped a second record of tool call {call_id} (the first is kept)")
                    continue
                seen.add(call_id)
            kept.append(msg)
        return kept

    def _drop_request(self) -> None:
        kept = (
            [m for m in self.snapshot if _output_id(m) is not None] if self.in_compaction else self.snapshot
        )
        self.pending = [*kept, *self.pending]
        self.snapshot, self.outputs, self.in_request = [], [], False

    def _commit_request(self) -> None:
        eligible = self._answers(self.snapshot)
        eligible_ids = {i for i in map(_output_id, eligible) if i is not None}
        placeholders = [
            _placeholder(call_id)
            for call_id in self.committed
            if call_id not in self.answered and call_id not in eligible_ids
        ]
        self.answered |= {_output_id(m) or "" for m in placeholders}
        self.history.extend(_outputs_first([*placeholders, *eligible]))
        outputs = self._unique_calls(self.outputs)
        self.history.extend(outputs)
        self.answered |= eligible_ids
        for out in outputs:
            # every call of a completed request is in the history, so each must be answered
            # (a recorded call is completed; one that says otherwise was edited)
            call_id = _call_id(out)
            if call_id is not None:
                self.committed[call_id] = None
        if not self.in_compaction:
            self.turns += 1
        self.snapshot, self.outputs, self.in_request = [], [], False

    def feed(self, msg: OmniMessage) -> None:
        if is_session_meta(msg):
            return
        if is_event(msg, "request_begin"):
            if self.in_request:
                self._drop_request()
            self.in_request = True
            self.snapshot, self.pending = self.pending, []
        elif is_event(msg, "request_end"):
            if not self.in_request:
                self._note("ignored a request_end that follows no request_begin")
            elif _request_completed(msg):
                self._commit_request()
            else:
                self._drop_request()
        elif is_complete_model_message(msg):
            self.render.append(msg)
            if _role(msg) == "user":
                self.pending.append(msg)
            elif self.in_request:
                self.outputs.append(msg)
        elif is_event_message(msg):
            kind = msg.kind
            if isinstance(msg.payload, CompactionBeginPayload):
                self.in_compaction, self.dangling = True, msg.payload
            elif kind == "compaction_end":
                if self.in_request and self.in_compaction:
                    self._drop_request()  # a request cut off inside the span (resume closed it)
                self.in_compaction, self.dangling = False, None
            elif kind == "abort" and not msg.origin:
                self.render.append(msg)

    def finish(self) -> list[OmniMessage]:
        """Close an open request and return the carry-over."""
        if self.in_request:
            self._drop_request()
        carry = self._answers(self.pending)
        paired = set(self.answered) | {i for i in map(_output_id, carry) if i is not None}
        placeholders = [_placeholder(call_id) for call_id in self.committed if call_id not in paired]
        return _outputs_first([*carry, *placeholders])


_MAX_LISTED_NOTES = 5


def replay_notes_diagnostic(path: str, notes: list[str]) -> str:
    """`[trace] repaired <path> for resume: note; note; … (and N more)` (at most 5 notes listed)."""
    listed = "; ".join(notes[:_MAX_LISTED_NOTES])
    more = f" (and {len(notes) - _MAX_LISTED_NOTES} more)" if len(notes) > _MAX_LISTED_NOTES else ""
    return f"[trace] repaired {path} for resume: {listed}{more}"


def resume_trace(records: list[OmniMessage]) -> ReplayState:
    """Rebuild the resumable state of one Trace file (the latest shard of a session)."""
    usage = _last_usage(records)
    state = ReplayState(
        meta=next((m for m in records if is_session_meta(m)), None),
        session_tokens=usage.session if usage is not None else TokenCounts(),
        last_request_total=usage.request.total if usage is not None else 0,
    )
    closed = _closed_context(records, state)
    if closed is not None:
        return closed
    walker = _TurnReplayer()
    for msg in records:
        walker.feed(msg)
    state.carry_over = walker.finish()
    state.history = walker.history
    state.session_turns = walker.turns
    state.render_messages = walker.render
    state.notes = walker.notes
    if walker.dangling is not None:
        state.dangling_compaction = DanglingCompaction(
            reason=walker.dangling.reason, mode=walker.dangling.mode
        )
    return state
