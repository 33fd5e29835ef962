"""Session: one conversation of an agent, wrapping the context engine (docs/architecture.md "The session layer").

Owns what happens around the engine: the command-policy wrapper on `approve`, image folding
for text-only models, `session_meta` recorded once, the first-run bootstrap (MCP connect
events, tool discovery, model construction racing the abort signal, `tool_list_ready`),
resume state (replayed history injected into the first model), background completion
notices, and `dispose` (which releases the session lock the Agent took). Building a session from agent state is `agent.py`'s job; the loop
itself is the engine's.
"""

from __future__ import annotations

import contextlib
import logging
import math
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine import CompactionSettings, ContextEngine, EngineState, NoticeQueue, compactability_of
from .engine.inputs import require_messages
from .environment import Environment
from .interfaces import AbortSignal, ApproveFn, Permission, ThinkingLevelName, ToolDefinition, unless_aborted
from .llm import GenerativeModel, GenerativeModelConfig, ToolCallIdAllocator
from .omni import (
    OmniMessage,
    TextPayload,
    TokenCounts,
    abort,
    mcp_connect_begin,
    mcp_connect_end,
    tool_list_ready,
    user_text,
)
from .redaction import EMPTY, Redactor
from .session_images import fold_images
from .spending import SpendMeter
from .trace import ReplayState, SessionLock, TraceWriter

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .environment.tools.subagent import SubagentSessionManager

TITLE_PROMPT = (
    "Write a short title (at most eight words) for a conversation that starts with the message "
    "below. Reply with the title only, no quotes.\n\n{prompt}"
)
RESUME_INJECT_FAILED = (
    "Resume failed: the Trace history could not be injected "
    "(records may be corrupted, e.g. invalid tool-argument JSON): {detail}"
)


@dataclass
class SessionSetup:
    """Everything a Session needs, resolved by the Agent from agent state and project config."""

    session_id: str
    provider: str
    model_id: str
    workspace_dir: str
    scratchpad_dir: Path
    trace: TraceWriter
    meta: OmniMessage
    model_config: GenerativeModelConfig  # tools are filled in at bootstrap
    environment: Environment
    vision: bool
    max_turns: int = -1
    compaction: CompactionSettings | None = None
    mcp_server_names: list[str] = field(default_factory=list)
    command_policy: dict[str, Any] | None = None
    redactor: Redactor = EMPTY  # the configured secrets (docs/security.md)
    replay: ReplayState | None = None  # set for a resumed session
    meta_recorded: bool = False
    spend: SpendMeter | None = None  # budgets every request of this session passes (docs/cost.md)
    owns_spend: bool = True  # False for a subagent: its parent's Task owns the meter


