"""One turn of the agent loop (§2.4-§2.6): a driver and N tool producers, one merge queue.

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
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from dataclasses import dataclass

from ..interfaces import (
    AbortSignal,
    ApproveFn,
    EnvironmentInterface,
    GenerativeModelParameters,
    LLMInterface,
    LLMOutcome,
    ThinkingLevelName,
    ToolExecutionRequest,
)
from ..omni import (
    OmniMessage,
    approval_decision,
    is_complete_model_message,
    is_session_meta,
    request_begin,
    request_end,
    subagent_event,
    tool_call_output,
)
from .carry_over import TurnResult
from .recorder import Recorder
from .waits import SignalWatch, closing_stream, race_signal

__all__ = ["ABORT_GRACE_S", "RETRY_STATUSES", "TurnContext", "denial_text", "request_end_for", "run_turn"]

ABORT_GRACE_S = 2.0
RETRY_STATUSES = frozenset({"failed", "timeout", "malformed"})
_DECISIONS = ("allow", "deny", "forbidden")


def denial_text(decision: str) -> str:
    return "Tool call denied by policy." if decision == "forbidden" else "Tool call denied by user."


def request_end_for(
    outcome: LLMOutcome, reconnects_so_far: int, cap: int, delay: Callable[[int], int]
) -> OmniMessage:
    """The `request_end` of §2.4 step 3: `attempt` unless a clean first-try completion;
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
    return (
        item if isinstance(item, LLMOutcome) else LLMOutcome("failed", "LLM stream ended without an outcome")
    )


async def run_turn(
    ctx: TurnContext, attempt_input: list[OmniMessage], reconnects: int, result: TurnResult
) -> AsyncIterator[OmniMessage]:
    """Yield the turn's messages in arrival order; fill `result` (outputs in call order)."""
    queue = _MergeQueue()
    received: list[OmniMessage] = []
    call_order: list[str] = []
    tasks: set[asyncio.Task] = set()
    signal = ctx.signal

    def emit(msg: OmniMessage) -> None:
        queue.push(msg)
        ctx.recorder.record(msg)

    async def execute(call: OmniMessage) -> None:
        call_id = call.payload.tool_call_id
        produced = False
        try:
            request = ToolExecutionRequest(tool_call=call, signal=signal, approve=ctx.approve)
            async with closing_stream(ctx.environment.execute_tool(request)) as stream:
                async for out in stream:
                    queue.push(out)
                    if out.origin:
                        if is_session_meta(out) and len(out.origin) == 1:
                            ctx.recorder.record(subagent_event(out.origin[0]))
                        continue
                    ctx.recorder.record(out)
                    if is_complete_model_message(out) and out.payload.type == "tool_call_output":
                        received.append(out)
                        produced = True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if produced:
                print(f"[penguin] environment raised after tool output: {exc}", file=sys.stderr)
            else:
                failed = tool_call_output(f"[tool error] {exc}", call_id, "failed")
                emit(failed)
                received.append(failed)
        finally:
            queue.producer_done()

    async def decide(call: OmniMessage) -> str | None:
        """The approval decision, or None when the signal fired while approving."""
        try:
            answer = ctx.approve(call)
            # A plain function answering a decision directly is accepted like an async one.
            finished, decision = (
                await race_signal(answer, signal) if inspect.isawaitable(answer) else (True, answer)
            )
        except Exception as exc:
            print(f"[penguin] approve callback threw: {exc}; denying.", file=sys.stderr)
            return None if signal is not None and signal.aborted else "deny"
        if not finished or (signal is not None and signal.aborted):
            return None
        if decision not in _DECISIONS:
            print(f"[penguin] approve callback answered {decision!r}; denying.", file=sys.stderr)
            return "deny"
        return decision

    async def on_tool_call(call: OmniMessage) -> None:
        if call.payload.stop_reason != "completed":
            return
        call_order.append(call.payload.tool_call_id)
        result.tool_calls.append(call)
        if signal is not None and signal.aborted:
            return
        decision = await decide(call)
        if decision is None:
            return
        emit(approval_decision(decision, call.payload.tool_call_id))
        if decision != "allow":
            denied = tool_call_output(denial_text(decision), call.payload.tool_call_id, "aborted")
            emit(denied)
            received.append(denied)
            return
        queue.producers += 1
        tasks.add(asyncio.ensure_future(execute(call)))

    async def drive() -> None:
        outcome: LLMOutcome | None = None
        try:
            emit(request_begin())
            params = GenerativeModelParameters(
                new_messages=list(attempt_input), signal=signal, thinking_level=ctx.thinking_level
            )
            try:
                async with closing_stream(ctx.llm.stream_generate(params)) as stream:
                    async for item in stream:
                        if isinstance(item, LLMOutcome):
                            outcome = item
                            break
                        emit(item)
                        if item.type == "event_msg" and item.payload.type == "token_usage":
                            ctx.on_token_usage(item)
                        elif is_complete_model_message(item):
                            if item.payload.type in ("thinking", "text"):
                                result.assistant_segments.append(item)
                            elif item.payload.type == "tool_call":
                                await on_tool_call(item)
            except asyncio.CancelledError:
                outcome = LLMOutcome("aborted")
                raise
            except Exception as exc:
                outcome = LLMOutcome("failed", f"LLM stream raised: {exc}")
            outcome = outcome_of_stream_end(outcome)
        finally:
            final = outcome if outcome is not None else LLMOutcome("aborted")
            result.outcome = final
            emit(request_end_for(final, reconnects, ctx.max_reconnects, ctx.delay_ms))
            queue.producer_done()

    result.outcome = LLMOutcome("aborted")  # replaced by the driver unless it never ran
    queue.producers += 1
    tasks.add(asyncio.ensure_future(drive()))
    watch = SignalWatch(signal, queue.notify)
    loop = asyncio.get_running_loop()
    deadline: float | None = None
    forced = False
    try:
        while True:
            if queue.items:
                yield queue.items.popleft()
                continue
            if queue.producers <= 0 or forced:
                break
            if signal is not None and signal.aborted:
                if deadline is None:
                    deadline = loop.time() + ABORT_GRACE_S
                remaining = deadline - loop.time()
                if remaining <= 0:
                    await _cancel_all(tasks)
                    forced = True
                    continue
                with suppress(TimeoutError):
                    await asyncio.wait_for(queue.wait(), remaining)
            else:
                await queue.wait()
    finally:
        await watch.close()
        await _cancel_all(tasks)

    by_id = {out.payload.tool_call_id: out for out in received}
    seen: set[str] = set()
    for call_id in call_order:
        if call_id in seen or call_id not in by_id:
            continue
        seen.add(call_id)
        result.tool_outputs.append(by_id[call_id])


async def _cancel_all(tasks: set[asyncio.Task]) -> None:
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
