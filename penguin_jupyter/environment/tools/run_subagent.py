"""run_subagent (docs/subagents.md "Spawn rules", docs/subagents.md "Rounds"): validate the overrides, spawn a child through
the injected SubagentRunner, then either run a collect window (finish → the round's exit;
still running → register and hand back a subagent_id) or, with `run_in_background`, register
at once with a standing approval sink, a live message tap and per-round completion reports."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from pydantic import BeforeValidator, Field, model_validator

from ...interfaces import (
    SUBAGENT_THINKING_LEVELS,
    EnvironmentServices,
    SubagentRunner,
    SubagentThinkingLevel,
    ThinkingLevelName,
)
from ...omni import OmniMessage
from ..tool_arguments import (
    DESCRIBE,
    YIELD_BOUNDS,
    CallDescription,
    Flag,
    Headline,
    MaybeText,
    Milliseconds,
    NonBlankText,
    OnBad,
    ShownInFull,
    Unusable,
)
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, clamp_yield_ms
from .subagent import (
    DEFAULT_SUBAGENT_YIELD_MS,
    ManagedSubagentSession,
    SubagentSessionManager,
    collect_window,
    ensure_subagent_sessions,
    result_for_exit,
)

HALF_MODEL_REFERENCE = (
    "[run_subagent error: `model_id` and `provider` must be given together (a model reference is the pair), "
    "or both omitted to inherit the parent session's model]"
)


def approval_hint(session: ManagedSubagentSession) -> str:
    count = session.pending_approvals
    if count <= 0:
        return ""
    return f" [subagent is waiting for approval of {count} tool call(s); poll to review]"


def _thinking_level(raw: Any) -> Any:
    if raw is None or (isinstance(raw, str) and raw in SUBAGENT_THINKING_LEVELS):
        return raw
    if isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
        raise Unusable(shown=int(raw))
    raise Unusable


class RunSubagentArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    prompt: Annotated[
        NonBlankText,
        Field(
            description=(
                "The complete task: all the context the subagent needs, and exactly what output you "
                "expect back."
            )
        ),
        OnBad("[run_subagent error: missing required string argument `prompt`]"),
        ShownInFull(),
        Headline(),
    ]
    agent_id: Annotated[MaybeText, Field(description="Which agent to run (default: this agent).")] = None
    provider: Annotated[
        MaybeText, Field(description="Provider of the subagent's model; give it together with model_id.")
    ] = None
    model_id: Annotated[
        MaybeText, Field(description="The subagent's model (default: this session's model); needs provider.")
    ] = None
    thinking_level: Annotated[
        SubagentThinkingLevel | None,
        Field(description="The subagent's thinking level (default: this session's level)."),
        BeforeValidator(_thinking_level),
        OnBad(
            "[run_subagent error: invalid `thinking_level` {got}; use one of "
            f"{' / '.join(SUBAGENT_THINKING_LEVELS)}, or omit it to inherit the parent session's level]"
        ),
    ] = None
    yield_time_ms: Annotated[
        Milliseconds,
        Field(
            description=(
                "Milliseconds to wait for the subagent before returning. If it is still working then, "
                "you get its output so far and a subagent_id, and it keeps working (continue with "
                f"input_subagent). Default 300000; {YIELD_BOUNDS}."
            )
        ),
    ] = None
    run_in_background: Annotated[
        Flag,
        Field(
            description=(
                "Return a subagent_id at once without waiting; its answer arrives as a user message "
                "by itself when it finishes (no polling). Default false."
            )
        ),
    ] = False

    @model_validator(mode="after")
    def _model_reference_is_a_pair(self) -> RunSubagentArguments:
        if (self.model_id is None) != (self.provider is None):
            raise ValueError(HALF_MODEL_REFERENCE)
        return self


RUN_SUBAGENT = ToolDeclaration(
    name="run_subagent",
    description=(
        "Delegate a self-contained task to a subagent that works on its own in the same workspace and "
        "returns its final answer. Start the prompt by naming yourself, the caller agent, with your own "
        'agent id from the Environment section (e.g. "Caller agent: default_agent"): the subagent cannot '
        "otherwise tell who called it."
    ),
    arguments=RunSubagentArguments,
    permission="rw",
    timeout_ms=600000,
)


class SpawnArgs(TypedDict, total=False):
    """The keyword arguments of `SubagentRunner.spawn` a run_subagent call gives."""

    agent_id: str
    model_id: str
    provider: str
    thinking_level: ThinkingLevelName


def spawn_arguments(arguments: RunSubagentArguments) -> SpawnArgs:
    """The runner's keyword arguments (only the keys given)."""
    picked: SpawnArgs = {}
    if arguments.agent_id is not None:
        picked["agent_id"] = arguments.agent_id
    if arguments.model_id is not None and arguments.provider is not None:
        picked["model_id"] = arguments.model_id
        picked["provider"] = arguments.provider
    if arguments.thinking_level is not None:
        picked["thinking_level"] = arguments.thinking_level
    return picked


