"""`ContextEngine`: the agent loop of core-behavior.md §2 (run, turn loop, retries, carry-over,
steering, background notices, max_turns), over any LLMInterface and EnvironmentInterface.

Owns the turn loop and the state that persists between runs. One turn's mechanics are in
`turn.py`, compaction in `compaction.py`, carry-over building in `carry_over.py`, waits in
`waits.py`, Trace recording in `recorder.py`. Never raises for LLM or tool failures: they
become messages; only a host contract violation (a broken steering fold) ends `run` with an
exception. Sessions, system prompts and bootstrapping are the session layer's business.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from typing import Any

from ..interfaces import (
    AbortSignal,
    ApprovalDecision,
    ApproveFn,
    EnvironmentInterface,
    LLMInterface,
    LLMOutcome,
    ThinkingLevelName,
)
from ..omni import OmniMessage, TokenCounts, abort, assistant_text, partial_text
from .carry_over import TurnResult, build_carry_over, with_retried_turns
from .compaction import CompactionMixin, CompactionResult
from .inputs import require_messages
from .protocols import BackgroundNotices, CreateLLM, FoldInputImages, TraceSink
from .recorder import Recorder
from .settings import CompactionSettings, EngineState, compactability_of
from .steering import SteeringQueue, carries_steering, steering_messages
from .turn import TurnContext, run_turn
from .waits import Backoff

__all__ = ["ContextEngine", "MessageStream"]


async def _deny_all(_call: OmniMessage) -> ApprovalDecision:
    return "deny"


def _exhaustion_reason(outcome: LLMOutcome, cap: int) -> str:
    if outcome.status == "malformed":
        return f"malformed response failed after {cap} retries"
    if outcome.status == "failed":
        return f"llm request failed after {cap} retries: {outcome.message or 'unknown'}"
    return f"reconnect failed after {cap} retries"


def _non_negative_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return value


class MessageStream:
    """An async stream of messages that can also simply be awaited (answering the list)."""

    def __init__(self, source: AsyncIterator[OmniMessage]) -> None:
        self._source = source

    def __aiter__(self) -> AsyncIterator[OmniMessage]:
        return self._source

    async def _collect(self) -> list[OmniMessage]:
        return [msg async for msg in self._source]

    def __await__(self) -> Generator[Any, None, list[OmniMessage]]:
        return self._collect().__await__()


class ContextEngine(CompactionMixin):
    """Drives one session's conversation: `run` streams a task's messages (§2.2).

    Beyond the documented options: `compaction_max_reconnects` (default = max_reconnects),
    `create_llm` (compaction needs it), `session_meta` / `tool_list` (rewritten at the head of
    each post-compaction Trace file), `bootstrap_records` (first run's MCP events, recorded
    once after that run's input, followed by `tool_list`), `fold_input_images` (steering on a
    non-vision model), `background_notices` (§2.11) and `initial_state` (resume).
    """

    def __init__(
        self,
        llm: LLMInterface,
        environment: EnvironmentInterface,
        *,
        trace: TraceSink | None = None,
        max_turns: int = -1,
        max_reconnects: int = 5,
        backoff_base_ms: int = 2000,
        backoff_cap_ms: int = 30000,
        compaction: CompactionSettings | None = None,
        compaction_max_reconnects: int | None = None,
        create_llm: CreateLLM | None = None,
        session_meta: OmniMessage | None = None,
        tool_list: OmniMessage | None = None,
        bootstrap_records: list[OmniMessage] | None = None,
        fold_input_images: FoldInputImages | None = None,
        background_notices: BackgroundNotices | None = None,
        initial_state: EngineState | None = None,
    ) -> None:
        if isinstance(max_turns, bool) or not isinstance(max_turns, int):
            raise ValueError(f"max_turns must be an integer, got {max_turns!r}")
        self._max_turns = max_turns
        self._max_reconnects = _non_negative_int("max_reconnects", max_reconnects)
        self._compaction_max_reconnects = _non_negative_int(
            "compaction_max_reconnects",
            max_reconnects if compaction_max_reconnects is None else compaction_max_reconnects,
        )
        self._backoff = Backoff(
            _non_negative_int("backoff_base_ms", backoff_base_ms),
            _non_negative_int("backoff_cap_ms", backoff_cap_ms),
        )
        self._llm = llm
        self._environment = environment
        self._compaction = compaction
        self._create_llm = create_llm
        self._tool_list = tool_list
        self._bootstrap_records = list(bootstrap_records) if bootstrap_records is not None else None
        self._fold = fold_input_images
        self._notices = background_notices
        state = initial_state or EngineState()
        self._carry_over: list[OmniMessage] = list(state.carry_over)
        self._pending_summary: OmniMessage | None = state.pending_summary
        self._session_turns = state.session_turns
        self._from_compaction = state.from_compaction
        self._session_tokens: TokenCounts = state.session_tokens
        self._last_request_total = state.last_request_total
        self._recorder = Recorder(
            trace,
            session_meta=session_meta,
            tool_list=tool_list,
            rotation_pending=state.pending_trace_rotation,
        )
        self._steering = SteeringQueue()
        self._task_running = False

    # --- read-only views ------------------------------------------------------------------

    @property
    def llm(self) -> LLMInterface:
        """The current model context (replaced by `create_llm` on every compaction)."""
        return self._llm

    @property
    def task_running(self) -> bool:
        return self._task_running

    def snapshot(self) -> EngineState:
        """The state that survives between runs (what a resume would hand back)."""
        return EngineState(
            carry_over=list(self._carry_over),
            pending_summary=self._pending_summary,
            session_turns=self._session_turns,
            from_compaction=self._from_compaction,
            session_tokens=self._session_tokens,
            last_request_total=self._last_request_total,
            pending_trace_rotation=self._recorder.rotation_pending,
        )

    def compactability(self) -> str:
        configured = self._compaction is not None and self._create_llm is not None
        return compactability_of(configured, self._session_turns, self._from_compaction)

    # --- host hooks during a run ----------------------------------------------------------

    def steer(self, messages: list[OmniMessage]) -> bool:
        """Queue mid-run input; False when no run is in flight (§2.10)."""
        if not self._task_running:
            return False
        if carries_steering(messages):
            self._steering.push(messages)
        return True

    def unsteer(self, messages: list[OmniMessage]) -> bool:
        """Withdraw a still-queued `steer` entry (the same list object)."""
        return self._steering.remove(messages)

    def skip_reconnect_wait(self) -> bool:
        """ "Retry now": end a backoff in progress early; False when none is."""
        return self._backoff.skip()

    # --- run ---------------------------------------------------------------------------------

    async def run(
        self,
        new_messages: list[OmniMessage],
        *,
        approve: ApproveFn | None = None,
        signal: AbortSignal | None = None,
        thinking_level: ThinkingLevelName | None = None,
        max_turns: int | None = None,
    ) -> AsyncIterator[OmniMessage]:
        """Run one task; yields every message for the caller (never the input itself).
        `max_turns` overrides the engine's limit for this run only."""
        messages = require_messages(new_messages, "ContextEngine.run")
        if self._task_running:
            raise RuntimeError("a run is already in progress on this engine")
        configured = self._max_turns
        if max_turns is not None:
            if isinstance(max_turns, bool) or not isinstance(max_turns, int):
                raise ValueError(f"max_turns must be an integer, got {max_turns!r}")
            self._max_turns = max_turns
        self._task_running = True
        try:
            async for msg in self._run_task(messages, approve or _deny_all, signal, thinking_level):
                yield msg
        finally:
            self._task_running = False
            self._max_turns = configured
            self._steering.clear()

    def compact(self, *, signal: AbortSignal | None = None) -> MessageStream:
        """Manual compaction between runs (§2.12.8): iterate it for the events, or await it."""
        return MessageStream(self._manual_compaction(signal))

    # --- internals ---------------------------------------------------------------------------

    def _observe_usage(self, msg: OmniMessage) -> None:
        self._last_request_total = msg.payload.request.total
        self._session_tokens = msg.payload.session

    def _count_turn(self, msg: OmniMessage) -> None:
        self._observe_usage(msg)
        self._session_turns += 1

    def _emit(self, msg: OmniMessage) -> OmniMessage:
        self._recorder.record(msg)
        return msg

    def _notices_pending(self) -> int:
        return self._notices.pending() if self._notices is not None else 0

    def _quiet(self) -> bool:
        """Nothing waits to be injected: no steering queued, no notice pending."""
        return len(self._steering) == 0 and self._notices_pending() == 0

    async def _deliver_notices(self, delivered: list[OmniMessage]) -> AsyncIterator[OmniMessage]:
        """Drain background notices (each emitted and recorded) into `delivered`."""
        if self._notices is not None:
            for notice in self._notices.drain():
                delivered.append(notice)
                yield self._emit(notice)

    async def _injected(self, delivered: list[OmniMessage]) -> AsyncIterator[OmniMessage]:
        """Deliver background notices, then steering (each emitted and recorded)."""
        async for msg in self._deliver_notices(delivered):
            yield msg
        for entry in self._steering.take_all():
            for msg in await steering_messages(entry, self._fold):
                delivered.append(msg)
                yield self._emit(msg)

    async def _run_task(
        self,
        new_messages: list[OmniMessage],
        approve: ApproveFn,
        signal: AbortSignal | None,
        thinking_level: ThinkingLevelName | None,
    ) -> AsyncIterator[OmniMessage]:
        summary, self._pending_summary = self._pending_summary, None
        carry, self._carry_over = self._carry_over, []
        task_input = [*([summary] if summary is not None else []), *carry, *new_messages]
        if summary is not None:
            self._recorder.record(summary)
        for msg in new_messages:
            self._recorder.record(msg)
        if self._bootstrap_records is not None:
            for msg in self._bootstrap_records:
                self._recorder.record(msg)
            self._bootstrap_records = None
            if self._tool_list is not None:
                self._recorder.record(self._tool_list)

        if signal is not None and signal.aborted:
            self._carry_over = task_input
            yield self._emit(abort("aborted by user"))
            return

        notices: list[OmniMessage] = []
        async for msg in self._deliver_notices(notices):
            yield msg
        next_input = [*task_input, *notices]

        turn_count = 0
        while True:
            if 0 < self._max_turns <= turn_count:
                self._carry_over = next_input
                for msg in self._max_turns_notice():
                    yield self._emit(msg)
                return
            turn_count += 1

            ctx = TurnContext(
                llm=self._llm,
                environment=self._environment,
                recorder=self._recorder,
                approve=approve,
                signal=signal,
                thinking_level=thinking_level,
                max_reconnects=self._max_reconnects,
                delay_ms=self._backoff.delay_ms,
                on_token_usage=self._count_turn,
            )
            failed: list[TurnResult] = []
            attempt_input = next_input
            reconnects = 0
            while True:
                turn = TurnResult()
                async for msg in run_turn(ctx, attempt_input, reconnects, turn):
                    yield msg
                outcome = turn.outcome
                if (signal is not None and signal.aborted) or outcome.status == "aborted":
                    self._carry_over = build_carry_over(attempt_input, turn)
                    yield self._emit(abort("aborted by user"))
                    return
                if outcome.status == "auth" or (outcome.status == "failed" and outcome.permanent):
                    self._carry_over = build_carry_over(attempt_input, turn)
                    yield self._emit(abort(f"llm request error: {outcome.message or 'unknown'}"))
                    return
                if outcome.status == "completed":
                    break
                failed.append(turn)
                attempt_input = with_retried_turns(next_input, failed)
                if reconnects >= self._max_reconnects:
                    self._carry_over = attempt_input
                    yield self._emit(abort(_exhaustion_reason(outcome, self._max_reconnects)))
                    return
                reconnects += 1
                if not await self._backoff.wait(reconnects, signal):
                    self._carry_over = attempt_input
                    yield self._emit(abort("aborted during reconnect backoff"))
                    return

            mid_task = bool(turn.tool_outputs)
            reason = self._compaction_trigger()
            if reason is not None and self._compaction is not None:
                if self._compaction.mode == "discard":
                    if not mid_task and self._quiet():
                        async for msg in self._discard(reason):
                            yield msg
                        return
                else:
                    result = CompactionResult()
                    pending = turn.tool_outputs if mid_task else []
                    async for msg in self._summarize(reason, pending, signal, result):
                        yield msg
                    if result.status == "completed" and result.summary is not None:
                        if not mid_task and self._quiet():
                            self._pending_summary = result.summary
                            return
                        self._recorder.record(result.summary)
                        injected: list[OmniMessage] = []
                        async for msg in self._injected(injected):
                            yield msg
                        next_input = [result.summary, *injected]
                        continue
                    if mid_task:
                        if not result.committed:
                            self._carry_over = [*self._carry_over, *build_carry_over(attempt_input, turn)]
                        why = (
                            "aborted during compaction" if result.status == "aborted" else "compaction failed"
                        )
                        yield self._emit(abort(why))
                        return
                    if result.status == "aborted":
                        return

            injected = []
            async for msg in self._injected(injected):
                yield msg
            if not mid_task and not injected:
                return
            stash, self._carry_over = self._carry_over, []
            next_input = [*stash, *turn.tool_outputs, *injected]
            if not next_input:
                return

    def _max_turns_notice(self) -> list[OmniMessage]:
        text = f"[reached max turns ({self._max_turns}); stopping]"
        return [
            partial_text("start", ""),
            partial_text("delta", text),
            partial_text("stop", "", "failed"),
            assistant_text(text, "failed"),
        ]

    async def _manual_compaction(self, signal: AbortSignal | None) -> AsyncIterator[OmniMessage]:
        if self._task_running:
            raise RuntimeError("compact() is only callable between runs")
        if self._compaction is None or self._create_llm is None or self._session_turns == 0:
            return
        if self._compaction.mode == "discard":
            self._carry_over = [
                m for m in self._carry_over if getattr(m.payload, "type", None) != "tool_call_output"
            ]
            async for msg in self._discard("manual"):
                yield msg
            return
        folded, self._carry_over = self._carry_over, []
        result = CompactionResult()
        async for msg in self._summarize("manual", folded, signal, result):
            yield msg
        if result.status == "completed" and result.summary is not None:
            self._pending_summary = result.summary
        elif not result.committed:
            self._carry_over = folded
