"""kill_subagent (core-behavior.md §5.5): disarm the completion report, hand over the unread
text, abort the child (pending approvals denied) and drop it from the registry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..types import ToolExecutionContext, ToolResult
from .common import ToolBase, delta, missing_argument
from .input_subagent import no_manager, unknown_subagent
from .subagent import ensure_subagent_sessions

KILL_SUBAGENT_NAME = "kill_subagent"


class KillSubagentTool(ToolBase):
    def __init__(self, definition: Any, services: EnvironmentServices | None = None) -> None:
        super().__init__(definition, services)
        self.manager = ensure_subagent_sessions(services)

    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        manager = self.manager or ensure_subagent_sessions(ctx.services)
        if manager is None:
            yield delta(ctx, no_manager(self.name))
            yield ToolResult(stop_reason="failed")
            return
        subagent_id = args.get("subagent_id")
        if not isinstance(subagent_id, str) or not subagent_id:
            yield delta(ctx, missing_argument("subagent_id", self.name))
            yield ToolResult(stop_reason="failed")
            return
        session = manager.get(subagent_id)
        if session is None:
            yield delta(ctx, unknown_subagent(self.name, subagent_id))
            yield ToolResult(stop_reason="failed")
            return
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


def create_kill_subagent_tool(definition, services=None) -> KillSubagentTool:  # type: ignore[no-untyped-def]
    return KillSubagentTool(definition, services)