class Session:
    """A running conversation: `run` streams OmniMessages; see the README's "The core, from Python"."""

    def __init__(self, setup: SessionSetup) -> None:
        self._setup = setup
        self.session_id = setup.session_id
        self.provider = setup.provider
        self.model_id = setup.model_id
        self.workspace_dir = setup.workspace_dir
        self.environment = setup.environment
        self.system_prompt = setup.model_config.system_prompt or ""
        self._trace = setup.trace
        self._meta_recorded = setup.meta_recorded
        self._engine: ContextEngine | None = None
        self._tool_call_ids = setup.model_config.tool_call_ids or ToolCallIdAllocator()
        self._bootstrap_carry: list[OmniMessage] = []
        self._notices = NoticeQueue()
        self._disposed = False
        self._lock: SessionLock | None = None
        self._recording_noticed = False
        self.on_background_notice: Callable[[], None] | None = None
        self._attach_background_listener()

    # --- identity ------------------------------------------------------------------------------

    @property
    def trace_path(self) -> Path:
        """The Trace shard currently written (changes after a compaction rotates it)."""
        return self._trace.path

    @property
    def scratchpad_dir(self) -> Path:
        """This session's own scratchpad (tool-output archives, the agent's working files)."""
        return self._setup.scratchpad_dir

    @property
    def meta(self) -> OmniMessage:
        """This session's `session_meta` record."""
        return self._setup.meta

    @property
    def engine(self) -> ContextEngine | None:
        return self._engine

    @property
    def render_messages(self) -> list[OmniMessage]:
        """The replayed view of a resumed session (empty for a new one)."""
        return list(self._setup.replay.render_messages) if self._setup.replay else []

    @property
    def task_running(self) -> bool:
        return self._engine is not None and self._engine.task_running

    def tool_permission(self, name: str) -> Permission | None:
        return self.environment.tool_permission(name)

    @property
    def recording_error(self) -> str | None:
        """Why the Trace could not be written (one line), or None while recording works.
        The session goes on either way; records that failed are lost."""
        return self._trace.failure

    @property
    def recording(self) -> bool:
        """False when the latest Trace write failed: recording is off."""
        return self._trace.recording

    def take_recording_notice(self) -> str | None:
        """A one-time line for the user once the Trace could not be written (then None)."""
        failure = self._trace.failure
        if failure is None or self._recording_noticed:
            return None
        self._recording_noticed = True
        return (
            f"penguin: recording is off — {failure}. The session goes on, "
            "but what follows is not saved and cannot be resumed."
        )

    @property
    def redactor(self) -> Redactor:
        """Replaces each configured secret by `[redacted:NAME]` (docs/security.md); its `values`
        are the raw secrets, longest first (e.g. for a streaming hold-back)."""
        return self._setup.redactor

    # --- background notices (docs/engine.md "Background notices", docs/environment.md "Background completion reports") -----------------------------------------------------

    def _attach_background_listener(self) -> None:
        attach = getattr(self.environment, "set_notice_listener", None)
        if attach is not None:
            attach(self._on_background_event)

    def _on_background_event(self, event: Any) -> None:
        from .environment.notices import background_notice_text

        # A background command's output reaches the model here, not through the tool close-out:
        # redact it the same way (docs/security.md).
        self._notices.push(user_text(self.redactor(background_notice_text(event)), sender="harness"))
        if self.on_background_notice is not None and not self.task_running:
            with contextlib.suppress(Exception):
                self.on_background_notice()

    def add_notice(self, text: str) -> None:
        """A fact from the host the model gets at the start of its next request, as a harness
        notice like a background report (redacted the same way): e.g. the user undid a Task."""
        self._notices.push(user_text(self.redactor(text), sender="harness"))

    def take_background_notices(self) -> list[OmniMessage]:
        """Queued harness notices (a host that starts its own run with them takes them here)."""
        return self._notices.drain()

    def pending_background_notices(self) -> int:
        return self._notices.pending()

    # --- host seams: what a front end (the notebook) needs besides `run` ------------------------

    def background_subagents(self) -> SubagentSessionManager | None:
        """The registry of this session's background subagents (None when its toolset has no
        subagent tools, or after dispose): a host attaches the single listener for their live
        messages with `set_message_listener` (messages are buffered while none is attached) and
        hands back a message that raced its detach with `forward`."""
        from .environment.tools.subagent import SubagentSessionManager

        services = getattr(self.environment, "services", None)
        manager = getattr(services, "subagent_sessions", None)
        if not isinstance(manager, SubagentSessionManager) or manager.disposed:
            return None
        return manager

    def kill_running_commands(self) -> None:
        """Kill every running command's process group now (interrupt / Stop); the session stays
        usable. Never raises: a failure is printed as one line."""
        try:
            self.environment.kill_all_commands()
        except Exception as exc:  # interrupt never throws: one log line
            log.warning("[penguin] could not kill running commands: %s", exc)

    # --- run -----------------------------------------------------------------------------------

    async def run(
        self,
        new_messages: list[OmniMessage],
        *,
        approve: ApproveFn | None = None,
        signal: AbortSignal | None = None,
        thinking_level: ThinkingLevelName | None = None,
        max_turns: int | None = None,
        budget_usd: float | None = None,
    ) -> AsyncIterator[OmniMessage]:
        """One task: policy-wrapped approval, folded images, bootstrap on the first run, engine.
        `max_turns` overrides the configured turn limit for this task only; `budget_usd` caps
        what this task's model requests may cost (docs/cost.md)."""
        if self._disposed:
            raise RuntimeError(f"Session {self.session_id} is disposed")
        if budget_usd is not None and (not math.isfinite(budget_usd) or budget_usd <= 0):
            raise ValueError(f"budget_usd must be a positive number of USD, got {budget_usd!r}")
        spend = self._setup.spend
        if spend is not None and self._setup.owns_spend:
            spend.begin_task(budget_usd)
        if approve is not None:
            approve = self._policy_wrapped(approve)
        messages = require_messages(new_messages, "Session.run")
        if not self._setup.vision:
            messages = fold_images(messages, self._setup.scratchpad_dir)
        self._ensure_meta_recorded()
        if self._engine is None:
            engine = None
            async for item in self._bootstrap(messages, signal):
                if isinstance(item, ContextEngine):
                    engine = item
                else:
                    yield item
            if engine is None:
                return
        async for msg in self._engine_or_fail().run(
            messages, approve=approve, signal=signal, thinking_level=thinking_level, max_turns=max_turns
        ):
            yield msg

    def steer(self, messages: list[OmniMessage]) -> bool:
        return self._engine.steer(messages) if self._engine is not None else False

    def unsteer(self, messages: list[OmniMessage]) -> bool:
        return self._engine.unsteer(messages) if self._engine is not None else False

    def skip_reconnect_wait(self) -> bool:
        return self._engine.skip_reconnect_wait() if self._engine is not None else False

    def compactability(self) -> str:
        if self._engine is not None:
            return self._engine.compactability()
        replay = self._setup.replay
        configured = self._setup.compaction is not None
        if replay is None:
            return compactability_of(configured, 0, False)
        return compactability_of(configured, replay.session_turns, replay.context_closed)

    async def compact(self, *, signal: AbortSignal | None = None) -> list[OmniMessage]:
        """Manual compaction between runs; a never-run session with nothing to compact is a
        strict no-op (no bootstrap, no records)."""
        if self._engine is None:
            if self.compactability() != "ok":
                return []
            self._ensure_meta_recorded()
            async for _ in self._bootstrap([], signal, emit=False):
                pass
            if self._engine is None:
                return []
        return await self._engine.compact(signal=signal)

    async def generate_title(self, first_prompt: str) -> str | None:
        """A short title for a conversation opening with `first_prompt`, from an out-of-band
        request on the side LLM (same model and credentials, no tools). Never recorded; None
        when the request fails or returns nothing."""
        from .interfaces import GenerativeModelParameters, LLMOutcome
        from .llm import title_model_config
        from .omni import user_text

        model = GenerativeModel(title_model_config(self._setup.model_config))
        request = user_text(TITLE_PROMPT.format(prompt=first_prompt.strip()[:2000]))
        parts: list[str] = []
        status = "failed"
        async for item in model.stream_generate(GenerativeModelParameters([request])):
            if isinstance(item, LLMOutcome):
                status = item.status
            elif item.type == "model_msg" and isinstance(item.payload, TextPayload):
                parts.append(item.payload.text)
        title = "".join(parts).strip().splitlines()[0].strip(" \"'#*") if "".join(parts).strip() else ""
        return title if status == "completed" and title else None

    def hold_lock(self, lock: SessionLock) -> None:
        """Keep the session's run lock (taken by the Agent) until `dispose`, or until this
        Session is garbage-collected undisposed."""
        self._lock = lock
        weakref.finalize(self, lock.release)

    def dispose(self) -> None:
        """Kill background commands and subagents, close MCP clients, close the Trace and
        release the session lock. Idempotent."""
        if self._disposed:
            return
        self._disposed = True
        try:
            self.environment.dispose()
        finally:
            try:
                self._trace.close()
            finally:
                if self._lock is not None:
                    self._lock.release()

    async def aclose(self) -> None:
        """`dispose()`, then wait for the MCP servers to shut down: use it from async code that
        is about to close its event loop (`asyncio.run`), so no server process outlives it."""
        self.dispose()
        await self.environment.aclose()

    # --- internals -----------------------------------------------------------------------------

    def _engine_or_fail(self) -> ContextEngine:
        if self._engine is None:  # pragma: no cover - guarded by run()
            raise RuntimeError("session engine is not ready")
        return self._engine

    @property
    def spend(self) -> SpendMeter | None:
        """This session's budgets and spend (docs/cost.md); shared with its subagents."""
        return self._setup.spend

    def _policy_wrapped(self, approve: ApproveFn) -> ApproveFn:
        from .environment import wrap_approve_with_command_policy

        return wrap_approve_with_command_policy(approve, self._setup.command_policy)

    def _ensure_meta_recorded(self) -> None:
        if not self._meta_recorded:
            self._meta_recorded = self._record(self._setup.meta)

    def _record(self, msg: OmniMessage) -> bool:
        """Best-effort write: any failure is kept by the writer (`recording_error`), never raised."""
        try:
            self._trace.write(msg)
        except Exception:  # the trace writer keeps its own failure (recording_error)
            return False
        return True

    def _new_model(self, tools: list[ToolDefinition], session_tokens: TokenCounts | None) -> GenerativeModel:
        config = self._setup.model_config
        config.tools = list(tools)
        config.tool_call_ids = self._tool_call_ids
        model = GenerativeModel(config)
        if session_tokens is not None:
            model.session_tokens = session_tokens
        return model

    def _first_model(self, tools: list[ToolDefinition]) -> GenerativeModel:
        replay = self._setup.replay
        model = self._new_model(tools, replay.session_tokens if replay else None)
        if replay is not None and replay.history:
            try:
                model.set_history(list(replay.history))
            except Exception as exc:
                raise ValueError(RESUME_INJECT_FAILED.format(detail=exc)) from None
        return model

    def _initial_state(self) -> EngineState:
        replay = self._setup.replay
        state = EngineState()
        if replay is not None:
            state = EngineState(
                carry_over=list(replay.carry_over),
                pending_summary=replay.pending_summary,
                session_turns=replay.session_turns,
                from_compaction=replay.context_closed,
                session_tokens=replay.session_tokens,
                last_request_total=replay.last_request_total,
                pending_trace_rotation=replay.context_closed,
            )
        state.carry_over = [*state.carry_over, *self._bootstrap_carry]
        self._bootstrap_carry = []
        return state

    async def _bootstrap(
        self, messages: list[OmniMessage], signal: AbortSignal | None, *, emit: bool = True
    ) -> AsyncIterator[OmniMessage | ContextEngine]:
        """First run only (docs/architecture.md "The session layer"): yields the bootstrap events, then the built engine."""
        servers = list(self._setup.mcp_server_names)
        begin = mcp_connect_begin(servers) if servers else None
        if begin is not None and emit:
            yield begin
        results: list[Any] = []
        if servers:
            results = list(await self.environment.connect_mcp(signal))
        tools: list[ToolDefinition] = []
        aborted = signal is not None and signal.aborted
        if not aborted:
            finished, listed = await unless_aborted(self.environment.list_tools(), signal)
            aborted = not finished
            if finished and listed is not None:
                tools = listed
        if aborted:
            end = mcp_connect_end("aborted", []) if servers else None
            stop = abort("user")
            for msg in (end, stop):
                if msg is not None and emit:
                    yield msg
            for msg in (*messages, begin, end, stop):
                if msg is not None:
                    self._record(msg)
            self._bootstrap_carry.extend(messages)
            return
        records: list[OmniMessage] = []
        if begin is not None:
            ok = all(_result_status(r) == "completed" for r in results)
            end = mcp_connect_end("completed" if ok else "failed", results)
            records = [begin, end]
            if emit:
                yield end
        tool_list = tool_list_ready([t.to_spec() for t in tools])
        if emit:
            yield tool_list
        model = self._first_model(tools)
        self._engine = ContextEngine(
            model,
            self.environment,
            trace=self._trace,
            max_turns=self._setup.max_turns,
            compaction=self._setup.compaction,
            create_llm=(lambda tokens: self._new_model(tools, tokens)) if self._setup.compaction else None,
            session_meta=self._setup.meta,
            tool_list=tool_list,
            bootstrap_records=records,
            fold_input_images=None if self._setup.vision else self._fold_async,
            background_notices=self._notices,
            initial_state=self._initial_state(),
        )
        yield self._engine

    async def _fold_async(self, messages: list[OmniMessage]) -> list[OmniMessage]:
        return fold_images(messages, self._setup.scratchpad_dir)


def _result_status(result: Any) -> str:
    status = result.get("status") if isinstance(result, dict) else getattr(result, "status", "failed")
    return str(status)


__all__ = ["Session", "SessionSetup"]
