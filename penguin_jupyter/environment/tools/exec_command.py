"""exec_command (docs/tools.md "exec_command"): run `bash -lc <cmd>` in a new process group, stream
its output for the yield window, and either finish (exit mapping), hand back a process_id for a
still-running command, or launch it in the background with a completion report."""

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
    CardNote,
    Flag,
    MaybeText,
    Milliseconds,
    ShellCommand,
    Text,
    WorkingDirectory,
)
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, clamp_yield_ms, command_manager, delta

DEFAULT_YIELD_MS = 60000


class ExecCommandArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    cmd: Annotated[Text, Field(description="The shell command to run."), ShellCommand()]
    workdir: Annotated[
        MaybeText, Field(description="Working directory (default: the workspace)."), WorkingDirectory()
    ] = None
    yield_time_ms: Annotated[
        Milliseconds,
        Field(
            description=(
                "Milliseconds to wait for the command before returning. If it is still running then, "
                "you get its output so far and a process_id, and it keeps running (continue with "
                f"input_command). Default 60000; {YIELD_BOUNDS}."
            )
        ),
    ] = None
    run_in_background: Annotated[
        Flag,
        Field(
            description=(
                "Return a process_id at once without waiting; when the command exits, its result "
                "arrives as a user message by itself (no polling). Default false."
            )
        ),
        CardNote(" [background]"),
    ] = False


EXEC_COMMAND = ToolDeclaration(
    name="exec_command",
    description=(
        "Run a shell command (bash -lc) in the workspace without a TTY: programs, searches, installs and "
        "anything the file tools do not cover. Output streams back. Start long-running commands (servers, "
        "watchers, builds) in the foreground: once the yield window passes they keep running and you get a "
        "process_id for input_command / kill_command. Never put them in the background with `&`: when the "
        "foreground command exits its whole process group is cleaned up, killing them too. Set "
        "run_in_background for long jobs: their completion arrives as a message."
    ),
    arguments=ExecCommandArguments,
    permission="rw",
    timeout_ms=120000,
)


def unavailable(tool_name: str) -> str:
    return f"[{tool_name} unavailable: no command session manager configured]"


def exit_result(session: CommandSession) -> ToolResult:
    """The finished command's result (`[exit code: N]`…); a failed exit is raised as `ToolFailed`."""
    note = session.exit_note()
    if session.exit_failed():
        raise ToolFailed(note=note)
    return ToolResult(stop_reason="completed", note=note)


class ExecCommandTool(ToolBase[ExecCommandArguments]):
    declaration = EXEC_COMMAND

    async def run(self, arguments: ExecCommandArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        manager: CommandSessionManager | None = command_manager(ctx)
        if manager is None:
            raise ToolFailed(unavailable(self.name))
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        command = self.declaration.effect_of(arguments, ctx.workspace_dir).command
        cwd = command.cwd if command is not None else ctx.workspace_dir
        try:
            session = manager.spawn(arguments.cmd, cwd)
        except Exception as exc:
            raise ToolFailed(f"[spawn error: {_spawn_message(exc)}]") from None
        if arguments.run_in_background:
            process_id = manager.register(session)
            manager.arm_report(process_id, session)
            yield ToolResult(
                stop_reason="completed",
                note=(
                    f"[command running in background with process_id {process_id}; its completion will arrive "
                    "as a user message — no need to poll. Use input_command to interact or kill_command to stop it]"
                ),
            )
            return
        yield_ms = clamp_yield_ms(arguments.yield_time_ms, DEFAULT_YIELD_MS, self.definition.timeout_ms)
        registered = False
        try:
            async for text in session.collect(yield_ms, ctx.signal):
                yield delta(ctx, text)
            if ctx.signal is not None and ctx.signal.aborted:
                session.kill()
                yield ToolResult(stop_reason="aborted")
                return
            if not session.exited:
                process_id = manager.register(session)
                registered = True
                yield ToolResult(
                    stop_reason="completed",
                    note=f"[process running with process_id {process_id}; use input_command to send input or poll for output]",
                )
                return
            yield exit_result(session)
        finally:
            if not registered:
                session.kill()


def _spawn_message(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc)

