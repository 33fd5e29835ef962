"""The sandbox (docs/security.md "Sandbox") through the real Environment, real bubblewrap and real
commands: what a sandboxed command can write, read and reach, and that the same commands escape
without it (so each check can fail); the allowlist proxy (an allowed host reached, others and
names resolving to this machine refused, the blocked host named); Unix sockets closed; an
interrupt reaching the command inside; nothing surviving its owner's death; the administrator's
required sandbox; a workspace that is the home folder; a missing `.git`; a planted
`.git/commondir`; an MCP stdio server in the sandbox. The kernel-level suite is
tests/notebook/test_sandbox_escape_kernel.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig
from penguin_jupyter.environment.commands.owner_marker import can_scan
from penguin_jupyter.environment.sandbox import (
    CommandCall,
    CommandSandbox,
    SandboxConfig,
    SandboxGrant,
    SandboxGrants,
    SandboxSupport,
    parse_hosts,
    sandbox_support,
    support,
)
from penguin_jupyter.interfaces import EnvironmentServices, MCPServerConfig, ToolExecutionRequest
from penguin_jupyter.omni import tool_call
from tests.support.mcp import FIXTURE_SERVER
from tests.support.processes import alive, wait_until
from tests.support.sandbox_env import SECRET, make_env, run, run_once
from tests.support.sandbox_suite import CountingServer

pytestmark = pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}")

def _attempts(home: Path, port: int) -> str:
    return (
        f"echo x > {home}/pwned.txt; cat {home}/.ssh/id_rsa; "
        f"{sys.executable} -c 'import urllib.request as u; u.urlopen(\"http://127.0.0.1:{port}/x\", timeout=3)'; "
        "echo inside > inside.txt"
    )


async def test_the_same_commands_escape_without_the_sandbox_and_stay_inside_with_it(home, tmp_path):
    counting = CountingServer()
    try:
        plain = make_env(tmp_path, sandboxed=False)
        try:
            out = await run(plain, cmd=_attempts(home, counting.port))
        finally:
            plain.dispose()
        assert (home / "pwned.txt").exists() and SECRET in out and len(counting.hits) == 1  # the control
        (home / "pwned.txt").unlink()
        (tmp_path / "inside.txt").unlink()
        boxed = make_env(tmp_path)
        try:
            out = await run(boxed, cmd=_attempts(home, counting.port))
        finally:
            boxed.dispose()
    finally:
        counting.close()
    assert not (home / "pwned.txt").exists() and SECRET not in out and len(counting.hits) == 1
    assert (tmp_path / "inside.txt").read_text() == "inside\n"
    assert out.endswith("[sandboxed: writes only in the workspace and /tmp; network: none]")


async def test_an_allowed_host_is_reached_through_the_proxy_and_the_rest_is_refused(home, tmp_path):
    counting = CountingServer()
    # through the proxy (NO_PROXY, which keeps the sandbox's own localhost local, lifted here)
    fetch = (
        f"env -u NO_PROXY -u no_proxy {sys.executable} -c 'import sys, urllib.request as u; "
        "print(u.urlopen(sys.argv[1], timeout=5).read().decode())' "
    )
    env = make_env(tmp_path, allowed_hosts=parse_hosts([f"127.0.0.1:{counting.port}"]))
    try:
        allowed = await run(env, "a", cmd=fetch + f"http://127.0.0.1:{counting.port}/allowed")
        refused = await run(env, "b", cmd=fetch + "http://example.org/ 2>&1 | tail -1")
        by_name = await run(
            env, "c", cmd=fetch + f"http://localhost:{counting.port}/by-name 2>&1 | tail -1",
            network_hosts=[f"localhost:{counting.port}"],
        )  # fmt: skip
    finally:
        env.dispose()
        counting.close()
    assert "counted" in allowed and counting.hits == ["/allowed"]
    assert "[sandboxed: writes only in the workspace and /tmp; network: 127.0.0.1:" in allowed
    assert "403" in refused and "[sandbox: blocked network access to example.org:80" in refused
    # localhost was granted by name, but it is this machine: refused before any connection
    assert "403" in by_name and "/by-name" not in counting.hits


@pytest.mark.parametrize("hosts", [(), ("pypi.org",)], ids=["no network (bwrap loads the filter)", "hosts (the bridge does)"])
async def test_unix_sockets_are_closed_and_socketpairs_work(home, tmp_path, hosts):
    env = make_env(tmp_path, allowed_hosts=parse_hosts(hosts))
    code = (
        "import socket\n"
        "socket.socketpair()\n"
        "try:\n    socket.socket(socket.AF_UNIX)\nexcept PermissionError:\n    print('unix refused')\n"
    )
    try:
        out = await run(env, cmd=f"{sys.executable} -c \"{code}\"")
    finally:
        env.dispose()
    assert "unix refused" in out


async def test_an_interrupt_reaches_the_command_inside_the_sandbox(home, tmp_path):
    env = make_env(tmp_path)
    code = "import time\ntry:\n    print('ready', flush=True); time.sleep(60)\nexcept KeyboardInterrupt:\n    print('interrupted')"
    try:
        started = await run(env, cmd=f"{sys.executable} -c \"{code}\"", yield_time_ms=1500)
        process_id = started.split("process_id ")[1].split(";")[0]
        request = ToolExecutionRequest(
            tool_call=tool_call("input_command", json.dumps({"process_id": process_id, "chars": "\u0003"}), "i1")
        )
        output = ""
        async for msg in env.execute_tool(request):
            if msg.type == "model_msg":
                output = msg.payload.output
    finally:
        env.dispose()
    assert "ready" in started and "interrupted" in output


OWNER = """
import asyncio, json, sys
from penguin_jupyter.environment.commands import CommandSessionManager
from penguin_jupyter.environment.sandbox import CommandSandbox, SandboxConfig, SandboxPlan
manager = CommandSessionManager(sandbox=CommandSandbox(SandboxConfig(), sys.argv[1]))
manager.spawn(sys.argv[2], sys.argv[1], SandboxPlan(True))
print("ready", flush=True)
import time; time.sleep(600)
"""


@pytest.mark.skipif(not can_scan(), reason="process scans need Linux /proc")
def test_nothing_in_the_sandbox_outlives_its_owner_killed_outright(home, tmp_path):
    tag = "08.5"
    daemons = f"setsid sleep 3{tag}1 > /dev/null 2>&1 & (sleep 3{tag}2 &) ; sleep 3{tag}3"
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(tmp_path), daemons],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )  # fmt: skip
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
        assert wait_until(lambda: len(alive(f"sleep 3{tag}")) == 3), alive(f"sleep 3{tag}")
        owner.kill()
        owner.wait()
        assert wait_until(lambda: not alive(f"sleep 3{tag}")), alive(f"sleep 3{tag}")
    finally:
        owner.kill()
        for line in alive(f"sleep 3{tag}"):
            os.kill(int(line.split()[0]), signal.SIGKILL)


def test_a_required_sandbox_refuses_unsandboxed_runs_and_says_when_it_cannot_start(monkeypatch, tmp_path):
    required = CommandSandbox(SandboxConfig(required_by="/etc/penguin/policy.toml"), str(tmp_path))
    refused = required.plan(CommandCall("c1", "ls", unsandboxed=True))
    assert refused.refusal == (
        "[not run: the administrator's policy (/etc/penguin/policy.toml) requires the sandbox; "
        "unsandboxed: true is refused]"
    )
    assert required.plan(CommandCall("c2", "ls")).sandboxed  # no ledger, no grant: still sandboxed
    grants = SandboxGrants()
    grants.give(CommandCall("c3", "ls"), SandboxGrant(False))
    host = CommandSandbox(SandboxConfig(grants=grants), str(tmp_path))
    assert not host.plan(CommandCall("c3", "ls")).sandboxed  # the host granted an unsandboxed run
    assert host.plan(CommandCall("c3", "ls")).sandboxed  # taken once: a second spawn is sandboxed (fail closed)
    assert not CommandSandbox(SandboxConfig(), str(tmp_path)).plan(CommandCall("c4", "ls")).sandboxed  # no host: as before
    monkeypatch.setattr(support, "_support", SandboxSupport(False, "bubblewrap is not installed (apt-get install bubblewrap)"))
    assert required.plan(CommandCall("c5", "ls")).refusal == (
        "[not run: the sandbox cannot start here: bubblewrap is not installed (apt-get install bubblewrap)]"
    )


async def test_a_home_folder_workspace_keeps_its_own_entries_read_only(home):
    (home / "project").mkdir()
    (home / ".bashrc").write_text("# mine\n")
    env = make_env(home)
    try:
        out = await run(
            env,
            cmd="echo a > project/ok.txt; echo b > new-top.txt; echo c >> .bashrc; echo d > .bash_profile; "
            "mkdir -p .ipython/profile_default/startup",
        )
    finally:
        env.dispose()
    assert (home / "project" / "ok.txt").exists()
    assert not (home / "new-top.txt").exists() and not (home / ".bash_profile").exists()
    assert (home / ".bashrc").read_text() == "# mine\n" and not (home / ".ipython").exists()
    assert "Read-only file system" in out


async def test_a_folder_without_git_cannot_become_a_repository_whose_hooks_run_later(home, tmp_path):
    out = await run_once(tmp_path, cmd="git init -q . 2>&1; mkdir -p .git/hooks 2>&1; ls -A .git")
    assert (tmp_path / ".git").is_dir() and list((tmp_path / ".git").iterdir()) == []  # the empty placeholder
    assert "Read-only file system" in out


async def test_a_planted_commondir_is_removed_and_named(home, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    out = await run_once(tmp_path, cmd="echo ../elsewhere > .git/commondir")
    assert not (tmp_path / ".git" / "commondir").exists()
    assert f"[sandbox: removed {os.path.realpath(tmp_path)}/.git/commondir" in out


async def test_an_mcp_stdio_server_runs_in_the_sandbox_when_its_entry_says_so(home, tmp_path):
    entry = {"command": sys.executable, "args": [FIXTURE_SERVER, "--writer"], "connectTimeoutMs": 60_000}
    answers = {}
    for sandboxed in (False, True):
        config = EnvironmentConfig(
            workspace_dir=str(tmp_path),
            tool_config=ToolConfig(builtin=[], mcp_servers=[MCPServerConfig("fx", {**entry, "sandbox": sandboxed})]),
            services=EnvironmentServices(extra={"sandbox": SandboxConfig()}),
        )
        env = Environment(config)
        try:
            await env.list_tools()
            for name, path in (("home", home / f"mcp-{sandboxed}.txt"), ("inside", tmp_path / f"mcp-{sandboxed}.txt")):
                arguments = json.dumps({"path": str(path), "text": "x"})
                request = ToolExecutionRequest(tool_call=tool_call("mcp__fx__write", arguments, f"m-{name}"))
                answers[(sandboxed, name)] = [m.payload.output async for m in env.execute_tool(request) if m.payload.type == "tool_call_output"]
        finally:
            env.dispose()
    assert answers[(False, "home")] == ["ok"] and (home / "mcp-False.txt").exists()  # the control
    assert answers[(True, "home")] == ["error: Read-only file system"] and not (home / "mcp-True.txt").exists()
    assert answers[(True, "inside")] == ["ok"] and (tmp_path / "mcp-True.txt").exists()


async def test_a_required_sandbox_starts_no_mcp_server_it_cannot_hold(monkeypatch, home, tmp_path):
    monkeypatch.setattr(support, "_support", SandboxSupport(False, "turned off (PENGUIN_BWRAP=none)"))
    entry = {"command": sys.executable, "args": [FIXTURE_SERVER], "connectTimeoutMs": 60_000}
    config = EnvironmentConfig(
        workspace_dir=str(tmp_path),
        tool_config=ToolConfig(builtin=[], mcp_servers=[MCPServerConfig("fx", entry)]),
        services=EnvironmentServices(extra={"sandbox": SandboxConfig(required_by="/etc/penguin/policy.toml")}),
    )
    env = Environment(config)
    try:
        results = await env.connect_mcp()
        tools = await env.list_tools()
    finally:
        env.dispose()
    assert tools == [] and results[0].status == "failed"
    assert "the sandbox cannot start here: turned off (PENGUIN_BWRAP=none)" in (results[0].error or "")
