"""GenerativeModel: the LLMInterface implementation over agenthub's stateful client
(docs/model.md).

Owns one request's lifecycle as named steps — prepare (outbound merge, config, client), open
(stream, pump, abort waiter), relay (events raced against abort, the first-response window and the
idle timer), conclude (history, outcome, usage) — plus the per-request config and the one-time
`set_history` replay on resume. Segmentation is `translator.py`, error rules `classify.py`,
arithmetic `limits.py`, the first-response budget `answer_budget.py`, a refusal repeated
`rejections.py`. The model never retries:
reconnecting is the engine's job; a budget spent on silence ends with a permanent failure.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from agenthub import ThinkingLevel
from agenthub.abort_signal import AbortSignal
from agenthub.types import UniConfig, UniEvent, UniMessage

from ..interfaces import (
    THINKING_LEVELS,
    BudgetStop,
    GenerativeModelParameters,
    LLMOutcome,
    ThinkingLevelName,
)
from ..omni import (
    OmniMessage,
    TokenCost,
    TokenCounts,
    ToolCallPayload,
    add_token_counts,
    dumps_compact,
    is_complete_model_message,
    token_usage,
)
from ..prices import ModelPrice, cost_usd, list_price
from .answer_budget import AnswerBudget
from .classify import classify_error
from .config import GenerativeModelConfig, base_uni_config
from .connect_failure import ConnectKind, connect_failure
from .limits import (
    effective_max_tokens,
    estimate_messages_tokens,
    estimate_text_tokens,
    usable_context_window,
)
from .outbound import group_history, merge_to_uni_message
from .provider import ProviderClient, UnsupportedModel, client_error_outcome, open_provider
from .rejections import RepeatedRejection
from .spend import UNCAPPED_OUTPUT_TOKENS, RequestEstimate, SpendTicket
from .stream_reading import SHAPE_ERRORS, unreadable_event
from .tool_call_ids import ToolCallIdAllocator
from .translator import EventTranslator
from .upstream_pump import UpstreamPump

log = logging.getLogger(__name__)

# How long a cancelled upstream read may take to wind down before it is abandoned.
_CANCEL_GRACE_S = 1.0


def endpoint_label(base_url: str | None) -> str:
    """The endpoint as shown in an error: scheme, host, port and path (never credentials)."""
    if not base_url:
        return "the model endpoint"
    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the model endpoint"
    return f"{parts.scheme}://{host}{port}{parts.path}"


class _ResponseSeen:
    """Set once the endpoint answered this request (headers, an error, or the first event)."""

    def __init__(self) -> None:
        self.seen = False


# The request whose upstream read is running in this context: the pump's Task inherits it when
# it is created, so the SDK's "response arrived" callback reaches exactly its own request, even
# from an abandoned read that finishes during a later one.
_REQUEST_RESPONSE: ContextVar[_ResponseSeen | None] = ContextVar("penguin_request_response", default=None)


@dataclass
class _Prepared:
    client: ProviderClient
    message: UniMessage
    config: UniConfig
    ticket: SpendTicket | None = None


@dataclass
class _Exchange:
    """One request in flight: its stream, pump and waiters, and how it ended."""

    client: ProviderClient
    signal: AbortSignal | None
    upstream_signal: AbortSignal
    stream: AsyncIterator[UniEvent]
    translator: EventTranslator
    committed_before: int
    first_response_s: float | None
    pump: UpstreamPump[UniEvent]
    abort_waiter: asyncio.Future[None] | None
    response: _ResponseSeen
    started: float = field(default_factory=time.monotonic)
    outcome: LLMOutcome | None = None
    ticket: SpendTicket | None = None

    def settle(self, usd: float | None) -> None:
        """The request completed: its spend ticket is settled with what it cost (once)."""
        ticket, self.ticket = self.ticket, None
        if ticket is not None:
            with suppress(Exception):  # the request is done: a ledger that fails must not undo it
                ticket.settle(usd)

    def release(self) -> None:
        """The request did not complete: its reservation goes (once)."""
        ticket, self.ticket = self.ticket, None
        if ticket is not None:
            with suppress(Exception):
                ticket.release()

    @property
    def responded(self) -> bool:
        return self.response.seen

    @property
    def aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def first_response_left(self) -> float | None:
        if self.first_response_s is None:
            return None
        return max(0.0, self.first_response_s - self.elapsed_s())


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
        # the previous attempt's connection failure: a resolver that cannot answer is tried twice
        self._previous_connect: ConnectKind | None = None
        self._pending_history: list[UniMessage] | None = None
        self._client: ProviderClient | None = None
        self._client_error: BaseException | None = None
        self._answer_budget = AnswerBudget(config.connect_timeout_ms, config.answer_budget_ms)
        self._rejections = RepeatedRejection()
        self._ensure_client()

    # --- client -----------------------------------------------------------------------------

    def _ensure_client(self) -> ProviderClient | None:
        """Build the gateway client once; a credentials failure is kept and retried on the next
        request (the key may be set in the environment meanwhile)."""
        if self._client is not None:
            return self._client
        try:
            self._client = open_provider(self.config, on_response=self._on_response)
        except UnsupportedModel:
            raise
        except Exception as exc:  # whatever the provider setup raises is reported as the first request's outcome
            self._client_error = exc
            return None
        self._client_error = None
        if self._pending_history is not None:
            self._client.set_history(self._pending_history)
            self._pending_history = None
        return self._client

    @property
    def price(self) -> ModelPrice | None:
        """USD per million tokens: the configured price, else agenthub's list price, else None."""
        return self.config.price or list_price(self.config.model_id)

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
        """Tools and system prompt as built; thinking level = override, else default, else omitted
        (with any level but `none`, thinking summaries are asked for); max_tokens clamped
        against the context window."""
        config = self._base_config.copy()
        level = thinking_level or self.config.thinking_level
        if level is not None:
            if level not in THINKING_LEVELS:
                raise ValueError(
                    f"unknown thinking level {level!r} (expected one of {', '.join(THINKING_LEVELS)})"
                )
            config["thinking_level"] = ThinkingLevel(level)
            if level != "none":
                # the reasoning/thought summaries, where the protocol offers them (Responses
                # `reasoning.summary`, Gemini `include_thoughts`, Anthropic `display`)
                config["thinking_summary"] = True
        cap = self._effective_max_tokens(new_messages)
        if cap is None:
            config.pop("max_tokens", None)
        else:
            config["max_tokens"] = cap
        return config

    def _effective_max_tokens(self, new_messages: list[OmniMessage]) -> int | None:
        estimated_input = self._last_request_total + estimate_messages_tokens(new_messages)
        configured = self.config.max_tokens
        cap = effective_max_tokens(configured, self._context_window, estimated_input)
        if cap is not None and configured and cap < configured / 2 and cap != self._last_warned_cap:
            self._last_warned_cap = cap
            # a diagnostic, not a user's problem: INFO stays out of the cell (nothing configures
            # logging in a kernel, so only WARNING and above reach its stderr)
            log.info(
                "output cap clamped hard: max_tokens %s -> %s (context_window %s, estimated input %s)",
                configured,
                cap,
                self._context_window,
                estimated_input,
            )
        return cap

    def _open_stream(
        self, client: ProviderClient, message: UniMessage, config: UniConfig, signal: AbortSignal
    ) -> AsyncIterator[UniEvent]:
        """The upstream event stream of one request (agenthub's stateful streaming)."""
        return client.stream(message, config, signal)

    # --- one request ----------------------------------------------------------------------------

    async def stream_generate(
        self, parameters: GenerativeModelParameters
    ) -> AsyncIterator[OmniMessage | LLMOutcome]:
        """Prepare → open → relay events → conclude; each step may end the request with an outcome."""
        prepared = self._prepare(parameters)
        if isinstance(prepared, LLMOutcome):
            yield prepared
            return
        exchange = self._open(prepared, parameters.signal)
        if isinstance(exchange, LLMOutcome):
            if prepared.ticket is not None:
                with suppress(Exception):
                    prepared.ticket.release()
            yield exchange
            return
        try:
            try:
                async for msg in self._relay(exchange):
                    yield msg
            finally:
                await self._close(exchange)
            for item in self._conclude(exchange):
                yield item
        finally:
            exchange.release()  # not settled by a completed conclusion (failed, aborted, abandoned)

    def _prepare(self, parameters: GenerativeModelParameters) -> _Prepared | LLMOutcome:
        """The gateway message, the request config and the client, or why there is no request."""
        signal = parameters.signal
        if signal is not None and signal.aborted:
            return LLMOutcome("aborted")
        new_messages = list(parameters.new_messages)
        try:
            message = merge_to_uni_message(new_messages)
            config = self.request_config(parameters.thinking_level, new_messages)
        except ValueError as exc:
            return LLMOutcome("failed", str(exc))
        client = self._ensure_client()
        if client is None:
            assert self._client_error is not None
            return client_error_outcome(self._client_error)
        ticket = self._admit(new_messages, config)
        if isinstance(ticket, LLMOutcome):
            return ticket
        return _Prepared(client, message, config, ticket)

    def estimate(self, new_messages: list[OmniMessage], config: UniConfig) -> RequestEstimate:
        """At most what the request about to be sent can cost (docs/cost.md "Budgets")."""
        cap = config.get("max_tokens")
        return RequestEstimate(
            model_id=self.config.model_id,
            input_tokens=self._last_request_total + estimate_messages_tokens(new_messages),
            max_output_tokens=cap if isinstance(cap, int) and cap > 0 else UNCAPPED_OUTPUT_TOKENS,
            price=self.price,
        )

    def _admit(self, new_messages: list[OmniMessage], config: UniConfig) -> SpendTicket | LLMOutcome | None:
        """The spend gate's ticket for this request (None: no gate), or the budget stop."""
        gate = self.config.spend_gate
        if gate is None:
            return None
        try:
            admitted = gate.admit(self.estimate(new_messages, config))
        except Exception as exc:  # a budget that cannot be checked must not let the request out
            admitted = f"the spending budget could not be checked ({type(exc).__name__}: {exc})"
        if isinstance(admitted, str):
            return BudgetStop(message=admitted)
        return admitted

    def _open(self, prepared: _Prepared, signal: AbortSignal | None) -> _Exchange | LLMOutcome:
        """Start the upstream stream, its pump and the abort waiter; start the answer clock."""
        upstream_signal = AbortSignal()
        try:
            stream = self._open_stream(prepared.client, prepared.message, prepared.config, upstream_signal)
        except Exception as exc:  # the LLM boundary: whatever the SDK raises becomes an outcome
            return self._error_outcome(exc, signal)
        response = _ResponseSeen()
        token = _REQUEST_RESPONSE.set(response)
        try:
            pump: UpstreamPump[UniEvent] = UpstreamPump(stream)  # its Task inherits `response`
        finally:
            _REQUEST_RESPONSE.reset(token)
        return _Exchange(
            client=prepared.client,
            signal=signal,
            upstream_signal=upstream_signal,
            stream=stream,
            translator=EventTranslator(self.tool_call_ids),
            # agenthub commits the exchange to its history when the stream ends, and the pump may
            # read to the end before the relay has seen every event: only a completed request keeps it.
            committed_before=prepared.client.history_length(),
            # the first-response window needs the SDK's "response arrived" signal; without it
            # (the Gemini client) a slow first token is indistinguishable from silence
            first_response_s=self._answer_budget.begin_attempt()
            if prepared.client.reports_responses
            else None,
            pump=pump,
            # One abort waiter per request (not one per event); cancelled in `_close`.
            abort_waiter=asyncio.ensure_future(signal.wait()) if signal is not None else None,
            response=response,
            ticket=prepared.ticket,
        )

    async def _relay(self, ex: _Exchange) -> AsyncIterator[OmniMessage]:
        """Translate upstream events as they arrive until the end, an error, an abort or a silence
        too long; sets `ex.outcome` unless the stream completed."""
        while ex.outcome is None:
            if ex.aborted:
                ex.outcome = LLMOutcome("aborted")
            elif not await self._wait_for_event(ex):
                ex.outcome = self._silence_outcome(ex)
            else:
                translated = self._next_translated(ex)
                if translated is None:
                    break
                for msg in translated:
                    yield msg
        if ex.outcome is None and not ex.translator.saw_finish_reason and ex.aborted:
            ex.outcome = LLMOutcome("aborted")

    async def _wait_for_event(self, ex: _Exchange) -> bool:
        """Wait for the next event: first under the first-response window, then the idle timer."""
        while True:
            before_response = not ex.responded
            timeout = self._first_wait_s(ex) if before_response else self._idle_timeout_s()
            if await ex.pump.wait(ex.abort_waiter, timeout):
                return True
            if ex.aborted or not before_response or not ex.responded:
                return False
            # the response headers arrived during the first wait: the idle timer takes over

    def _next_translated(self, ex: _Exchange) -> list[OmniMessage] | None:
        """The messages of the next upstream event; None at the end of the stream. An upstream
        error, an abort or a translation failure sets `ex.outcome` and returns []."""
        try:
            event = ex.pump.take()
        except StopAsyncIteration:
            return None
        except (Exception, asyncio.CancelledError) as exc:  # the upstream's, never ours
            ex.outcome = self._error_outcome(exc, ex.signal)
            return []
        ex.response.seen = True
        if ex.aborted:
            ex.outcome = LLMOutcome("aborted")
            return []
        try:
            return list(ex.translator.push_event(event))
        except SHAPE_ERRORS as exc:  # a value of the wrong type inside the event
            ex.outcome = LLMOutcome("malformed", str(unreadable_event(event, exc)))
            return []
        except Exception as exc:  # the LLM boundary: whatever the SDK raises becomes an outcome
            ex.outcome = self._error_outcome(exc, ex.signal)
            return []

    async def _close(self, ex: _Exchange) -> None:
        if ex.abort_waiter is not None:
            ex.abort_waiter.cancel()
        await self._release(ex.stream, ex.pump.task)

    def _conclude(self, ex: _Exchange) -> Iterator[OmniMessage | LLMOutcome]:
        """A failed request: drop its half-committed history, close open partials, the outcome.
        A completed one: the final messages, `token_usage` and `completed`."""
        if ex.responded:
            self._answer_budget.answered()
            self._previous_connect = None
        if ex.outcome is None or ex.outcome.status != "failed":
            self._rejections.forget()
        if ex.outcome is not None:
            ex.client.keep_history(ex.committed_before)
            reason = "failed" if ex.outcome.status == "completed" else ex.outcome.status
            yield from ex.translator.finish_interrupted(reason)
            yield ex.outcome
            return
        yield from ex.translator.finish()
        request_tokens = ex.translator.request_tokens
        self._last_request_total = request_tokens.total
        self.session_tokens = add_token_counts(self.session_tokens, request_tokens)
        price = self.price
        cost = None
        if price is not None:
            cost = TokenCost(
                request=cost_usd(request_tokens, price), session=cost_usd(self.session_tokens, price)
            )
        ex.settle(None if cost is None else cost.request)
        yield token_usage(self.session_tokens, request_tokens, cost)
        yield LLMOutcome("completed")

    # --- waits and stops ------------------------------------------------------------------------

    @staticmethod
    def _on_response() -> None:
        """The SDK reports the response (or the request's failure) arrived, in the request's pump."""
        response = _REQUEST_RESPONSE.get()
        if response is not None:
            response.seen = True

    def _idle_timeout_s(self) -> float | None:
        timeout_ms = self.config.request_timeout_ms
        return timeout_ms / 1000 if timeout_ms and timeout_ms > 0 else None

    def _first_wait_s(self, ex: _Exchange) -> float | None:
        """The shorter of this attempt's first-response window and the idle timer, counted from now."""
        limits = [s for s in (ex.first_response_left(), self._idle_timeout_s()) if s is not None]
        return min(limits) if limits else None

    def _silence_outcome(self, ex: _Exchange) -> LLMOutcome:
        """Why the wait ended without an event: abort, no response at all, or idle between chunks."""
        if ex.aborted:
            ex.upstream_signal.abort("aborted")
            return LLMOutcome("aborted")
        ex.upstream_signal.abort("timeout")
        if ex.responded or ex.first_response_s is None:
            idle_ms = self.config.request_timeout_ms
            return LLMOutcome("timeout", f"no event from the model for {idle_ms} ms (request_timeout_ms)")
        return self._unanswered_outcome(ex)

    def _unanswered_outcome(self, ex: _Exchange) -> LLMOutcome:
        budget = self._answer_budget
        attempts, waited_s = budget.attempts, ex.elapsed_s()
        endpoint = endpoint_label(self.config.base_url)
        if budget.unanswered():
            return LLMOutcome(
                "failed",
                f"no response from {endpoint} within {self.config.answer_budget_ms} ms over {attempts} "
                f"attempt{'s' if attempts != 1 else ''} (answer_budget_ms); "
                "is the endpoint up and the base_url right?",
                permanent=True,
            )
        idle_s = self._idle_timeout_s()
        if idle_s is not None and (ex.first_response_s is None or idle_s < ex.first_response_s):
            limit = f"request_timeout_ms={self.config.request_timeout_ms}"
        elif ex.first_response_s is not None and ex.first_response_s * 1000 < self.config.connect_timeout_ms:
            limit = f"the rest of answer_budget_ms={self.config.answer_budget_ms}"
        else:
            limit = f"connect_timeout_ms={self.config.connect_timeout_ms}"
        return LLMOutcome("timeout", f"no response from {endpoint} after {waited_s:.1f} s ({limit})")

    def _error_outcome(self, error: BaseException, signal: AbortSignal | None) -> LLMOutcome:
        if signal is not None and signal.aborted:
            return LLMOutcome("aborted")
        previous, connect = self._previous_connect, connect_failure(error, self.config.base_url)
        self._previous_connect = connect.kind if connect is not None else None
        outcome = classify_error(
            error, fast_mode=self.config.fast_mode, base_url=self.config.base_url, previous_connect=previous
        )
        return self._rejections.judge(error, outcome)

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
