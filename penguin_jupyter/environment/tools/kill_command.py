"""kill_command (docs/tools.md "kill_command"): disarm the completion report, hand over pending output,
kill the process group and drop the session."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, delta
from .input_command import find_command_session

KILL_COMMAND_NAME = "kill_command"


class KillCommandTool(ToolBase):
    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        found = find_command_session(self.name, args, ctx)
        if isinstance(found, str):
            yield delta(ctx, found)
            yield ToolResult(stop_reason="failed")
            return
        manager, process_id, session = found
        session.disarm_report()
        pending = session.take_output()
        if pending:
            yield delta(ctx, pending)
        was_running = not session.exited
        session.kill()
        manager.remove(process_id)
        if was_running:
            note = (
                f"[process {process_id} killed (SIGTERM to the process group, SIGKILL after a grace period)]"
            )
        else:
            note = (
                f"[process {process_id} had already exited ({session.exit_description()}); session removed]"
            )
        yield ToolResult(stop_reason="completed", note=note)


def create_kill_command_tool(
    definition: ToolDefinitionConfig, services: EnvironmentServices | None = None
) -> KillCommandTool:
    return KillCommandTool(definition, services)
