"""exec_command (docs/tools.md "exec_command"): run `bash -lc <cmd>` in a new process group, stream
its output for the yield window, and either finish (exit mapping), hand back a process_id for a
still-running command, or launch it in the background with a completion report."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from ...omni import OmniMessage
from ..commands import CommandSession, CommandSessionManager
from ..sandbox import BadHost, CommandCall, SandboxPlan, parse_hosts
from ..tool_arguments import (
    DESCRIBE,
    YIELD_BOUNDS,
    CallDescription,
    CardNote,
    Flag,
    MaybeText,
    Milliseconds,
    OnBad,
    ShellCommand,
    Text,
    Unusable,
    WorkingDirectory,
)
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, clamp_yield_ms, command_manager, delta

DEFAULT_YIELD_MS = 60000


def _host_list(value: Any) -> tuple[str, ...]:
    """`network_hosts`: a list of host names (absent or null: none)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise Unusable
    try:
        return tuple(rule.text() for rule in parse_hosts(value))
    except BadHost as exc:
        raise Unusable(message=f"Invalid \"network_hosts\" for {{tool}}: {exc}.") from None


HostList = Annotated[
    tuple[str, ...],
    BeforeValidator(_host_list),
    OnBad('Invalid "network_hosts" for {tool}: expected a list of host names, got {got}.'),
]


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
    unsandboxed: Annotated[
        Flag,
        Field(
            description=(
                "Run outside the sandbox, with the user's full access to files and network. Only when "
                "the sandbox blocks what the command must do (writing outside the workspace and /tmp, a "
                "program that cannot use an HTTP proxy); the user is asked. Default false."
            )
        ),
    ] = False
    network_hosts: Annotated[
        HostList,
        Field(
            description=(
                'Hosts the command must reach, e.g. ["pypi.org", "files.pythonhosted.org"] (port 80 and 443; '
                '"host:port" for another). In the sandbox only these and the project\'s allowed hosts are '
                "reachable, through an HTTP proxy (HTTPS_PROXY is set); the user is asked for hosts not "
                "already allowed."
            ),
        ),
    ] = ()


EXEC_COMMAND = ToolDeclaration(
    name="exec_command",
    description=(
        "Run a shell command (bash -lc) in the workspace without a TTY: programs, searches, installs and "
        "anything the file tools do not cover. Output streams back. Start long-running commands (servers, "
        "watchers, builds) in the foreground: once the yield window passes they keep running and you get a "
        "process_id for input_command / kill_command. Never put them in the background with `&`: when the "
        "foreground command exits its whole process group is cleaned up, killing them too. Set "
        "run_in_background for long jobs: their completion arrives as a message. When the output ends "
        "with [sandboxed: …], the command ran in a sandbox: it could write only in the workspace and /tmp "
        "and reach only the hosts named there."
    ),
    arguments=ExecCommandArguments,
    permission="rw",
    timeout_ms=120000,
)


def unavailable(tool_name: str) -> str:
    return f"[{tool_name} unavailable: no command session manager configured]"


def exit_result(session: CommandSession, plan: SandboxPlan | None = None) -> ToolResult:
    """The finished command's result (`[exit code: N]`, the sandbox's notes); a failed exit is
    raised as `ToolFailed`."""
    note = joined_notes(session.exit_note(), *session.sandbox_notes, plan.note() if plan is not None else None)
    if session.exit_failed():
        raise ToolFailed(note=note)
    return ToolResult(stop_reason="completed", note=note)


def joined_notes(*notes: str | None) -> str | None:
    present = [note for note in notes if note]
    return "\n".join(present) if present else None


def sandbox_plan(manager: CommandSessionManager, ctx: ToolExecutionContext, arguments: ExecCommandArguments) -> SandboxPlan:
    """How this approved call runs: the Environment's sandbox reads the approval layer's grant."""
    if manager.sandbox is None:
        return SandboxPlan(False)
    call = CommandCall(ctx.tool_call_id, arguments.cmd, arguments.unsandboxed, arguments.network_hosts)
    return manager.sandbox.plan(call)


class ExecCommandTool(ToolBase[ExecCommandArguments]):
    declaration = EXEC_COMMAND

    async def run(self, arguments: ExecCommandArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        manager: CommandSessionManager | None = command_manager(ctx)
        if manager is None:
            raise ToolFailed(unavailable(self.name))
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        command = self.declaration.effect_of(arguments, ctx.workspace_dir, analyse_command=_not_analysed).command
        cwd = command.cwd if command is not None else ctx.workspace_dir
        plan = sandbox_plan(manager, ctx, arguments)
        if plan.refusal is not None:
            raise ToolFailed(plan.refusal)
        try:
            session = manager.spawn(arguments.cmd, cwd, plan)
        except Exception as exc:
            raise ToolFailed(f"[spawn error: {_spawn_message(exc)}]") from None
        if arguments.run_in_background:
            process_id = manager.register(session)
            manager.arm_report(process_id, session)
            yield ToolResult(
                stop_reason="completed",
                note=joined_notes(
                    f"[command running in background with process_id {process_id}; its completion will arrive "
                    "as a user message — no need to poll. Use input_command to interact or kill_command to stop it]",
                    plan.note(),
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
                    note=joined_notes(
                        f"[process running with process_id {process_id}; use input_command to send input or poll for output]",
                        plan.note(),
                    ),
                )
                return
            yield exit_result(session, plan)
        finally:
            if not registered:
                session.kill()


def _not_analysed(_cmd: str, _cwd: str, _workspace: str) -> None:
    """The tool needs only where the command runs, not what the analysis says it touches."""
    return None


def _spawn_message(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc)

