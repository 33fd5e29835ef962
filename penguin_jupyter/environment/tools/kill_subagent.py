"""kill_subagent (docs/subagents.md "input_subagent and kill_subagent"): disarm the completion report, hand over the unread
text, abort the child (pending approvals denied) and drop it from the registry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, delta
from .input_subagent import find_subagent_session
from .subagent import ensure_subagent_sessions

KILL_SUBAGENT_NAME = "kill_subagent"


class KillSubagentTool(ToolBase):
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
        manager, subagent_id, session = found
        session.disarm_settle_watcher()
        pending = session.drain_text()
        if pending:
            yield delta(ctx, pending)
        was_running = session.running
        manager.kill(subagent_id)
        if was_running:
            note = f"[subagent {subagent_id} aborted and removed; its own trace keeps the work done so far]"
        else:
            note = f"[subagent {subagent_id} was idle; session removed]"
        yield ToolResult(stop_reason="completed", note=note)


def create_kill_subagent_tool(
    definition: ToolDefinitionConfig, services: EnvironmentServices | None = None
) -> KillSubagentTool:
    return KillSubagentTool(definition, services)
