"""input_command (docs/tools.md "input_command"): write to (or Ctrl-C, or just poll) a running command
session, then collect its output for the yield window."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..commands import CommandSession, CommandSessionManager
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, clamp_yield_ms, command_manager, delta, missing_argument
from .exec_command import exit_result, unavailable

INPUT_COMMAND_NAME = "input_command"
INTERRUPT = "\u0003"
WRITE_YIELD_MS = 250
POLL_YIELD_MS = 120000


def unknown_process(tool_name: str, process_id: str) -> str:
    return (
        f"[{tool_name} error: unknown process_id {process_id} (the session may have exited and been cleared)]"
    )


def find_command_session(
    tool_name: str, args: dict[str, Any], ctx: ToolExecutionContext
) -> tuple[CommandSessionManager, str, CommandSession] | str:
    """(manager, process_id, session) for the call's `process_id`, or the failure text."""
    manager = command_manager(ctx)
    if manager is None:
        return unavailable(tool_name)
    process_id = args.get("process_id")
    if not isinstance(process_id, str) or not process_id:
        return missing_argument("process_id", tool_name)
    session = manager.get(process_id)
    if session is None:
        return unknown_process(tool_name, process_id)
    return manager, process_id, session


class InputCommandTool(ToolBase):
    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        found = find_command_session(self.name, args, ctx)
        if isinstance(found, str):
            yield delta(ctx, found)
            yield ToolResult(stop_reason="failed")
            return
        manager, process_id, session = found
        chars = args.get("chars")
        chars = chars if isinstance(chars, str) else ""
        if chars == INTERRUPT:
            session.interrupt()
        elif INTERRUPT in chars:
            yield delta(
                ctx,
                f"[{self.name} error: chars mixes U+0003 (Ctrl-C) with other content; "
                'send "\\u0003" alone to interrupt]',
            )
            yield ToolResult(stop_reason="failed")
            return
        elif chars:
            session.write(chars)
        default = WRITE_YIELD_MS if chars else POLL_YIELD_MS
        yield_ms = clamp_yield_ms(args.get("yield_time_ms"), default, self.definition.timeout_ms)
        async for text in session.collect(yield_ms, ctx.signal):
            yield delta(ctx, text)
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if not session.exited:
            yield ToolResult(
                stop_reason="completed", note=f"[process still running with process_id {process_id}]"
            )
            return
        manager.remove(process_id)
        session.disarm_report()
        yield exit_result(session)


def create_input_command_tool(
    definition: ToolDefinitionConfig, services: EnvironmentServices | None = None
) -> InputCommandTool:
    return InputCommandTool(definition, services)
