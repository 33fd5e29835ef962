"""Context compaction (docs/engine.md "Compaction"): the trigger check, discard, summarize and one summary request.

Owns `Compactor`, the engine's collaborator that replaces a full context by a
`[context_summary]` (or by nothing, in discard mode) and starts a fresh LLM via `create_llm`.
Everything it reads and writes is explicit: its settings, the engine's `ContextState` (the
live LLM, counters and carry-over), the `Recorder` and the reconnect `Backoff`, all handed in
by `ContextEngine`. Between `compaction_begin` and `compaction_end` only each attempt's
`token_usage` and the summary text being written reach the stream; everything else of the
request is Trace-only. When to compact within a task is the engine's business.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import dataclass, field

from ..interfaces import AbortSignal, GenerativeModelParameters, LLMOutcome, unless_aborted
from ..omni import (
    CompactionReason,
    OmniMessage,
    PartialTextPayload,
    StopReason,
    TextPayload,
    TokenUsagePayload,
    ToolCallPayload,
    compaction_begin,
    compaction_end,
    markers,
    request_begin,
    tool_call_output,
    user_text,
)
from .context_state import ContextState
from .protocols import CreateLLM
from .recorder import Recorder
from .settings import SUMMARY_RETRY_GUIDANCE, CompactionSettings
from .turn import ABORT_GRACE_S, request_end_for
from .waits import Backoff

__all__ = ["TOOL_CALL_REPAIR", "CompactionResult", "Compactor"]

TOOL_CALL_REPAIR = "[tool error] the compaction request expects a summary, not tool calls"
_CALLED_TOOLS = "the response called tools instead of writing a summary"
_NO_SUMMARY = "the response contained no usable summary"


@dataclass
class CompactionResult:
    """`committed` becomes True once any attempt completed (the old context then absorbed the
    pending tool outputs)."""

    status: StopReason = "failed"
    summary: OmniMessage | None = None
    committed: bool = False


@dataclass
class _Attempt:
    """What one summary request produced."""

    outcome: LLMOutcome = field(default_factory=lambda: LLMOutcome("aborted"))
    text: str = ""
    streamed_partial: bool = False
    tool_calls: list[OmniMessage] = field(default_factory=list)
    usage: OmniMessage | None = None


@dataclass
class _SummaryRun:
    """The state of one summarize span across its attempts."""

    reason: CompactionReason
    prompt: OmniMessage
    base: list[OmniMessage]
    request_input: list[OmniMessage]
    repairs: list[OmniMessage] = field(default_factory=list)
    reconnects: int = 0
    attempts: int = 0
    last_error: str | None = None
    unusable: bool = False


async def _next_item(stream: AsyncIterator[object], signal: AbortSignal | None) -> object:
    """The stream's next item; after an abort the LLM gets ABORT_GRACE_S to close out, then
    the pull is abandoned as `LLMOutcome("aborted")`. StopAsyncIteration propagates."""
    finished, item = await unless_aborted(anext(stream), signal, grace_s=ABORT_GRACE_S)
    return item if finished else LLMOutcome("aborted")


class Compactor:
    """Compaction for one engine; `settings` None or `create_llm` None means "not configured"."""

    def __init__(
        self,
        settings: CompactionSettings | None,
        create_llm: CreateLLM | None,
        *,
        state: ContextState,
        recorder: Recorder,
        backoff: Backoff,
        max_reconnects: int,
    ) -> None:
        self.settings = settings
        self._create_llm = create_llm
        self._state = state
        self._recorder = recorder
        self._backoff = backoff
        self._max_reconnects = max_reconnects

    @property
    def configured(self) -> bool:
        return self.settings is not None and self._create_llm is not None

    def trigger(self) -> CompactionReason | None:
        """The reason to compact now ("context" or "turns"), or None."""
        settings, state = self.settings, self._state
        if settings is None or self._create_llm is None:
            return None
        if settings.max_context_length > 0 and state.last_request_total >= settings.max_context_length:
            return "context"
        if settings.max_session_turns > 0 and state.session_turns >= settings.max_session_turns:
            return "turns"
        return None

    # --- between runs ---------------------------------------------------------------------------

    async def manual(self, signal: AbortSignal | None) -> AsyncIterator[OmniMessage]:
        """docs/engine.md "Compaction": compact the carried-over context on request (nothing when there is none)."""
        state = self._state
        if self.settings is None or self._create_llm is None or state.session_turns == 0:
            return
        if self.settings.mode == "discard":
            state.carry_over = [m for m in state.carry_over if m.kind != "tool_call_output"]
            async for msg in self.discard("manual"):
                yield msg
            return
        folded, state.carry_over = state.carry_over, []
        result = CompactionResult()
        async for msg in self.summarize("manual", folded, signal, result):
            yield msg
        if result.status == "completed" and result.summary is not None:
            state.pending_summary = result.summary
        elif not result.committed:
            state.carry_over = folded

    # --- discard --------------------------------------------------------------------------------

    async def discard(self, reason: CompactionReason) -> AsyncIterator[OmniMessage]:
        state = self._state
        yield self._event(compaction_begin(reason, "discard", state.last_request_total, state.session_turns))
        yield self._event(compaction_end(reason, "discard", "completed"))
        self._start_new_context()

    # --- summarize ------------------------------------------------------------------------------

    async def summarize(
        self,
        reason: CompactionReason,
        pending: list[OmniMessage],
        signal: AbortSignal | None,
        result: CompactionResult,
    ) -> AsyncIterator[OmniMessage]:
        """docs/engine.md "Compaction": attempts until a usable summary, a final failure or an abort; fills `result`."""
        assert self.settings is not None
        state = self._state
        yield self._event(
            compaction_begin(reason, "summarize", state.last_request_total, state.session_turns)
        )
        prompt = user_text(self.settings.prompt)
        self._recorder.record(prompt)
        run = _SummaryRun(reason, prompt, base=[*pending, prompt], request_input=[*pending, prompt])
        while True:
            if signal is not None and signal.aborted:
                yield self._end(run, result, "aborted")
                return
            attempt = _Attempt()
            async for msg in self._request(run.request_input, signal, run.reconnects, attempt):
                yield msg
            run.attempts += 1
            if attempt.usage is not None:
                yield attempt.usage
            final = self._judge(run, attempt, result)
            if final is not None:
                yield self._end(run, result, *final)
                if final[0] == "completed":
                    self._start_new_context()
                return
            if run.reconnects >= self._max_reconnects:
                yield self._end(run, result, "failed", run.last_error)
                return
            run.reconnects += 1
            if not await self._backoff.wait(run.reconnects, signal):
                yield self._end(run, result, "aborted")
                return
            if run.unusable:
                note = user_text(SUMMARY_RETRY_GUIDANCE)
                self._recorder.record(note)
                run.request_input = [*run.repairs, note, *run.base]

    def _judge(
        self, run: _SummaryRun, attempt: _Attempt, result: CompactionResult
    ) -> tuple[StopReason, str | None] | None:
        """The span's final (status, error) after this attempt, or None to try again."""
        run.unusable = False
        status = attempt.outcome.status
        if status == "aborted":
            return "aborted", None
        if status == "auth":
            return "failed", attempt.outcome.message
        if status != "completed":
            run.last_error = attempt.outcome.message
            return None
        result.committed = True
        run.base = [run.prompt]
        run.repairs = []
        summary = markers.extract_summary(attempt.text)
        if summary and not attempt.tool_calls:
            result.summary = user_text(markers.build_context_summary_text(summary))
            return "completed", None
        run.unusable = True
        run.last_error = _CALLED_TOOLS if attempt.tool_calls else _NO_SUMMARY
        run.repairs = [
            tool_call_output(TOOL_CALL_REPAIR, call_id, "failed")
            for call_id in (_call_id(call) for call in attempt.tool_calls)
        ]
        for repair in run.repairs:
            self._recorder.record(repair)
        return None

    def _end(
        self, run: _SummaryRun, result: CompactionResult, status: StopReason, error: str | None = None
    ) -> OmniMessage:
        """The span's `compaction_end`; repairs of an unusable attempt go to the carry-over."""
        if status != "completed":
            self._state.stash(run.repairs)
        result.status = status
        return self._event(
            compaction_end(run.reason, "summarize", status, attempt=run.attempts or None, error_message=error)
        )

    # --- one summary request ----------------------------------------------------------------------

    async def _request(
        self,
        request_input: list[OmniMessage],
        signal: AbortSignal | None,
        reconnects: int,
        attempt: _Attempt,
    ) -> AsyncIterator[OmniMessage]:
        """docs/engine.md "Compaction": one request on the current LLM, no thinking level; fills `attempt`."""
        record = self._recorder.record
        record(request_begin())
        params = GenerativeModelParameters(new_messages=list(request_input), signal=signal)
        outcome: LLMOutcome = LLMOutcome("aborted")  # if the consumer walks away mid-request
        stream = self._state.llm.stream_generate(params)
        try:
            while True:
                try:
                    item = await _next_item(stream, signal)
                except StopAsyncIteration:
                    outcome = LLMOutcome("failed", "LLM stream ended without an outcome")
                    break
                except Exception as exc:  # the model side's failure becomes the compaction's failed outcome, never a throw into the engine
                    item = LLMOutcome("failed", f"LLM stream raised: {exc}")
                if isinstance(item, LLMOutcome):
                    outcome = item
                    break
                assert isinstance(item, OmniMessage)
                record(item)
                if self._take(item, attempt):
                    yield item
        finally:
            attempt.outcome = outcome
            record(request_end_for(outcome, reconnects, self._max_reconnects, self._backoff.delay_ms))
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                with suppress(Exception):
                    await asyncio.wait_for(aclose(), ABORT_GRACE_S)

    def _take(self, item: OmniMessage, attempt: _Attempt) -> bool:
        """Fold one message of the request into `attempt`; True when it reaches the stream
        (the summary text as it is written: partials, or the complete text if none came)."""
        payload = item.payload
        if isinstance(payload, TokenUsagePayload):
            if item.type == "event_msg":
                self._state.observe_usage(item)
                attempt.usage = item
            return False
        if isinstance(payload, PartialTextPayload):
            attempt.streamed_partial = attempt.streamed_partial or payload.text != ""
            return True
        if isinstance(payload, TextPayload):
            attempt.text += payload.text
            return not attempt.streamed_partial and bool(payload.text)
        if isinstance(payload, ToolCallPayload) and payload.stop_reason == "completed":
            attempt.tool_calls.append(item)
        return False

    # --- shared -----------------------------------------------------------------------------------

    def _event(self, msg: OmniMessage) -> OmniMessage:
        self._recorder.record(msg)
        return msg

    def _start_new_context(self) -> None:
        assert self._create_llm is not None
        self._state.start_new_context(self._create_llm)
        self._recorder.rotation_pending = True


def _call_id(call: OmniMessage) -> str:
    payload = call.payload
    assert isinstance(payload, ToolCallPayload)
    return payload.tool_call_id
