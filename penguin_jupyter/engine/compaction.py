"""Context compaction (§2.12): the trigger check, discard, summarize and one summary request.

Owns `CompactionMixin`, the part of `ContextEngine` that replaces a full context by a
`[context_summary]` (or by nothing, in discard mode) and starts a fresh LLM via `create_llm`.
Between `compaction_begin` and `compaction_end` only each attempt's `token_usage` and the
summary text being written reach the stream; everything else of the request is Trace-only.
The engine state it reads and writes is declared in `context_engine.ContextEngine.__init__`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..interfaces import AbortSignal, GenerativeModelParameters, LLMOutcome
from ..omni import (
    OmniMessage,
    compaction_begin,
    compaction_end,
    is_complete_model_message,
    markers,
    request_begin,
    tool_call_output,
    user_text,
)
from .settings import SUMMARY_RETRY_GUIDANCE
from .turn import ABORT_GRACE_S, request_end_for
from .waits import cancel_task

if TYPE_CHECKING:
    from .context_engine import ContextEngine

__all__ = ["TOOL_CALL_REPAIR", "CompactionMixin", "CompactionResult"]

TOOL_CALL_REPAIR = "[tool error] the compaction request expects a summary, not tool calls"
_CALLED_TOOLS = "the response called tools instead of writing a summary"
_NO_SUMMARY = "the response contained no usable summary"


@dataclass
class CompactionResult:
    """`committed` becomes True once any attempt completed (the old context then absorbed the
    pending tool outputs)."""

    status: str = "failed"
    summary: OmniMessage | None = None
    committed: bool = False


@dataclass
class _Attempt:
    outcome: LLMOutcome = field(default_factory=lambda: LLMOutcome("aborted"))
    text: str = ""
    tool_calls: list[OmniMessage] = field(default_factory=list)
    usage: OmniMessage | None = None


async def _next_item(stream: AsyncIterator, signal: AbortSignal | None) -> object:
    """The stream's next item; after an abort the LLM gets ABORT_GRACE_S to close out, then
    the pull is abandoned as `LLMOutcome("aborted")`. StopAsyncIteration propagates."""
    task = asyncio.ensure_future(anext(stream))
    if signal is not None and not task.done():
        watcher = asyncio.ensure_future(signal.wait())
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        await cancel_task(watcher)
        if not task.done():
            done, _ = await asyncio.wait({task}, timeout=ABORT_GRACE_S)
            if not done:
                await cancel_task(task)
                return LLMOutcome("aborted")
    return await task


class CompactionMixin:
    def _compaction_trigger(self: ContextEngine) -> str | None:
        settings = self._compaction
        if settings is None or self._create_llm is None:
            return None
        if settings.max_context_length > 0 and self._last_request_total >= settings.max_context_length:
            return "context"
        if settings.max_session_turns > 0 and self._session_turns >= settings.max_session_turns:
            return "turns"
        return None

    def _start_new_context(self: ContextEngine) -> None:
        assert self._create_llm is not None
        self._llm = self._create_llm(self._session_tokens)
        self._session_turns = 0
        self._last_request_total = 0
        self._from_compaction = True
        self._recorder.rotation_pending = True

    def _compaction_event(self: ContextEngine, msg: OmniMessage) -> OmniMessage:
        self._recorder.record(msg)
        return msg

    async def _discard(self: ContextEngine, reason: str) -> AsyncIterator[OmniMessage]:
        yield self._compaction_event(
            compaction_begin(reason, "discard", self._last_request_total, self._session_turns)
        )
        yield self._compaction_event(compaction_end(reason, "discard", "completed"))
        self._start_new_context()

    def _stash(self: ContextEngine, repairs: list[OmniMessage]) -> None:
        if repairs:
            self._carry_over = [*repairs, *self._carry_over]

    async def _summarize(
        self: ContextEngine,
        reason: str,
        pending: list[OmniMessage],
        signal: AbortSignal | None,
        result: CompactionResult,
    ) -> AsyncIterator[OmniMessage]:
        """§2.12.5; fills `result`."""
        assert self._compaction is not None
        yield self._compaction_event(
            compaction_begin(reason, "summarize", self._last_request_total, self._session_turns)
        )
        prompt = user_text(self._compaction.prompt)
        self._recorder.record(prompt)
        base = [*pending, prompt]
        request_input = base
        repairs: list[OmniMessage] = []
        reconnects = attempts = 0
        last_error: str | None = None

        def end(status: str, error: str | None = None) -> OmniMessage:
            result.status = status
            return self._compaction_event(
                compaction_end(reason, "summarize", status, attempt=attempts or None, error_message=error)
            )

        while True:
            if signal is not None and signal.aborted:
                self._stash(repairs)
                yield end("aborted")
                return
            attempt = _Attempt()
            async for msg in self._compaction_request(request_input, signal, reconnects, attempt):
                yield msg
            attempts += 1
            if attempt.usage is not None:
                yield attempt.usage
            unusable = False
            status = attempt.outcome.status
            if status == "completed":
                result.committed = True
                base = [prompt]
                repairs = []
                summary = markers.extract_summary(attempt.text)
                if summary and not attempt.tool_calls:
                    result.summary = user_text(markers.build_context_summary_text(summary))
                    yield end("completed")
                    self._start_new_context()
                    return
                unusable = True
                last_error = _CALLED_TOOLS if attempt.tool_calls else _NO_SUMMARY
                repairs = [
                    tool_call_output(TOOL_CALL_REPAIR, call.payload.tool_call_id, "failed")
                    for call in attempt.tool_calls
                ]
                for repair in repairs:
                    self._recorder.record(repair)
            elif status == "aborted":
                self._stash(repairs)
                yield end("aborted")
                return
            elif status == "auth":
                self._stash(repairs)
                yield end("failed", attempt.outcome.message)
                return
            else:
                last_error = attempt.outcome.message
            if reconnects >= self._compaction_max_reconnects:
                self._stash(repairs)
                yield end("failed", last_error)
                return
            reconnects += 1
            if not await self._backoff.wait(reconnects, signal):
                self._stash(repairs)
                yield end("aborted")
                return
            if unusable:
                note = user_text(SUMMARY_RETRY_GUIDANCE)
                self._recorder.record(note)
                request_input = [*repairs, note, *base]

    async def _compaction_request(
        self: ContextEngine,
        request_input: list[OmniMessage],
        signal: AbortSignal | None,
        reconnects: int,
        attempt: _Attempt,
    ) -> AsyncIterator[OmniMessage]:
        """§2.12.6: one request on the current LLM, no thinking level; fills `attempt`."""
        record = self._recorder.record
        record(request_begin())
        params = GenerativeModelParameters(new_messages=list(request_input), signal=signal)
        streamed_partial = False
        outcome: LLMOutcome = LLMOutcome("aborted")  # if the consumer walks away mid-request
        stream = self._llm.stream_generate(params)
        try:
            while True:
                try:
                    item = await _next_item(stream, signal)
                except StopAsyncIteration:
                    outcome = LLMOutcome("failed", "LLM stream ended without an outcome")
                    break
                except Exception as exc:
                    item = LLMOutcome("failed", f"LLM stream raised: {exc}")
                if isinstance(item, LLMOutcome):
                    outcome = item
                    break
                record(item)
                kind = getattr(item.payload, "type", None)
                if item.type == "event_msg" and kind == "token_usage":
                    self._observe_usage(item)
                    attempt.usage = item
                elif kind == "partial_text":
                    streamed_partial = streamed_partial or item.payload.text != ""
                    yield item
                elif is_complete_model_message(item) and kind == "text":
                    attempt.text += item.payload.text
                    if not streamed_partial and item.payload.text:
                        yield item
                elif (
                    is_complete_model_message(item)
                    and kind == "tool_call"
                    and item.payload.stop_reason == "completed"
                ):
                    attempt.tool_calls.append(item)
        finally:
            attempt.outcome = outcome
            record(
                request_end_for(
                    attempt.outcome, reconnects, self._compaction_max_reconnects, self._backoff.delay_ms
                )
            )
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                with suppress(Exception):
                    await asyncio.wait_for(aclose(), ABORT_GRACE_S)
