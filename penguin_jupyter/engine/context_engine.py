"""`ContextEngine`: the agent loop of docs/engine.md (run, turn loop, retries, carry-over,
steering, background notices, max_turns), over any LLMInterface and EnvironmentInterface.

Owns the turn loop and the state that persists between runs. One turn's mechanics are in
`turn.py`, compaction in `compaction.py` (a collaborator over the shared `ContextState`),
carry-over building in `carry_over.py`, waits in `waits.py`, Trace recording in `recorder.py`,
the heap kept out of garbage collections while a run or a manual compaction lasts in `seams/task_heap.py`.
A task is a loop of three named steps: a turn with its retries (attempt → outcome), the
compaction check after it, and the input of the next turn. Never raises for LLM or tool failures: they
become messages; only a host contract violation (a broken steering fold) ends `run` with an
exception. Sessions, system prompts and bootstrapping are the session layer's business.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from dataclasses import dataclass, field
from typing import Any

from ..interfaces import (
    AbortSignal,
    ApprovalDecision,
    ApproveFn,
    BudgetStop,
    EnvironmentInterface,
    LLMInterface,
    LLMOutcome,
    ThinkingLevelName,
)
from ..omni import CompactionReason, OmniMessage, abort, assistant_text, markers, partial_text, user_text
from ..seams.task_heap import TASK_HEAP
from .carry_over import TurnResult, build_carry_over, with_retried_turns
from .compaction import CompactionResult, Compactor
from .context_state import ContextState
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


class ContextEngine:
    """Drives one session's conversation: `run` streams a task's messages (docs/engine.md "A run").

    Beyond the documented options: `compaction_max_reconnects` (default = max_reconnects),
    `create_llm` (compaction needs it), `session_meta` / `tool_list` (rewritten at the head of
    each post-compaction Trace file), `bootstrap_records` (first run's MCP events, recorded
    once after that run's input, followed by `tool_list`), `fold_input_images` (steering on a
    non-vision model), `background_notices` (docs/engine.md "Background notices") and `initial_state` (resume).
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
        self._environment = environment
        self._tool_list = tool_list
        self._bootstrap_records = list(bootstrap_records) if bootstrap_records is not None else None
        self._fold = fold_input_images
        self._notices = background_notices
        state = initial_state or EngineState()
        self._state = ContextState.resumed(llm, state)
        self._recorder = Recorder(
            trace,
            session_meta=session_meta,
            tool_list=tool_list,
            rotation_pending=state.pending_trace_rotation,
        )
        self._compactor = Compactor(
            compaction,
            create_llm,
            state=self._state,
            recorder=self._recorder,
            backoff=self._backoff,
            max_reconnects=self._compaction_max_reconnects,
        )
        self._steering = SteeringQueue()
        self._task_running = False

    # --- read-only views ------------------------------------------------------------------

    @property
    def llm(self) -> LLMInterface:
        """The current model context (replaced by `create_llm` on every compaction)."""
        return self._state.llm

    @property
    def task_running(self) -> bool:
        return self._task_running

    def snapshot(self) -> EngineState:
        """The state that survives between runs (what a resume would hand back)."""
        return self._state.snapshot(self._recorder.rotation_pending)

    def compactability(self) -> str:
        state = self._state
        return compactability_of(self._compactor.configured, state.session_turns, state.from_compaction)

    # --- host hooks during a run ----------------------------------------------------------

    def steer(self, messages: list[OmniMessage]) -> bool:
        """Queue mid-run input; False when no run is in flight (docs/engine.md "Steering")."""
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
            with TASK_HEAP.task():  # the heap that existed before the Task stays out of collections
                async for msg in self._run_task(messages, approve or _deny_all, signal, thinking_level):
                    yield msg
        finally:
            self._task_running = False
            self._max_turns = configured
            self._steering.clear()

    def compact(self, *, signal: AbortSignal | None = None) -> MessageStream:
        """Manual compaction between runs (docs/engine.md "Compaction"): iterate it for the events, or await it."""
        return MessageStream(self._manual_compaction(signal))

    # --- internals ---------------------------------------------------------------------------

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

    # --- the task loop ---------------------------------------------------------------------------

    async def _run_task(
        self,
        new_messages: list[OmniMessage],
        approve: ApproveFn,
        signal: AbortSignal | None,
        thinking_level: ThinkingLevelName | None,
    ) -> AsyncIterator[OmniMessage]:
        task_input = self._open_task(new_messages)
        if signal is not None and signal.aborted:
            self._state.carry_over = task_input
            yield self._emit(abort("aborted by user"))
            return
        notices: list[OmniMessage] = []
        async for msg in self._deliver_notices(notices):
            yield msg
        ctx = TurnContext(
            llm=self._state.llm,
            environment=self._environment,
            recorder=self._recorder,
            approve=approve,
            signal=signal,
            thinking_level=thinking_level,
            max_reconnects=self._max_reconnects,
            delay_ms=self._backoff.delay_ms,
            on_token_usage=self._state.count_turn,
        )
        next_input: list[OmniMessage] | None = [*task_input, *notices]
        turn_count = 0
        while next_input is not None:
            if 0 < self._max_turns <= turn_count:
                self._state.carry_over = next_input
                for msg in self._max_turns_notice():
                    yield self._emit(msg)
                return
            turn_count += 1
            ctx.llm = self._state.llm  # a compaction replaces the model context
            step = _TaskStep()
            async for msg in self._turn_with_retries(ctx, next_input, step):
                yield msg
            if step.ended:
                return
            async for msg in self._after_turn(step, signal):
                yield msg
            next_input = step.next_input

    def _open_task(self, new_messages: list[OmniMessage]) -> list[OmniMessage]:
        """The task's input (a pending summary, the carry-over, the new messages), recorded,
        followed on the first run by the bootstrap records and the tool list."""
        state = self._state
        summary, state.pending_summary = state.pending_summary, None
        carry, state.carry_over = state.carry_over, []
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
        return [*([summary] if summary is not None else []), *carry, *new_messages]

    async def _turn_with_retries(
        self, ctx: TurnContext, next_input: list[OmniMessage], step: _TaskStep
    ) -> AsyncIterator[OmniMessage]:
        """Attempt → outcome, until a completed turn (`step.turn`) or the task's end
        (`step.ended`, after its abort message). Failed attempts are retried after the backoff
        with their work transcribed as `[turn_retried]`."""
        failed: list[TurnResult] = []
        attempt_input = next_input
        reconnects = 0
        while True:
            turn = TurnResult()
            async for msg in run_turn(ctx, attempt_input, reconnects, turn):
                yield msg
            step.turn, step.attempt_input = turn, attempt_input
            if isinstance(turn.outcome, BudgetStop):
                step.ended = True
                for msg in self._budget_stop(attempt_input, turn.outcome.message or "a spending budget"):
                    yield self._emit(msg)
                return
            ending = self._ending_of(turn, attempt_input, ctx.signal)
            if ending is not None:
                step.ended = True
                yield self._emit(ending)
                return
            if turn.outcome.status == "completed":
                return
            failed.append(turn)
            attempt_input = with_retried_turns(next_input, failed)
            if reconnects >= self._max_reconnects:
                step.ended = True
                self._state.carry_over = attempt_input
                yield self._emit(abort(_exhaustion_reason(turn.outcome, self._max_reconnects)))
                return
            reconnects += 1
            if not await self._backoff.wait(reconnects, ctx.signal):
                step.ended = True
                self._state.carry_over = attempt_input
                yield self._emit(abort("aborted during reconnect backoff"))
                return

    def _ending_of(
        self, turn: TurnResult, attempt_input: list[OmniMessage], signal: AbortSignal | None
    ) -> OmniMessage | None:
        """The abort that ends the task after this attempt (user abort, auth or permanent
        failure), with the carry-over set; None when the outcome is completed or retryable."""
        outcome = turn.outcome
        if (signal is not None and signal.aborted) or outcome.status == "aborted":
            reason = "aborted by user"
        elif outcome.status == "auth" or (outcome.status == "failed" and outcome.permanent):
            reason = f"llm request error: {outcome.message or 'unknown'}"
        else:
            return None
        self._state.carry_over = build_carry_over(attempt_input, turn)
        return abort(reason)

    async def _after_turn(self, step: _TaskStep, signal: AbortSignal | None) -> AsyncIterator[OmniMessage]:
        """Compaction when triggered, then the next turn's input (`step.next_input`, None to end
        the task): the turn's tool outputs and whatever was injected meanwhile."""
        turn = step.turn
        mid_task = bool(turn.tool_outputs)
        reason = self._compactor.trigger()
        settings = self._compactor.settings
        if reason is not None and settings is not None:
            if settings.mode == "discard":
                if not mid_task and self._quiet():
                    async for msg in self._compactor.discard(reason):
                        yield msg
                    return
            else:
                async for msg in self._summarize_mid_task(step, reason, signal):
                    yield msg
                if step.compaction_decided:
                    return
        injected: list[OmniMessage] = []
        async for msg in self._injected(injected):
            yield msg
        if not mid_task and not injected:
            return
        stash, self._state.carry_over = self._state.carry_over, []
        step.next_input = [*stash, *turn.tool_outputs, *injected] or None

    async def _summarize_mid_task(
        self, step: _TaskStep, reason: CompactionReason, signal: AbortSignal | None
    ) -> AsyncIterator[OmniMessage]:
        """Summarize after a turn. A summary either waits for the next run (nothing else to
        do) or becomes the head of the next turn's input; a failure mid-task ends the task.
        `step.compaction_decided` says whether this settled what comes next."""
        turn = step.turn
        mid_task = bool(turn.tool_outputs)
        result = CompactionResult()
        async for msg in self._compactor.summarize(
            reason, turn.tool_outputs if mid_task else [], signal, result
        ):
            yield msg
        step.compaction_decided = True
        if result.status == "completed" and result.summary is not None:
            if not mid_task and self._quiet():
                self._state.pending_summary = result.summary
                return
            self._recorder.record(result.summary)
            injected: list[OmniMessage] = []
            async for msg in self._injected(injected):
                yield msg
            step.next_input = [result.summary, *injected]
            return
        if mid_task:
            if not result.committed:
                self._state.carry_over = [
                    *self._state.carry_over,
                    *build_carry_over(step.attempt_input, turn),
                ]
            yield self._emit(
                abort("aborted during compaction" if result.status == "aborted" else "compaction failed")
            )
            return
        step.compaction_decided = result.status == "aborted"

    def _max_turns_notice(self) -> list[OmniMessage]:
        return self._stop_notice(f"[reached max turns ({self._max_turns}); stopping]")

    def _budget_stop(self, attempt_input: list[OmniMessage], reason: str) -> list[OmniMessage]:
        """A request refused by a spending budget (docs/cost.md): nothing was sent, so the whole
        input carries over, with a note that tells the next task's model why this one stopped."""
        self._state.carry_over = [*attempt_input, user_text(markers.build_budget_stop_text(reason), "harness")]
        return self._stop_notice(f"[stopped before a model request: {reason}]")

    @staticmethod
    def _stop_notice(text: str) -> list[OmniMessage]:
        return [
            partial_text("start", ""),
            partial_text("delta", text),
            partial_text("stop", "", "failed"),
            assistant_text(text, "failed"),
        ]

    async def _manual_compaction(self, signal: AbortSignal | None) -> AsyncIterator[OmniMessage]:
        if self._task_running:
            raise RuntimeError("compact() is only callable between runs")
        with TASK_HEAP.task():  # a summary request over the whole history, like a Task's
            async for msg in self._compactor.manual(signal):
                yield msg


@dataclass
class _TaskStep:
    """What one turn step of a task leaves for the next: the completed turn and its input,
    whether the task ended, and the next turn's input (None: the task is done)."""

    turn: TurnResult = field(default_factory=TurnResult)
    attempt_input: list[OmniMessage] = field(default_factory=list)
    ended: bool = False
    compaction_decided: bool = False
    next_input: list[OmniMessage] | None = None
