"""An Environment whose commands run in the sandbox and one `exec_command` call's output: what
the environment-level sandbox tests share (tests/environment/test_sandbox.py,
test_sandbox_warm.py; their `home` fixture, a home folder with a credential, is
tests/environment/conftest.py's)."""

from __future__ import annotations

import json
from pathlib import Path

from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig
from penguin_jupyter.environment.sandbox import SandboxConfig, SandboxGrants
from penguin_jupyter.interfaces import EnvironmentServices, ToolExecutionRequest
from penguin_jupyter.omni import tool_call

SECRET = "SANDBOX-TEST-SECRET-4242"


def make_env(workspace: Path | str, *, sandboxed: bool = True, **config: object) -> Environment:
    """An Environment whose commands run in the sandbox (a ledger without grants: fail closed,
    sandboxed) or, with `sandboxed=False`, as they always did."""
    sandbox = SandboxConfig(grants=SandboxGrants(), **config) if sandboxed else SandboxConfig()  # type: ignore[arg-type]
    services = EnvironmentServices(extra={"sandbox": sandbox})
    return Environment(EnvironmentConfig(workspace_dir=str(workspace), tool_config=ToolConfig(), services=services))


async def run(env: Environment, call_id: str = "c1", **arguments: object) -> str:
    """The output `exec_command` with `arguments` ends with."""
    request = ToolExecutionRequest(tool_call=tool_call("exec_command", json.dumps(arguments), call_id))
    output = ""
    async for msg in env.execute_tool(request):
        if msg.type == "model_msg":
            output = msg.payload.output
    return output


async def run_once(workspace: Path | str, **arguments: object) -> str:
    """One `exec_command` in a fresh sandboxed Environment, disposed afterwards."""
    env = make_env(workspace)
    try:
        return await run(env, **arguments)
    finally:
        env.dispose()
