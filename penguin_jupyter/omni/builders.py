"""Builders: the one way to construct OmniMessages (timestamps stamped at build time).

Owns message construction and `add_token_counts`. Every complete message and partial
gets an explicit `stop_reason` (default "completed"); empty `fidelity`/`images` are
dropped. Shapes live in `models.py`; serialization in `wire.py`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from .models import (
    AbortPayload,
    ApprovalDecisionPayload,
    ApprovalDecisionValue,
    CompactionBeginPayload,
    CompactionEndPayload,
    CompactionMode,
    CompactionReason,
    EventType,
    GoalFinishedPayload,
    ImageUrlPayload,
    InlineDataPayload,
    InlineThinkingPayload,
    McpConnectBeginPayload,
    McpConnectEndPayload,
    McpServerResult,
    McpStatus,
    OmniMessage,
    PartialTextPayload,
    PartialThinkingPayload,
    PartialToolCallOutputPayload,
    PartialToolCallPayload,
    RequestBeginPayload,
    RequestEndPayload,
    Role,
    SessionMetaPayload,
    StopReason,
    SubagentPayload,
    TextPayload,
    ThinkingPayload,
    TokenCost,
    TokenCounts,
    TokenUsagePayload,
    ToolCallOutputPayload,
    ToolCallPayload,
    ToolListReadyPayload,
    ToolSpec,
)
from .wire import dumps_compact

# (epoch second, "YYYY-MM-DDTHH:MM:SS.") of the last stamp: streaming builds many messages per
# second, and formatting the date part once per second keeps `now_iso` cheap on that hot path.
_second_prefix: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """ISO-8601 UTC with milliseconds and a `Z` suffix (`2026-01-02T03:04:05.678Z`)."""
    global _second_prefix
    now = time.time()
    second = int(now)
    cached_second, prefix = _second_prefix
    if second != cached_second:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
        _second_prefix = (second, prefix)
    return f"{prefix}{int((now - second) * 1000):03d}Z"


def _model(payload: Any) -> OmniMessage:
    # Partials are validated like everything else: for these small frozen models pydantic's
    # validating constructor (Rust) measured faster than `model_construct` (Python), ~9 µs vs
    # ~14 µs for a `partial_text`, so skipping validation would not make the hot path cheaper.
    return OmniMessage(timestamp=now_iso(), type="model_msg", payload=payload)


def _event(payload: Any) -> OmniMessage:
    return OmniMessage(timestamp=now_iso(), type="event_msg", payload=payload)


# --- session_meta ---------------------------------------------------------------------------


def session_meta(
    *,
    session_id: str,
    provider: str,
    model_id: str,
    model_context_window: int | str,
    system_prompt: str,
    agent_state: str,
    workspace: str,
    source: str | None = None,
) -> OmniMessage:
    # Validated from a mapping: `source` is any string here (an unknown one is dropped).
    payload = SessionMetaPayload.model_validate(
        {
            "session_id": session_id,
            "provider": provider,
            "model_id": model_id,
            "model_context_window": model_context_window,
            "system_prompt": system_prompt,
            "agent_state": agent_state,
            "workspace": workspace,
            "source": source,
        }
    )
    return OmniMessage(timestamp=now_iso(), type="session_meta", payload=payload)


# --- complete model messages ---------------------------------------------------------------


def text_message(
    role: Role, text: str, stop_reason: StopReason = "completed", fidelity: dict | None = None
) -> OmniMessage:
    return _model(TextPayload(role=role, text=text, stop_reason=stop_reason, fidelity=fidelity))


def user_text(text: str, sender: str | None = None) -> OmniMessage:
    # Validated from a mapping: `sender` is any string here ("user" is dropped).
    return _model(TextPayload.model_validate({"role": "user", "text": text, "sender": sender}))


def assistant_text(
    text: str, stop_reason: StopReason = "completed", fidelity: dict | None = None
) -> OmniMessage:
    return text_message("assistant", text, stop_reason, fidelity)


def image_url(url: str) -> OmniMessage:
    return _model(ImageUrlPayload(image_url=url))


def inline_data(role: Role, data: str, mime_type: str, fidelity: dict | None = None) -> OmniMessage:
    return _model(InlineDataPayload(role=role, data=data, mime_type=mime_type, fidelity=fidelity))


def thinking(text: str, stop_reason: StopReason = "completed", fidelity: dict | None = None) -> OmniMessage:
    return _model(ThinkingPayload(thinking=text, stop_reason=stop_reason, fidelity=fidelity))


def inline_thinking(data: str, mime_type: str, fidelity: dict | None = None) -> OmniMessage:
    return _model(InlineThinkingPayload(data=data, mime_type=mime_type, fidelity=fidelity))


def tool_call(
    name: str,
    arguments: str | Mapping[str, Any],
    tool_call_id: str,
    stop_reason: StopReason = "completed",
    fidelity: dict | None = None,
) -> OmniMessage:
    """`arguments` as a dict is re-serialized compactly (`{"cmd":"ls -la"}`)."""
    if not isinstance(arguments, str):
        arguments = dumps_compact(dict(arguments))
    return _model(
        ToolCallPayload(
            name=name,
            arguments=arguments,
            tool_call_id=tool_call_id,
            stop_reason=stop_reason,
            fidelity=fidelity,
        )
    )


def tool_call_output(
    output: str,
    tool_call_id: str,
    stop_reason: StopReason | None = None,
    images: list[str] | None = None,
) -> OmniMessage:
    return _model(
        ToolCallOutputPayload(
            output=output, images=images, tool_call_id=tool_call_id, stop_reason=stop_reason or "completed"
        )
    )


# --- partials --------------------------------------------------------------------------------


def partial_text(event_type: EventType, text: str = "", stop_reason: StopReason = "completed") -> OmniMessage:
    return _model(PartialTextPayload(event_type=event_type, text=text, stop_reason=stop_reason))


def partial_thinking(
    event_type: EventType, text: str = "", stop_reason: StopReason = "completed"
) -> OmniMessage:
    return _model(PartialThinkingPayload(event_type=event_type, thinking=text, stop_reason=stop_reason))


def partial_tool_call(
    event_type: EventType,
    name: str,
    arguments: str,
    tool_call_id: str,
    stop_reason: StopReason = "completed",
) -> OmniMessage:
    return _model(
        PartialToolCallPayload(
            event_type=event_type,
            name=name,
            arguments=arguments,
            tool_call_id=tool_call_id,
            stop_reason=stop_reason,
        )
    )


def partial_tool_call_output(
    event_type: EventType,
    output: str,
    tool_call_id: str,
    stop_reason: StopReason = "completed",
    images: list[str] | None = None,
) -> OmniMessage:
    return _model(
        PartialToolCallOutputPayload(
            event_type=event_type,
            output=output,
            images=images,
            tool_call_id=tool_call_id,
            stop_reason=stop_reason,
        )
    )


# --- events ------------------------------------------------------------------------------------


def request_begin() -> OmniMessage:
    return _event(RequestBeginPayload())


def request_end(
    status: StopReason,
    error_message: str | None = None,
    attempt: int | None = None,
    retry_in_ms: int | None = None,
) -> OmniMessage:
    return _event(
        RequestEndPayload(
            status=status, error_message=error_message, attempt=attempt, retry_in_ms=retry_in_ms
        )
    )


def approval_decision(decision: ApprovalDecisionValue, tool_call_id: str) -> OmniMessage:
    return _event(ApprovalDecisionPayload(decision=decision, tool_call_id=tool_call_id))


def abort(reason: str | None = None) -> OmniMessage:
    return _event(AbortPayload(reason=reason))


def empty_token_counts() -> TokenCounts:
    return TokenCounts()


def add_token_counts(a: TokenCounts, b: TokenCounts) -> TokenCounts:
    return TokenCounts(
        cache_read=a.cache_read + b.cache_read,
        cache_write=a.cache_write + b.cache_write,
        output=a.output + b.output,
        total=a.total + b.total,
    )


def token_usage(
    session: TokenCounts | Mapping[str, int],
    request: TokenCounts | Mapping[str, int],
    cost_usd: TokenCost | Mapping[str, float] | None = None,
) -> OmniMessage:
    """`cost_usd` ({request, session} in USD) only when the model's price is known."""
    counts: dict[str, Any] = {
        "session": TokenCounts.model_validate(session),
        "request": TokenCounts.model_validate(request),
    }
    if cost_usd is not None:
        counts["cost_usd"] = TokenCost.model_validate(cost_usd).model_dump()
    return _event(TokenUsagePayload.model_validate(counts))


