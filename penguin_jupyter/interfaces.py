"""The contracts of docs/architecture.md "The three interfaces", in Python: the three seams the context engine talks through.

Owns the types — LLMInterface, EnvironmentInterface, the Human boundary's RunOptions
and ApproveFn, the subagent and vision services, and MCP server entries — and the two ways
every layer waits on the AbortSignal they carry (`unless_aborted`, `SignalWatch`).
Implementations live in `llm/`, `environment/` and the session layer. Two iron rules hold for every
implementation: never raise into the engine, and stream start → delta → stop followed
immediately by the complete message.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, get_args, runtime_checkable

from agenthub.abort_signal import AbortSignal

from .omni import OmniMessage, StopReason
from .omni.models import ApprovalDecisionValue

ThinkingLevelName = Literal["none", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[str, ...] = get_args(ThinkingLevelName)
# The levels a subagent may be asked to think at (the session's own "none" is not one of them).
SubagentThinkingLevel = Literal["low", "medium", "high", "xhigh", "max"]
SUBAGENT_THINKING_LEVELS: tuple[str, ...] = get_args(SubagentThinkingLevel)
# What an ApproveFn answers: the value an approval_decision message records.
ApprovalDecision = ApprovalDecisionValue
APPROVAL_DECISIONS: tuple[str, ...] = get_args(ApprovalDecision)
ApproveFn = Callable[[OmniMessage], Awaitable[ApprovalDecision]]
Permission = Literal["r", "rw"]

__all__ = [
    "APPROVAL_DECISIONS",
    "SUBAGENT_THINKING_LEVELS",
    "THINKING_LEVELS",
    "AbortSignal",
    "ApprovalDecision",
    "ApproveFn",
    "CommandSessions",
    "EnvironmentInterface",
    "EnvironmentServices",
    "GenerativeModelParameters",
    "LLMInterface",
    "LLMOutcome",
    "MCPServerConfig",
    "Permission",
    "RunOptions",
    "SignalWatch",
    "SubagentHandle",
    "SubagentRunner",
    "SubagentSessions",
    "SubagentThinkingLevel",
    "ThinkingLevelName",
    "ToolDefinition",
    "ToolExecutionRequest",
    "VisionDescriberService",
    "unless_aborted",
]

T = TypeVar("T")


# --- Signals -------------------------------------------------------------------------------------


async def unless_aborted(
    awaitable: Awaitable[T],
    signal: AbortSignal | None,
    *,
    timeout_s: float | None = None,
    grace_s: float = 0.0,
) -> tuple[bool, T | None]:
    """Await `awaitable` unless `signal` aborts first (or `timeout_s` passes): `(True, result)`
    when it finished, `(False, None)` when it did not — it is then cancelled, after `grace_s`
    more seconds to finish by itself once the signal fired. An already aborted signal wins at
    once. Exceptions of the awaitable propagate; cancelling the caller cancels it too."""
    task = asyncio.ensure_future(awaitable)
    watcher: asyncio.Future[None] | None = None
    try:
        if signal is None and timeout_s is None:
            return True, await task
        if signal is not None and signal.aborted and grace_s <= 0:
            return False, None
        if signal is None or not signal.aborted:
            waiters: set[asyncio.Future[Any]] = {task}
            if signal is not None:
                watcher = asyncio.ensure_future(signal.wait())
                waiters.add(watcher)
            await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if not task.done() and grace_s > 0 and signal is not None and signal.aborted:
            await asyncio.wait({task}, timeout=grace_s)
    finally:
        for pending in (watcher, task):
            if pending is not None and not pending.done():
                pending.cancel()
                with suppress(asyncio.CancelledError, Exception):
                    await pending
    if task.cancelled():
        return False, None
    return True, task.result()


class SignalWatch:
    """Calls `on_abort` once when `signal` fires (no-op without a signal) until `cancel()` or
    `close()` (which also waits for the watch to settle)."""

    def __init__(self, signal: AbortSignal | None, on_abort: Callable[[], None]) -> None:
        self._task: asyncio.Future[None] | None = None
        if signal is not None:
            self._task = asyncio.ensure_future(signal.wait())
            self._task.add_done_callback(lambda t: None if t.cancelled() else on_abort())

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await self._task


# --- LLM side -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LLMOutcome:
    """The terminal state of one `stream_generate`; always the stream's last item.

    `permanent` marks a deterministic client-side rejection that retrying cannot fix.
    """

    status: StopReason
    message: str | None = None
    permanent: bool = False


@dataclass(frozen=True)
class BudgetStop(LLMOutcome):
    """A request never sent because it could cross a spending budget (`message` says which):
    the engine ends the task cleanly instead of retrying (docs/cost.md)."""

    status: StopReason = "failed"
    permanent: bool = True


@dataclass
class GenerativeModelParameters:
    new_messages: list[OmniMessage]
    signal: AbortSignal | None = None
    thinking_level: ThinkingLevelName | None = None


@runtime_checkable
class LLMInterface(Protocol):
    def stream_generate(
        self, parameters: GenerativeModelParameters
    ) -> AsyncIterator[OmniMessage | LLMOutcome]:
        """Yield partial fragments, complete messages and `token_usage` events, then exactly one
        `LLMOutcome` as the last item. Never raises; never retries internally."""
        ...


# --- Environment side ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolDefinition:
    """What the model is told about a tool (the `tool_list_ready` entry shape)."""

    name: str
    description: str
    parameters: dict[str, Any] | None = None

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.parameters is not None:
            spec["parameters"] = self.parameters
        return spec


@dataclass
class ToolExecutionRequest:
    tool_call: OmniMessage
    signal: AbortSignal | None = None
    approve: ApproveFn | None = None


@runtime_checkable
class EnvironmentInterface(Protocol):
    async def list_tools(self) -> list[ToolDefinition]: ...

    def execute_tool(self, request: ToolExecutionRequest) -> AsyncIterator[OmniMessage]:
        """Partials, then exactly one complete `tool_call_output`; origin-tagged nested
        messages pass through unchanged. Never raises."""
        ...

    def tool_permission(self, name: str) -> Permission | None: ...

    def dispose(self) -> None:
        """Release runtime resources; idempotent."""
        ...


# --- Human boundary ------------------------------------------------------------------------------


@dataclass
class RunOptions:
    signal: AbortSignal | None = None
    approve: ApproveFn | None = None
    thinking_level: ThinkingLevelName | None = None


# --- Subagents, vision, MCP -----------------------------------------------------------------------


class SubagentHandle(Protocol):
    session_id: str

    def run(
        self, prompt: str, *, signal: AbortSignal | None = None, approve: ApproveFn | None = None
    ) -> AsyncIterator[OmniMessage]: ...

    def dispose(self) -> None: ...


class SubagentRunner(Protocol):
    async def spawn(
        self,
        *,
        agent_id: str | None = None,
        provider: str | None = None,
        model_id: str | None = None,
        thinking_level: ThinkingLevelName | None = None,
    ) -> SubagentHandle:
        """Precheck errors (depth limit, unknown agent) are raised; the Environment turns them
        into a failed output."""
        ...


@dataclass
class VisionDescriberService:
    """`model_id` is None when the project has no vision model; `create_llm` builds a one-shot
    LLM for it (no tools, no system prompt)."""

    model_id: str | None = None
    create_llm: Callable[[], LLMInterface] | None = None


@runtime_checkable
class CommandSessions(Protocol):
    """An Environment's running commands (`environment.commands.CommandSessionManager` is the
    implementation): what a host may do with them from outside a tool call."""

    def ids(self) -> list[str]: ...

    def kill_all(self) -> None:
        """Kill every running command (its whole process group); the registry stays usable."""
        ...

    def dispose(self) -> None: ...


@runtime_checkable
class SubagentSessions(Protocol):
    """An Environment's background subagents (`environment.tools.subagent.SubagentSessionManager`
    is the implementation): what a host may do with them from outside a tool call."""

    def ids(self) -> list[str]: ...

    def set_message_listener(self, listener: Callable[[OmniMessage], None] | None) -> None:
        """Receive every origin-tagged message of every background subagent (None to stop)."""
        ...

    def dispose(self) -> None: ...


@dataclass
class EnvironmentServices:
    """Runtime services tools reach through `ToolExecutionContext.services`. The Environment
    fills `command_sessions` and `subagent_sessions` (the latter on first use) and puts its
    own entries in `extra` (see `environment.environment` for the keys)."""

    subagent_runner: SubagentRunner | None = None
    vision_describer: VisionDescriberService | None = None
    command_sessions: CommandSessions | None = None
    subagent_sessions: SubagentSessions | None = None
    extra: dict[str, object] = field(default_factory=dict)


@dataclass
class MCPServerConfig:
    """One `tools.mcpServers` entry: `config` holds the transport fields as written."""

    name: str
    config: dict[str, Any] = field(default_factory=dict)