@dataclass(frozen=True)
class _Launch:
    runner: SubagentRunner
    manager: SubagentSessionManager
    prompt: str
    spawn_args: SpawnArgs


class RunSubagentTool(ToolBase[RunSubagentArguments]):
    declaration = RUN_SUBAGENT

    def __init__(self, definition: ToolDefinitionConfig, services: EnvironmentServices | None = None) -> None:
        super().__init__(definition, services)
        self.manager = ensure_subagent_sessions(services)

    def _precheck(self, arguments: RunSubagentArguments, ctx: ToolExecutionContext) -> _Launch:
        """What to launch; `ToolFailed` when nothing can be."""
        services = self.services or ctx.services
        runner = services.subagent_runner if services is not None else None
        if runner is None:
            raise ToolFailed("[run_subagent unavailable: no subagent runner configured]")
        manager = self.manager or ensure_subagent_sessions(ctx.services)
        if manager is None or manager.disposed:
            raise ToolFailed("[run_subagent unavailable: no subagent session manager available]")
        return _Launch(runner, manager, arguments.prompt, spawn_arguments(arguments))

    async def run(self, arguments: RunSubagentArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        launch = self._precheck(arguments, ctx)
        runner, manager, prompt = launch.runner, launch.manager, launch.prompt
        yield_ms = clamp_yield_ms(arguments.yield_time_ms, DEFAULT_SUBAGENT_YIELD_MS, self.definition.timeout_ms)
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if not manager.make_room():
            raise ToolFailed("[run_subagent error: too many background subagents; poll or finish existing ones first]")
        try:
            session = ManagedSubagentSession(await runner.spawn(**launch.spawn_args))
        except Exception as exc:
            raise ToolFailed(f"[run_subagent error: {exc}]") from None
        manager.adopt(session)
        if arguments.run_in_background:
            async for item in self._launch_in_background(session, manager, prompt, ctx):
                yield item
            return
        async for item in self._run_in_window(session, manager, prompt, yield_ms, ctx):
            yield item

    async def _launch_in_background(
        self,
        session: ManagedSubagentSession,
        manager: SubagentSessionManager,
        prompt: str,
        ctx: ToolExecutionContext,
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        try:
            subagent_id = manager.register(session)
        except Exception as exc:
            session.kill()
            raise ToolFailed(f"[run_subagent error: {exc}]") from None
        manager.arm_report(session, subagent_id, prompt)
        if ctx.approve is not None:
            session.set_standing_approver(ctx.approve)
        session.set_message_tap(manager.forward)
        meta = session.take_meta()
        if meta is not None:
            yield meta
        session.start_run(prompt)
        yield ToolResult(
            stop_reason="completed",
            note=(
                f"[subagent running in background with subagent_id {subagent_id}; its completion will arrive "
                "as a user message — no need to poll. Use input_subagent to interact or kill_subagent to stop it]"
            ),
        )

    async def _run_in_window(
        self,
        session: ManagedSubagentSession,
        manager: SubagentSessionManager,
        prompt: str,
        yield_ms: int,
        ctx: ToolExecutionContext,
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        registered = False
        try:
            session.start_run(prompt)
            async for message in collect_window(session, yield_ms, ctx):
                yield message
            if ctx.signal is not None and ctx.signal.aborted:
                yield ToolResult(stop_reason="aborted")
                return
            if session.running:
                subagent_id = manager.register(session)
                registered = True
                yield ToolResult(
                    stop_reason="completed",
                    note=(
                        f"[subagent running with subagent_id {subagent_id}; use input_subagent to poll for "
                        "progress or send a follow-up prompt]" + approval_hint(session)
                    ),
                )
                return
            yield result_for_exit(session.exit)
        finally:
            if not registered:
                session.kill()