def compaction_begin(reason: CompactionReason, mode: CompactionMode, context: int, turns: int) -> OmniMessage:
    return _event(CompactionBeginPayload(reason=reason, mode=mode, context=context, turns=turns))


def compaction_end(
    reason: CompactionReason,
    mode: CompactionMode,
    status: StopReason,
    attempt: int | None = None,
    error_message: str | None = None,
) -> OmniMessage:
    return _event(
        CompactionEndPayload(
            reason=reason, mode=mode, status=status, attempt=attempt, error_message=error_message
        )
    )


def subagent_event(session_id: str) -> OmniMessage:
    return _event(SubagentPayload(session_id=session_id))


def tool_list_ready(tools: Iterable[ToolSpec | Mapping[str, Any]]) -> OmniMessage:
    return _event(ToolListReadyPayload(tools=[ToolSpec.model_validate(t) for t in tools]))


def mcp_connect_begin(servers: list[str]) -> OmniMessage:
    return _event(McpConnectBeginPayload(servers=servers))


def mcp_connect_end(status: McpStatus, results: Iterable[McpServerResult | Mapping[str, Any]]) -> OmniMessage:
    return _event(
        McpConnectEndPayload(status=status, results=[McpServerResult.model_validate(r) for r in results])
    )


def goal_finished(outcome: str, rounds: int, tokens_used: int) -> OmniMessage:
    return _event(GoalFinishedPayload(outcome=outcome, rounds=rounds, tokens_used=tokens_used))


def with_origin(msg: OmniMessage, hop: str) -> OmniMessage:
    """A copy with `hop` prepended to `origin` (outermost first); `msg` is not mutated."""
    return msg.model_copy(update={"origin": [hop, *(msg.origin or [])]})
