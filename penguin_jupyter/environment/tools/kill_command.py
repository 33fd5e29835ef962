"""kill_command (docs/tools.md "kill_command"): disarm the completion report, hand over pending output,
kill the process group and drop the session."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import Field

from ...omni import OmniMessage
from ..tool_arguments import DESCRIBE, CallDescription, Headline, Text
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolResult
from .common import ToolBase, delta
from .input_command import find_command_session


class KillCommandArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    process_id: Annotated[Text, Field(description="The process_id to stop."), Headline()]


KILL_COMMAND = ToolDeclaration(
    name="kill_command",
    description="Stop a running command session (its whole process group) and return its pending output.",
    arguments=KillCommandArguments,
    permission="rw",
    timeout_ms=30000,
)


class KillCommandTool(ToolBase[KillCommandArguments]):
    declaration = KILL_COMMAND

    async def run(self, arguments: KillCommandArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        process_id = arguments.process_id
        manager, session = find_command_session(self.name, process_id, ctx)
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

