"""input_subagent (docs/subagents.md "input_subagent and kill_subagent"): poll a managed subagent (empty prompt) or start a
follow-up round on it when idle, through the collect window. An abort ends only this call; the
session stays registered after a round so it can be continued."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, clamp_yield_ms, delta, missing_argument
from .run_subagent import approval_hint
from .subagent import (
    DEFAULT_SUBAGENT_POLL_YIELD_MS,
    DEFAULT_SUBAGENT_YIELD_MS,
    ManagedSubagentSession,
    SubagentSessionManager,
    SubagentStartError,
    collect_window,
    ensure_subagent_sessions,
    result_for_exit,
)

INPUT_SUBAGENT_NAME = "input_subagent"


def unknown_subagent(tool_name: str, subagent_id: str) -> str:
    return f"[{tool_name} error: unknown subagent_id {subagent_id} (the session may have finished and been cleared)]"


def no_manager(tool_name: str) -> str:
    return f"[{tool_name} unavailable: no subagent session manager configured]"


def find_subagent_session(
    tool_name: str, manager: SubagentSessionManager | None, args: dict[str, Any], ctx: ToolExecutionContext
) -> tuple[SubagentSessionManager, str, ManagedSubagentSession] | str:
    """(manager, subagent_id, session) for the call's `subagent_id`, or the failure text."""
    manager = manager or ensure_subagent_sessions(ctx.services)
    if manager is None:
        return no_manager(tool_name)
    subagent_id = args.get("subagent_id")
    if not isinstance(subagent_id, str) or not subagent_id:
        return missing_argument("subagent_id", tool_name)
    session = manager.get(subagent_id)
    if session is None:
        return unknown_subagent(tool_name, subagent_id)
    return manager, subagent_id, session


class InputSubagentTool(ToolBase):
    def __init__(self, definition: ToolDefinitionConfig, services: EnvironmentServices | None = None) -> None:
        super().__init__(definition, services)
        self.manager = ensure_subagent_sessions(services)

    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        found = find_subagent_session(self.name, self.manager, args, ctx)
        if isinstance(found, str):
            yield delta(ctx, found)
            yield ToolResult(stop_reason="failed")
            return
        _manager, subagent_id, session = found
        prompt = args.get("prompt")
        prompt = prompt if isinstance(prompt, str) else ""
        poll = not prompt.strip()
        default_ms = DEFAULT_SUBAGENT_POLL_YIELD_MS if poll else DEFAULT_SUBAGENT_YIELD_MS
        yield_ms = clamp_yield_ms(args.get("yield_time_ms"), default_ms, self.definition.timeout_ms)
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if not poll:
            if session.running:
                yield delta(
                    ctx,
                    f"[{self.name} error: subagent {subagent_id} is still running; "
                    "poll with an empty prompt to collect progress first]",
                )
                yield ToolResult(stop_reason="failed")
                return
            try:
                session.start_run(prompt)
            except SubagentStartError as exc:
                yield delta(ctx, f"[{self.name} error: {exc}]")
                yield ToolResult(stop_reason="failed")
                return
        async for message in collect_window(session, yield_ms, ctx):
            yield message
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if session.running:
            yield ToolResult(
                stop_reason="completed",
                note=f"[subagent still running with subagent_id {subagent_id}]" + approval_hint(session),
            )
            return
        result = result_for_exit(session.exit)
        idle = f"[subagent idle with subagent_id {subagent_id}; send a follow-up prompt to continue]"
        result.note = f"{result.note} {idle}" if result.note else idle
        yield result


def create_input_subagent_tool(
    definition: ToolDefinitionConfig, services: EnvironmentServices | None = None
) -> InputSubagentTool:
    return InputSubagentTool(definition, services)
