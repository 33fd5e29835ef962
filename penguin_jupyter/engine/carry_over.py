"""What an interrupted or retried turn leaves behind for the next request (docs/engine.md "Reconnect", docs/engine.md "Carry-over after an interrupt").

Owns `TurnResult` (what one turn produced), the transcript lines shared by `[turn_aborted]`
and `[turn_retried]`, `build_carry_over` (case A: pair committed calls with placeholders;
case B: flatten into one `[turn_aborted]` text) and `with_retried_turns`. The marker
spelling itself lives in `omni.markers`. Nothing here is ever recorded to the Trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..interfaces import LLMOutcome
from ..omni import (
    OmniMessage,
    TextPayload,
    ThinkingPayload,
    ToolCallOutputPayload,
    ToolCallPayload,
    markers,
    payload_of,
    tool_call_output,
    user_text,
)

__all__ = ["INTERRUPTED_OUTPUT", "TurnResult", "build_carry_over", "transcribe_turn", "with_retried_turns"]

INTERRUPTED_OUTPUT = "[interrupted: tool aborted by user]"


@dataclass
class TurnResult:
    """One turn's products: outputs in original call order, committed calls, the complete
    thinking/text segments (interrupted ones included) and the LLM outcome."""

    tool_outputs: list[OmniMessage] = field(default_factory=list)
    tool_calls: list[OmniMessage] = field(default_factory=list)
    assistant_segments: list[OmniMessage] = field(default_factory=list)
    outcome: LLMOutcome = field(default_factory=lambda: LLMOutcome("completed"))


def transcribe_turn(turn: TurnResult) -> list[str]:
    """Segments (production order), then committed calls, then outputs, as transcript lines."""
    lines: list[str] = []
    for seg in turn.assistant_segments:
        segment = seg.payload
        if isinstance(segment, ThinkingPayload):
            lines.append(markers.transcribe_thinking(segment.thinking))
        elif isinstance(segment, TextPayload):
            lines.append(markers.transcribe_text(segment.text))
    for call in turn.tool_calls:
        c = payload_of(call, ToolCallPayload)
        lines.append(markers.transcribe_tool_call(c.name, c.tool_call_id, c.arguments))
    for out in turn.tool_outputs:
        o = payload_of(out, ToolCallOutputPayload)
        lines.append(markers.transcribe_tool_call_output(o.tool_call_id, o.stop_reason, o.output))
    return lines


def with_retried_turns(original: list[OmniMessage], failed: list[TurnResult]) -> list[OmniMessage]:
    """The retry input: `original` unchanged, plus one `[turn_retried]` text when any failed
    attempt produced something."""
    lines = [line for turn in failed for line in transcribe_turn(turn)]
    if not lines:
        return list(original)
    return [*original, user_text(markers.build_turn_retried_block(lines))]


def build_carry_over(attempt_input: list[OmniMessage], turn: TurnResult) -> list[OmniMessage]:
    """Case A when the model output completed, case B otherwise (docs/engine.md "Carry-over after an interrupt")."""
    if turn.outcome.status == "completed":
        answered = {payload_of(out, ToolCallOutputPayload).tool_call_id for out in turn.tool_outputs}
        placeholders = [
            tool_call_output(INTERRUPTED_OUTPUT, call_id, "aborted")
            for call_id in (payload_of(call, ToolCallPayload).tool_call_id for call in turn.tool_calls)
            if call_id not in answered
        ]
        return [*turn.tool_outputs, *placeholders]
    paired = [m for m in attempt_input if m.kind == "tool_call_output"]
    lines: list[str] = []
    for msg in attempt_input:
        text = msg.payload
        if not isinstance(text, TextPayload):
            continue
        inner = markers.unwrap_synthetic_block(text.text)
        if inner is None:
            lines.append(markers.transcribe_user_input(text.text))
        elif inner:
            lines.append(inner)
    lines.extend(transcribe_turn(turn))
    return [*paired, user_text(markers.build_turn_aborted_block(lines))]
