"""input_command (docs/tools.md "input_command"): write to (or Ctrl-C, or just poll) a running command
session, then collect its output for the yield window."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import Field

from ...omni import OmniMessage
from ..commands import CommandSession, CommandSessionManager
from ..tool_arguments import (
    DESCRIBE,
    YIELD_BOUNDS,
    CallDescription,
    Headline,
    MaybeText,
    Milliseconds,
    ShellInput,
    Text,
)
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, clamp_yield_ms, command_manager, delta
from .exec_command import exit_result, unavailable

INTERRUPT = "\u0003"
WRITE_YIELD_MS = 250
POLL_YIELD_MS = 120000


class InputCommandArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    process_id: Annotated[Text, Field(description="The process_id returned by exec_command."), Headline()]
    chars: Annotated[
        MaybeText,
        Field(description="Text to write to stdin; empty to just poll for output."),
        ShellInput(),
        Headline(),
    ] = None
    yield_time_ms: Annotated[
        Milliseconds,
        Field(
            description=(
                "Milliseconds to wait for new output or the exit before returning (it returns early "
                "on exit). Default 250 after writing characters and 120000 for an empty poll, so one "
                f"poll waits out most builds (pass less to just peek); {YIELD_BOUNDS}."
            )
        ),
    ] = None


INPUT_COMMAND = ToolDeclaration(
    name="input_command",
    description=(
        "Send characters to a running command's stdin (or poll it with empty chars) and return new "
        'output. Send "\\u0003" alone to interrupt it with Ctrl-C.'
    ),
    arguments=InputCommandArguments,
    permission="rw",
    timeout_ms=130000,
    saved_rule="never",  # what it types depends on the running program: "Always allow" only
)


def unknown_process(tool_name: str, process_id: str) -> str:
    return (
        f"[{tool_name} error: unknown process_id {process_id} (the session may have exited and been cleared)]"
    )


def find_command_session(
    tool_name: str, process_id: str, ctx: ToolExecutionContext
) -> tuple[CommandSessionManager, CommandSession]:
    """(manager, session) for the call's `process_id`; `ToolFailed` when there is none."""
    manager = command_manager(ctx)
    if manager is None:
        raise ToolFailed(unavailable(tool_name))
    session = manager.get(process_id)
    if session is None:
        raise ToolFailed(unknown_process(tool_name, process_id))
    return manager, session


class InputCommandTool(ToolBase[InputCommandArguments]):
    declaration = INPUT_COMMAND

    async def run(self, arguments: InputCommandArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        process_id = arguments.process_id
        manager, session = find_command_session(self.name, process_id, ctx)
        chars = arguments.chars or ""
        if chars == INTERRUPT:
            session.interrupt()
        elif INTERRUPT in chars:
            raise ToolFailed(
                f"[{self.name} error: chars mixes U+0003 (Ctrl-C) with other content; "
                'send "\\u0003" alone to interrupt]'
            )
        elif chars:
            session.write(chars)
        default = WRITE_YIELD_MS if chars else POLL_YIELD_MS
        yield_ms = clamp_yield_ms(arguments.yield_time_ms, default, self.definition.timeout_ms)
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

