"""exec_command (docs/tools.md "exec_command"): run `bash -lc <cmd>` in a new process group, stream
its output for the yield window, and either finish (exit mapping), hand back a process_id for a
still-running command, or launch it in the background with a completion report."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..commands import CommandSession, CommandSessionManager
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .common import ToolBase, clamp_yield_ms, command_manager, delta, missing_argument, resolve_path

EXEC_COMMAND_NAME = "exec_command"
DEFAULT_YIELD_MS = 60000


def unavailable(tool_name: str) -> str:
    return f"[{tool_name} unavailable: no command session manager configured]"


def exit_result(session: CommandSession) -> ToolResult:
    note = session.exit_note()
    return ToolResult(stop_reason="failed" if session.exit_failed() else "completed", note=note)


class ExecCommandTool(ToolBase):
    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        manager: CommandSessionManager | None = command_manager(ctx)
        if manager is None:
            yield delta(ctx, unavailable(self.name))
            yield ToolResult(stop_reason="failed")
            return
        cmd = args.get("cmd")
        if not isinstance(cmd, str) or not cmd:
            yield delta(ctx, missing_argument("cmd", self.name))
            yield ToolResult(stop_reason="failed")
            return
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        workdir = args.get("workdir")
        cwd = (
            resolve_path(ctx.workspace_dir, workdir)
            if isinstance(workdir, str) and workdir
            else ctx.workspace_dir
        )
        try:
            session = manager.spawn(cmd, cwd)
        except Exception as exc:
            yield delta(ctx, f"[spawn error: {_spawn_message(exc)}]")
            yield ToolResult(stop_reason="failed")
            return
        if args.get("run_in_background") is True:
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
        yield_ms = clamp_yield_ms(args.get("yield_time_ms"), DEFAULT_YIELD_MS, self.definition.timeout_ms)
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


def create_exec_command_tool(
    definition: ToolDefinitionConfig, services: EnvironmentServices | None = None
) -> ExecCommandTool:
    return ExecCommandTool(definition, services)
