"""run_subagent (docs/subagents.md "Spawn rules", docs/subagents.md "Rounds"): validate the overrides, spawn a child through
the injected SubagentRunner, then either run a collect window (finish → the round's exit;
still running → register and hand back a subagent_id) or, with `run_in_background`, register
at once with a standing approval sink, a live message tap and per-round completion reports."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from ...interfaces import EnvironmentServices, SubagentRunner, ThinkingLevelName
from ...omni import OmniMessage
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, clamp_yield_ms, delta, json_text
from .subagent import (
    DEFAULT_SUBAGENT_YIELD_MS,
    SUBAGENT_THINKING_LEVELS,
    ManagedSubagentSession,
    SubagentSessionManager,
    collect_window,
    ensure_subagent_sessions,
    result_for_exit,
)

RUN_SUBAGENT_NAME = "run_subagent"

HALF_MODEL_REFERENCE = (
    "[run_subagent error: `model_id` and `provider` must be given together (a model reference is the pair), "
    "or both omitted to inherit the parent session's model]"
)


def approval_hint(session: ManagedSubagentSession) -> str:
    count = session.pending_approvals
    if count <= 0:
        return ""
    return f" [subagent is waiting for approval of {count} tool call(s); poll to review]"


def _thinking_level_error(raw: Any) -> str:
    if isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
        raw = int(raw)
    return (
        f"[run_subagent error: invalid `thinking_level` {json_text(raw)}; use one of "
        f"{' / '.join(SUBAGENT_THINKING_LEVELS)}, or omit it to inherit the parent session's level]"
    )


class SpawnArgs(TypedDict, total=False):
    """The keyword arguments of `SubagentRunner.spawn` a run_subagent call gives."""

    agent_id: str
    model_id: str
    provider: str
    thinking_level: ThinkingLevelName


def spawn_arguments(args: dict[str, Any]) -> SpawnArgs | str:
    """The runner's keyword arguments (only the keys given), or the failure text."""
    picked: SpawnArgs = {}
    agent_id, model_id, provider = args.get("agent_id"), args.get("model_id"), args.get("provider")
    if isinstance(agent_id, str):
        picked["agent_id"] = agent_id
    if isinstance(model_id, str):
        picked["model_id"] = model_id
    if isinstance(provider, str):
        picked["provider"] = provider
    if ("model_id" in picked) != ("provider" in picked):
        return HALF_MODEL_REFERENCE
    level = args.get("thinking_level")
    if level is not None:
        if not isinstance(level, str) or level not in SUBAGENT_THINKING_LEVELS:
            return _thinking_level_error(level)
        picked["thinking_level"] = cast(ThinkingLevelName, level)
    return picked


@dataclass(frozen=True)
class _Launch:
    runner: SubagentRunner
    manager: SubagentSessionManager
    prompt: str
    spawn_args: SpawnArgs


class RunSubagentTool(ToolBase):
    def __init__(self, definition: ToolDefinitionConfig, services: EnvironmentServices | None = None) -> None:
        super().__init__(definition, services)
        self.manager = ensure_subagent_sessions(services)

    def _precheck(self, args: dict[str, Any], ctx: ToolExecutionContext) -> _Launch | str:
        """What to launch, or the failure text (services first, then the arguments)."""
        services = self.services or ctx.services
        runner = services.subagent_runner if services is not None else None
        if runner is None:
            return "[run_subagent unavailable: no subagent runner configured]"
        manager = self.manager or ensure_subagent_sessions(ctx.services)
        if manager is None or manager.disposed:
            return "[run_subagent unavailable: no subagent session manager available]"
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return "[run_subagent error: missing required string argument `prompt`]"
        spawn_args = spawn_arguments(args)
        if isinstance(spawn_args, str):
            return spawn_args
        return _Launch(runner, manager, prompt, spawn_args)

    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        launch = self._precheck(args, ctx)
        if isinstance(launch, str):
            yield delta(ctx, launch)
            yield ToolResult(stop_reason="failed")
            return
        runner, manager, prompt = launch.runner, launch.manager, launch.prompt
        yield_ms = clamp_yield_ms(
            args.get("yield_time_ms"), DEFAULT_SUBAGENT_YIELD_MS, self.definition.timeout_ms
        )
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if not manager.make_room():
            yield delta(
                ctx, "[run_subagent error: too many background subagents; poll or finish existing ones first]"
            )
            yield ToolResult(stop_reason="failed")
            return
        try:
            session = ManagedSubagentSession(await runner.spawn(**launch.spawn_args))
        except Exception as exc:
            yield delta(ctx, f"[run_subagent error: {exc}]")
            yield ToolResult(stop_reason="failed")
            return
        manager.adopt(session)
        if args.get("run_in_background") is True:
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
            yield delta(ctx, f"[run_subagent error: {exc}]")
            yield ToolResult(stop_reason="failed")
            return
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


def create_run_subagent_tool(
    definition: ToolDefinitionConfig, services: EnvironmentServices | None = None
) -> RunSubagentTool:
    return RunSubagentTool(definition, services)
