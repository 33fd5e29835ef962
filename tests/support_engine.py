"""Engine-area test helpers: an Environment that really runs `exec_command` through bash in a
workspace directory (scenarios 1, 2, 4), and builders for common engine setups."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

from penguin_jupyter.interfaces import ToolDefinition, ToolExecutionRequest
from penguin_jupyter.omni import OmniMessage, tool_call_output


class ShellEnv:
    """Runs `{"cmd": …}` with `bash -c` in `workspace`; abort kills the process group and
    answers `[interrupted: tool aborted by user]` (aborted)."""

    def __init__(self, workspace: str) -> None:
        self.workspace = workspace
        self.requests: list[ToolExecutionRequest] = []

    async def list_tools(self) -> list[ToolDefinition]:
        return [ToolDefinition(name="exec_command", description="run a shell command")]

    async def execute_tool(self, request: ToolExecutionRequest) -> AsyncIterator[OmniMessage]:
        self.requests.append(request)
        call_id = request.tool_call.payload.tool_call_id
        cmd = json.loads(request.tool_call.payload.arguments)["cmd"]
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            cmd,
            cwd=self.workspace,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        done = asyncio.ensure_future(proc.communicate())
        waiters = {done}
        if request.signal is not None:
            waiters.add(asyncio.ensure_future(request.signal.wait()))
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        if not done.done():
            os.killpg(proc.pid, 9)
            await done
            yield tool_call_output("[interrupted: tool aborted by user]", call_id, "aborted")
            return
        out = done.result()[0].decode() or "[no output]"
        yield tool_call_output(out, call_id, "completed" if proc.returncode == 0 else "failed")

    def tool_permission(self, name: str) -> str | None:
        return "rw"

    def dispose(self) -> None:
        pass
