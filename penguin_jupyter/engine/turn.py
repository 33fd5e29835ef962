"""One turn of the agent loop (docs/engine.md "One turn" to docs/engine.md "Tool execution inside a turn"): a driver and N tool producers, one merge queue.

Owns `run_turn`: the driver streams the LLM, approves each committed tool call one at a time
(the stream is not pulled while an approval is pending), answers denials with the synthetic
aborted output and starts allowed tools as concurrent tasks; the caller-facing generator is
the single consumer. Every message is emitted and recorded at the same moment. When the
signal fires, producers get `ABORT_GRACE_S` to close out, then they are cancelled so an
upstream that ignores cancellation cannot hang the run. The turn loop is in `context_engine`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from contextlib import aclosing, suppress
from dataclasses import dataclass

from ..interfaces import (
    APPROVAL_DECISIONS,
    AbortSignal,
    ApprovalDecision,
    ApproveFn,
    EnvironmentInterface,
    GenerativeModelParameters,
    LLMInterface,
    LLMOutcome,
    SignalWatch,
    ThinkingLevelName,
    ToolExecutionRequest,
    unless_aborted,
)
from ..omni import (
    OmniMessage,
    TextPayload,
    ThinkingPayload,
    TokenUsagePayload,
    ToolCallOutputPayload,
    ToolCallPayload,
    approval_decision,
    is_session_meta,
    payload_of,
    request_begin,
    request_end,
    subagent_event,
    tool_call_output,
)
from .carry_over import TurnResult
from .recorder import Recorder
from .waits import closing_stream

log = logging.getLogger(__name__)

__all__ = ["ABORT_GRACE_S", "RETRY_STATUSES", "TurnContext", "denial_text", "request_end_for", "run_turn"]

ABORT_GRACE_S = 2.0
RETRY_STATUSES = frozenset({"failed", "timeout", "malformed"})


def denial_text(decision: str) -> str:
    return "Tool call denied by policy." if decision == "forbidden" else "Tool call denied by user."


def request_end_for(
    outcome: LLMOutcome, reconnects_so_far: int, cap: int, delay: Callable[[int], int]
) -> OmniMessage:
    """The `request_end` of docs/engine.md "One turn": `attempt` unless a clean first-try completion;
    `retry_in_ms` only when the engine will retry."""
    attempt = reconnects_so_far + 1 if outcome.status != "completed" or reconnects_so_far > 0 else None
    will_retry = outcome.status in RETRY_STATUSES and not outcome.permanent and reconnects_so_far < cap
    return request_end(
        outcome.status,
        error_message=outcome.message,
        attempt=attempt,
        retry_in_ms=delay(reconnects_so_far + 1) if will_retry else None,
    )


@dataclass
class TurnContext:
    """Everything one turn needs from the engine."""

    llm: LLMInterface
    environment: EnvironmentInterface
    recorder: Recorder
    approve: ApproveFn
    signal: AbortSignal | None
    thinking_level: ThinkingLevelName | None
    max_reconnects: int
    delay_ms: Callable[[int], int]
    on_token_usage: Callable[[OmniMessage], None]


class _MergeQueue:
    """Single consumer, N producers. The consumer drains `items` and parks on one future only
    when the queue is empty; a push wakes it only while it is parked (no Event, no wake-up for
    messages the consumer will find on its own next iteration)."""

    def __init__(self) -> None:
        self.items: deque[OmniMessage] = deque()
        self.producers = 0
        self._parked: asyncio.Future[None] | None = None

    def push(self, msg: OmniMessage) -> None:
        self.items.append(msg)
        self.notify()

    def producer_done(self) -> None:
        self.producers -= 1
        self.notify()

    def notify(self) -> None:
        parked = self._parked
        if parked is not None and not parked.done():
            parked.set_result(None)

    async def wait(self) -> None:
        """Park until the next push, producer end or `notify` (the signal watch)."""
        self._parked = asyncio.get_running_loop().create_future()
        try:
            await self._parked
        finally:
            self._parked = None


def outcome_of_stream_end(item: object) -> LLMOutcome:
    """The outcome a stream ended with, or "failed" when it ended without one."""
    return (
        item if isinstance(item, LLMOutcome) else LLMOutcome("failed", "LLM stream ended without an outcome")
    )


def run_turn(
    ctx: TurnContext, attempt_input: list[OmniMessage], reconnects: int, result: TurnResult
) -> AsyncIterator[OmniMessage]:
    """Yield the turn's messages in arrival order; fill `result` (outputs in call order)."""
    return _Turn(ctx, attempt_input, reconnects, result).run()


