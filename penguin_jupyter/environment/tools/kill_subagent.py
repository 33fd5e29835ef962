"""kill_subagent (docs/subagents.md "input_subagent and kill_subagent"): disarm the completion report, hand over the unread
text, abort the child (pending approvals denied) and drop it from the registry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import Field

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..tool_arguments import DESCRIBE, CallDescription, Headline, Text
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, delta
from .input_subagent import find_subagent_session
from .subagent import ensure_subagent_sessions


class KillSubagentArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    subagent_id: Annotated[Text, Field(description="The subagent_id to stop."), Headline()]


KILL_SUBAGENT = ToolDeclaration(
    name="kill_subagent",
    description=(
        "Stop a background subagent: its run is aborted (its pending approvals are denied), any answer "
        "text not yet delivered is returned, and it is removed, freeing its slot. Also removes an idle "
        "subagent."
    ),
    arguments=KillSubagentArguments,
    permission="rw",
    timeout_ms=30000,
)


class KillSubagentTool(ToolBase[KillSubagentArguments]):
    declaration = KILL_SUBAGENT

    def __init__(self, definition: ToolDefinitionConfig, services: EnvironmentServices | None = None) -> None:
        super().__init__(definition, services)
        self.manager = ensure_subagent_sessions(services)

    async def run(self, arguments: KillSubagentArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        subagent_id = arguments.subagent_id
        manager, session = find_subagent_session(self.name, self.manager, subagent_id, ctx)
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

