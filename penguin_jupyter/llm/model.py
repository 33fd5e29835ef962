"""GenerativeModel: the LLMInterface implementation over agenthub's stateful client
(core-behavior.md §7.3–7.4).

Owns one request's lifecycle — outbound merge, the idle timer, the race against user abort,
outcome classification, usage accounting — plus the per-request config and the one-time
`set_history` replay on resume. Segmentation is `translator.py`, error rules `classify.py`,
arithmetic `limits.py`. The model never retries: reconnecting is the engine's job.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import suppress
from typing import Any

from agenthub import AutoLLMClient, ThinkingLevel
from agenthub.abort_signal import AbortSignal
from agenthub.types import UniConfig, UniEvent, UniMessage

from ..interfaces import (
    THINKING_LEVELS,
    GenerativeModelParameters,
    LLMOutcome,
    ThinkingLevelName,
)
from ..omni import (
    OmniMessage,
    TokenCounts,
    ToolCallPayload,
    add_token_counts,
    dumps_compact,
    is_complete_model_message,
    token_usage,
)
from .classify import classify_error
from .client import client_error_outcome, create_llm_client, is_unsupported_model_error
from .config import GenerativeModelConfig, base_uni_config
from .limits import (
    effective_max_tokens,
    estimate_messages_tokens,
    estimate_text_tokens,
    usable_context_window,
)
from .outbound import group_history, merge_to_uni_message
from .tool_call_ids import ToolCallIdAllocator
from .translator import EventTranslator
from .upstream_pump import UpstreamPump

log = logging.getLogger(__name__)

# How long a cancelled upstream read may take to wind down before it is abandoned.
_CANCEL_GRACE_S = 1.0


def _keep_history(client: AutoLLMClient, length: int) -> None:
    """Drop what the stateful client committed after `length` (a request that did not complete)."""
    history = client.get_history()
    if len(history) > length:
        client.set_history(history[:length])


class GenerativeModel:
    """`stream_generate` yields partials, complete messages and (on success) one `token_usage`,
    then exactly one `LLMOutcome`. It never raises for a provider, transport or input problem.

    `session_tokens` is the running sum reported in `token_usage.session`; the session layer
    seeds it from the previous context on compaction and from the Trace on resume."""

    def __init__(self, config: GenerativeModelConfig) -> None:
        self.config = config
        self.tool_call_ids: ToolCallIdAllocator = config.tool_call_ids or ToolCallIdAllocator()
        self.session_tokens: TokenCounts = TokenCounts()
        self._base_config = base_uni_config(config)
        self._context_window = usable_context_window(config.context_window)
        self._base_input_tokens = estimate_text_tokens(config.system_prompt or "") + estimate_text_tokens(
            dumps_compact(self._base_config.get("tools", []))
        )
        self._last_request_total = self._base_input_tokens
        self._last_warned_cap: int | None = None
        self._pending_history: list[UniMessage] | None = None
        self._client: AutoLLMClient | None = None
        self._client_error: BaseException | None = None
        self._ensure_client()

    # --- client -----------------------------------------------------------------------------

    def _ensure_client(self) -> AutoLLMClient | None:
        """Build the gateway client once; a credentials failure is kept and retried on the next
        request (the key may be set in the environment meanwhile)."""
        if self._client is not None:
            return self._client
        try:
            self._client = create_llm_client(self.config)
        except Exception as exc:
            if is_unsupported_model_error(exc):
                raise ValueError(f"model {self.config.model_id!r}: {exc}") from None
            self._client_error = exc
            return None
        self._client_error = None
        if self._pending_history is not None:
            self._client.set_history(self._pending_history)
            self._pending_history = None
        return self._client

    @property
    def last_request_total(self) -> int:
        """The current context size estimate: the last completed request's total, or the
        prefix (+ replayed history) estimate before one."""
        return self._last_request_total

    def set_history(self, messages: list[OmniMessage]) -> None:
        """Replay committed history into the stateful client once, on a fresh model (resume).
        Only complete model messages are model context (events and partials are skipped). Marks
        every historical tool_call id as used and re-seeds the input estimate."""
        messages = [msg for msg in messages if is_complete_model_message(msg)]
        if not messages:
            return
        uni_history = group_history(messages)
        for msg in messages:
            if isinstance(msg.payload, ToolCallPayload) and msg.payload.tool_call_id:
                self.tool_call_ids.mark_used(msg.payload.tool_call_id)
        self._last_request_total = self._base_input_tokens + estimate_messages_tokens(messages)
        if self._client is not None:
            self._client.set_history(uni_history)
        else:
            self._pending_history = uni_history

    # --- per-request config -------------------------------------------------------------------

    def request_config(
        self, thinking_level: ThinkingLevelName | None, new_messages: list[OmniMessage]
    ) -> UniConfig:
        """Tools and system prompt as built; thinking level = override, else default, else omitted;
        max_tokens clamped against the context window."""
        config: dict[str, Any] = dict(self._base_config)
        level = thinking_level or self.config.thinking_level
        if level is not None:
            if level not in THINKING_LEVELS:
                raise ValueError(
                    f"unknown thinking level {level!r} (expected one of {', '.join(THINKING_LEVELS)})"
                )
            config["thinking_level"] = ThinkingLevel(level)
        cap = self._effective_max_tokens(new_messages)
        if cap is None:
            config.pop("max_tokens", None)
        else:
            config["max_tokens"] = cap
        return config  # type: ignore[return-value]

    def _effective_max_tokens(self, new_messages: list[OmniMessage]) -> int | None:
        estimated_input = self._last_request_total + estimate_messages_tokens(new_messages)
        configured = self.config.max_tokens
        cap = effective_max_tokens(configured, self._context_window, estimated_input)
        if cap is not None and configured and cap < configured / 2 and cap != self._last_warned_cap:
            self._last_warned_cap = cap
            log.warning(
                "output cap clamped hard: max_tokens %s -> %s (context_window %s, estimated input %s)",
                configured,
                cap,
                self._context_window,
                estimated_input,
            )
        return cap

    def _open_stream(
        self, client: AutoLLMClient, message: UniMessage, config: UniConfig, signal: AbortSignal
    ) -> AsyncIterator[UniEvent]:
        """The upstream event stream of one request (agenthub's stateful streaming)."""
        return client.streaming_response_stateful(message=message, config=config, signal=signal)

    # --- one request ----------------------------------------------------------------------------

    async def stream_generate(
        self, parameters: GenerativeModelParameters
    ) -> AsyncIterator[OmniMessage | LLMOutcome]:
        signal = parameters.signal
        if signal is not None and signal.aborted:
            yield LLMOutcome("aborted")
            return
        new_messages = list(parameters.new_messages)
        try:
            message = merge_to_uni_message(new_messages)
            config = self.request_config(parameters.thinking_level, new_messages)
        except ValueError as exc:
            yield LLMOutcome("failed", str(exc))
            return
        client = self._ensure_client()
        if client is None:
            assert self._client_error is not None
            yield client_error_outcome(self._client_error)
            return

        translator = EventTranslator(self.tool_call_ids)
        upstream_signal = AbortSignal()
        try:
            stream = self._open_stream(client, message, config, upstream_signal)
        except Exception as exc:
            yield self._error_outcome(exc, signal)
            return
        outcome: LLMOutcome | None = None
        # agenthub commits the exchange to its history when the stream ends, and the pump may
        # read to the end before this loop has seen every event: only a completed request keeps it.
        committed_before = len(client.get_history())
        pump: UpstreamPump[UniEvent] = UpstreamPump(stream)
        # One abort waiter per request (not one per event); cancelled in `finally`.
        abort_waiter = asyncio.ensure_future(signal.wait()) if signal is not None else None
        timeout_s = self._idle_timeout_s()
        try:
            while True:
                if signal is not None and signal.aborted:
                    outcome = LLMOutcome("aborted")
                    break
                if not await pump.wait(abort_waiter, timeout_s):
                    stopped_by = "aborted" if signal is not None and signal.aborted else "timeout"
                    upstream_signal.abort(stopped_by)
                    outcome = self._stop_outcome(stopped_by)
                    break
                try:
                    event = pump.take()
                except StopAsyncIteration:
                    break
                except (Exception, asyncio.CancelledError) as exc:  # the upstream's, never ours
                    outcome = self._error_outcome(exc, signal)
                    break
                if signal is not None and signal.aborted:
                    outcome = LLMOutcome("aborted")
                    break
                try:
                    translated = list(translator.push_event(event))
                except Exception as exc:
                    outcome = self._error_outcome(exc, signal)
                    break
                for msg in translated:
                    yield msg
            if outcome is None and not translator.saw_finish_reason and signal is not None and signal.aborted:
                outcome = LLMOutcome("aborted")
        finally:
            if abort_waiter is not None:
                abort_waiter.cancel()
            await self._release(stream, pump.task)

        if outcome is not None:
            _keep_history(client, committed_before)
            reason = "failed" if outcome.status == "completed" else outcome.status
            for msg in translator.finish_interrupted(reason):
                yield msg
            yield outcome
            return

        for msg in translator.finish():
            yield msg
        request_tokens = translator.request_tokens
        self._last_request_total = request_tokens.total
        self.session_tokens = add_token_counts(self.session_tokens, request_tokens)
        yield token_usage(self.session_tokens, request_tokens)
        yield LLMOutcome("completed")

    def _idle_timeout_s(self) -> float | None:
        timeout_ms = self.config.request_timeout_ms
        return timeout_ms / 1000 if timeout_ms and timeout_ms > 0 else None

    def _stop_outcome(self, stopped_by: str) -> LLMOutcome:
        if stopped_by == "aborted":
            return LLMOutcome("aborted")
        return LLMOutcome(
            "timeout", f"no event from the model for {self.config.request_timeout_ms} ms (request_timeout_ms)"
        )

    def _error_outcome(self, error: BaseException, signal: AbortSignal | None) -> LLMOutcome:
        if signal is not None and signal.aborted:
            return LLMOutcome("aborted")
        return classify_error(error, fast_mode=self.config.fast_mode)

    async def _release(self, stream: AsyncIterator[UniEvent], pending: asyncio.Task[None]) -> None:
        """Stop the pump's reader and close the upstream, abandoning either if it does not wind
        down within a short grace (an upstream that ignores cancellation cannot hang the run)."""
        if not pending.done():
            pending.cancel()
            await asyncio.wait({pending}, timeout=_CANCEL_GRACE_S)
            if not pending.done():
                return
        if not pending.cancelled():
            with suppress(BaseException):
                pending.exception()
        aclose = getattr(stream, "aclose", None)
        if aclose is None:
            return
        closing = asyncio.ensure_future(aclose())
        await asyncio.wait({closing}, timeout=_CANCEL_GRACE_S)
        if closing.done() and not closing.cancelled():
            with suppress(BaseException):
                closing.exception()