class _Turn:
    """One turn's shared state (the merge queue, the outputs received so far, the call order,
    the running producer tasks) and its named steps: the driver (`_drive`), the approval of
    each committed call (`_on_tool_call`, `_decide`), one producer per allowed call
    (`_execute`), the consumer loop (`run`) and the final ordering of outputs."""

    def __init__(
        self, ctx: TurnContext, attempt_input: list[OmniMessage], reconnects: int, result: TurnResult
    ) -> None:
        self.ctx = ctx
        self.signal = ctx.signal
        self.attempt_input = attempt_input
        self.reconnects = reconnects
        self.result = result
        self.queue = _MergeQueue()
        self.received: list[OmniMessage] = []
        self.call_order: list[str] = []
        self.tasks: set[asyncio.Future[None]] = set()

    # --- the consumer -------------------------------------------------------------------------

    async def run(self) -> AsyncIterator[OmniMessage]:
        self.result.outcome = LLMOutcome("aborted")  # replaced by the driver unless it never ran
        self._start(self._drive())
        watch = SignalWatch(self.signal, self.queue.notify)
        try:
            async with aclosing(self._drain()) as messages:
                async for msg in messages:
                    yield msg
        finally:
            await watch.close()
            await _cancel_all(self.tasks)
        self._order_outputs()

    async def _drain(self) -> AsyncGenerator[OmniMessage, None]:
        """Pop messages until every producer is done; after an abort, producers get
        `ABORT_GRACE_S` to close out before they are cancelled."""
        queue = self.queue
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while True:
            if queue.items:
                yield queue.items.popleft()
                continue
            if queue.producers <= 0:
                return
            if not self._aborted():
                await queue.wait()
                continue
            if deadline is None:
                deadline = loop.time() + ABORT_GRACE_S
            remaining = deadline - loop.time()
            if remaining <= 0:
                await _cancel_all(self.tasks)
                while queue.items:
                    yield queue.items.popleft()
                return
            with suppress(TimeoutError):
                await asyncio.wait_for(queue.wait(), remaining)

    def _order_outputs(self) -> None:
        """The received outputs in original call order, one per call id."""
        by_id = {payload_of(out, ToolCallOutputPayload).tool_call_id: out for out in self.received}
        seen: set[str] = set()
        for call_id in self.call_order:
            if call_id in seen or call_id not in by_id:
                continue
            seen.add(call_id)
            self.result.tool_outputs.append(by_id[call_id])

    # --- shared helpers ---------------------------------------------------------------------------

    def _aborted(self) -> bool:
        return self.signal is not None and self.signal.aborted

    def _start(self, producer: Coroutine[object, object, None]) -> None:
        self.queue.producers += 1
        self.tasks.add(asyncio.ensure_future(producer))

    def _emit(self, msg: OmniMessage) -> None:
        self.queue.push(msg)
        self.ctx.recorder.record(msg)

    # --- the driver: stream the LLM, approve each committed call ----------------------------------

    async def _drive(self) -> None:
        outcome: LLMOutcome | None = None
        try:
            self._emit(request_begin())
            outcome = await self._stream_model()
        finally:
            final = outcome if outcome is not None else LLMOutcome("aborted")
            self.result.outcome = final
            self._emit(request_end_for(final, self.reconnects, self.ctx.max_reconnects, self.ctx.delay_ms))
            self.queue.producer_done()

    async def _stream_model(self) -> LLMOutcome:
        ctx = self.ctx
        params = GenerativeModelParameters(
            new_messages=list(self.attempt_input), signal=self.signal, thinking_level=ctx.thinking_level
        )
        try:
            async with closing_stream(ctx.llm.stream_generate(params)) as stream:
                async for item in stream:
                    if isinstance(item, LLMOutcome):
                        return item
                    self._emit(item)
                    await self._on_model_item(item)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the LLM boundary: whatever the model side raises is a failed outcome
            return LLMOutcome("failed", f"LLM stream raised: {exc}")
        return outcome_of_stream_end(None)

    async def _on_model_item(self, item: OmniMessage) -> None:
        payload = item.payload
        if isinstance(payload, TokenUsagePayload) and item.type == "event_msg":
            self.ctx.on_token_usage(item)
        elif isinstance(payload, ThinkingPayload | TextPayload):
            self.result.assistant_segments.append(item)
        elif isinstance(payload, ToolCallPayload):
            await self._on_tool_call(item, payload)

    async def _on_tool_call(self, call: OmniMessage, payload: ToolCallPayload) -> None:
        if payload.stop_reason != "completed":
            return
        call_id = payload.tool_call_id
        self.call_order.append(call_id)
        self.result.tool_calls.append(call)
        if self._aborted():
            return
        decision = await self._decide(call)
        if decision is None:
            return
        self._emit(approval_decision(decision, call_id))
        if decision != "allow":
            denied = tool_call_output(denial_text(decision), call_id, "aborted")
            self._emit(denied)
            self.received.append(denied)
            return
        self._start(self._execute(call, call_id))

    async def _decide(self, call: OmniMessage) -> ApprovalDecision | None:
        """The approval decision, or None when the signal fired while approving."""
        try:
            answer = self.ctx.approve(call)
            # A plain function answering a decision directly is accepted like an async one.
            finished, decision = (
                await unless_aborted(answer, self.signal) if inspect.isawaitable(answer) else (True, answer)
            )
        except Exception as exc:  # the Human boundary: an approve callback that throws denies
            log.warning("[penguin] approve callback threw: %s; denying.", exc)
            return None if self._aborted() else "deny"
        if not finished or self._aborted():
            return None
        if decision not in APPROVAL_DECISIONS:
            log.warning("[penguin] approve callback answered %r; denying.", decision)
            return "deny"
        return decision

    # --- one producer per allowed call ------------------------------------------------------------

    async def _execute(self, call: OmniMessage, call_id: str) -> None:
        produced = False
        try:
            request = ToolExecutionRequest(tool_call=call, signal=self.signal, approve=self.ctx.approve)
            async with closing_stream(self.ctx.environment.execute_tool(request)) as stream:
                async for out in stream:
                    produced = self._on_tool_message(out) or produced
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the Environment boundary: whatever a tool raises closes out its call
            if produced:
                log.warning("[penguin] environment raised after tool output: %s", exc)
            else:
                failed = tool_call_output(f"[tool error] {exc}", call_id, "failed")
                self._emit(failed)
                self.received.append(failed)
        finally:
            self.queue.producer_done()

    def _on_tool_message(self, out: OmniMessage) -> bool:
        """Queue one message of the tool's stream; True when it is the call's output.
        Origin-tagged (subagent) messages are shown, not recorded, except a child's first
        session_meta, recorded as a `subagent` event."""
        self.queue.push(out)
        recorder = self.ctx.recorder
        if out.origin:
            if is_session_meta(out) and len(out.origin) == 1:
                recorder.record(subagent_event(out.origin[0]))
            return False
        recorder.record(out)
        if isinstance(out.payload, ToolCallOutputPayload):
            self.received.append(out)
            return True
        return False


async def _cancel_all(tasks: set[asyncio.Future[None]]) -> None:
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
