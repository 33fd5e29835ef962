"""Nothing a Task started outlives its owner (issue 17 point 6): commands that `setsid` or
double-fork out of their process group are reaped at `session.aclose()`, `%penguin new`, and
when the kernel running them is SIGKILLed (the owner's watchdog). Real kernels, real commands."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.environment.commands import CommandSessionManager
from penguin_jupyter.environment.commands.owner_marker import OWNER_ENV_VAR, can_scan, marked_pids
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.processes import alive, wait_until
from tests.support.session import allow, collect, configure_child_model, configure_model

pytestmark = pytest.mark.skipif(not can_scan(), reason="process reaping by marker needs Linux /proc")


def _escapers(tag: str) -> str:
    """A command leaving a `setsid` daemon and a double-forked one (new session, orphaned),
    then running `sleep` in the foreground. Each sleep (over 300 s) carries `tag` in its duration."""
    return (
        f"setsid sleep 3{tag}1 > /dev/null 2>&1 & "
        f"setsid -f sh -c 'sleep 3{tag}2 > /dev/null 2>&1 &' ; "
        f"sleep 3{tag}3"
    )


async def _await_until(predicate, timeout_s: float = 60.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.1)
    return predicate()


def _cleanup(tag: str) -> None:
    for line in alive(f"sleep 3{tag}"):
        try:
            os.kill(int(line.split()[0]), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def test_setsid_and_double_forked_daemons_are_gone_after_aclose(tmp_path: Path) -> None:
    tag = "07.0"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        {
            "tool_calls": [
                {
                    "name": "exec_command",
                    "id": "call_bg",
                    "arguments": {"cmd": _escapers(tag), "yield_time_ms": 250},
                }
            ]
        },
        {"text": "Started them."},
    ]
    try:
        with ScriptedModelServer(script) as server:
            agent = await create_agent()
            configure_model(agent.root, server)
            session = await agent.create_session(workspace_dir=workspace)
            await collect(session.run([user_text("start daemons")], approve=allow))
            assert wait_until(lambda: len(alive(f"sleep 3{tag}")) == 3), alive(f"sleep 3{tag}")
            token = session.environment.command_sessions.owner_token
            assert len(marked_pids(token)) >= 3
            await session.aclose()
            # aclose returns once the reaping is done: nothing is left, no polling needed.
            assert alive(f"sleep 3{tag}") == []
    finally:
        _cleanup(tag)


@pytest.mark.kernel
def test_escaped_daemons_are_reaped_by_penguin_new_in_a_kernel(tmp_path: Path) -> None:
    tag = "07.1"
    script = [
        {
            "tool_calls": [
                {
                    "name": "exec_command",
                    "id": "call_bg",
                    "arguments": {"cmd": _escapers(tag), "run_in_background": True},
                }
            ]
        },
        {"text": "Started in the background."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(tmp_path / "a.ipynb")}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            ran = kernel.execute("%%penguin --approve allow-all\nstart daemons", timeout=120)
            assert ran.reply["content"]["status"] == "ok", ran.stderr
            assert wait_until(lambda: len(alive(f"sleep 3{tag}")) == 3), alive(f"sleep 3{tag}")
            assert kernel.execute("%penguin new").reply["content"]["status"] == "ok"
            assert wait_until(lambda: alive(f"sleep 3{tag}") == []), alive(f"sleep 3{tag}")
        finally:
            kernel.close()
            _cleanup(tag)


@pytest.mark.kernel
def test_a_sigkilled_kernel_leaves_no_orphan_commands(tmp_path: Path) -> None:
    tag = "07.2"
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_fg", "arguments": {"cmd": _escapers(tag)}}]}
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(tmp_path / "a.ipynb")}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            kernel.kc.execute("%%penguin --approve allow-all\nrun it")
            # Mid-command: the foreground sleep and both escaped daemons are running.
            assert wait_until(lambda: len(alive(f"sleep 3{tag}")) == 3, timeout_s=120), alive(f"sleep 3{tag}")
            assert len(_carrying_marker(tag)) == 3
            os.kill(kernel.km.provisioner.pid, signal.SIGKILL)  # type: ignore[union-attr]
            assert wait_until(lambda: alive(f"sleep 3{tag}") == []), alive(f"sleep 3{tag}")
        finally:
            kernel.close()
            _cleanup(tag)


def _carrying_marker(tag: str) -> list[int]:
    """Pids of the tagged sleeps whose environment carries the owner marker."""
    pids = [int(line.split()[0]) for line in alive(f"sleep 3{tag}")]
    marker = f"{OWNER_ENV_VAR}=".encode()
    return [pid for pid in pids if marker in Path(f"/proc/{pid}/environ").read_bytes()]


async def test_a_background_subagents_escaped_daemons_are_gone_after_the_parents_aclose(
    tmp_path: Path,
) -> None:
    tag = "07.3"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    prompt = "Caller agent: default_agent. Start the daemons and say done."
    run_args = {
        "description": "d",
        "prompt": prompt,
        "provider": "openai",
        "model_id": "child-model",
        "run_in_background": True,
    }
    exec_args = {"description": "d", "cmd": _escapers(tag), "yield_time_ms": 250}
    parent_script = [
        {"tool_calls": [{"name": "run_subagent", "id": "p1", "arguments": run_args}]},
        {"text": "The subagent is starting them."},
    ]
    child_script = [
        {"tool_calls": [{"name": "exec_command", "id": "k1", "arguments": exec_args}]},
        {"text": "done"},
    ]
    try:
        with ScriptedModelServer(parent_script) as server, ScriptedModelServer(child_script) as child_server:
            agent = await create_agent()
            configure_model(agent.root, server)
            configure_child_model(agent.root, child_server)
            parent = await agent.create_session(workspace_dir=workspace)
            await collect(parent.run([user_text("delegate")], approve=allow))
            # The background child runs on this loop: wait without blocking it.
            assert await _await_until(lambda: len(alive(f"sleep 3{tag}")) == 3), alive(f"sleep 3{tag}")
            await parent.aclose()
            assert alive(f"sleep 3{tag}") == []
    finally:
        _cleanup(tag)


def _spawn_and_wait(manager: CommandSessionManager, cmd: str, tag: str) -> None:
    manager.spawn(cmd, "/")
    assert wait_until(lambda: len(alive(f"sleep 3{tag}")) >= 1), alive(f"sleep 3{tag}")


def test_a_daemon_ignoring_sigterm_is_killed_after_the_grace() -> None:
    tag = "07.4"
    manager = CommandSessionManager()
    try:
        _spawn_and_wait(manager, f"setsid sh -c \"trap '' TERM; sleep 3{tag}1\" > /dev/null 2>&1 &", tag)
        manager.dispose()
        manager.wait_reaped()
        assert alive(f"sleep 3{tag}") == []
    finally:
        _cleanup(tag)


def test_a_command_started_right_after_kill_all_is_not_caught_by_its_sweep() -> None:
    tag = "07.5"
    manager = CommandSessionManager()
    try:
        _spawn_and_wait(manager, f"setsid sleep 3{tag}1 > /dev/null 2>&1 &", tag)
        old_token = manager.owner_token
        manager.kill_all()  # e.g. an interrupt: the session goes on
        assert manager.owner_token != old_token
        manager.spawn(f"setsid sleep 3{tag}2 > /dev/null 2>&1 &", "/")
        assert wait_until(lambda: any(line.endswith(f"3{tag}2") for line in alive(f"sleep 3{tag}"))), alive(f"sleep 3{tag}")
        manager.wait_reaped()
        assert [line.split()[-1] for line in alive(f"sleep 3{tag}")] == [f"3{tag}2"]
        manager.dispose()
        manager.wait_reaped()
        assert alive(f"sleep 3{tag}") == []
    finally:
        _cleanup(tag)


def test_a_forked_child_that_ran_a_command_and_exited_leaves_the_parents_commands_alone() -> None:
    """A fork (multiprocessing's fork, a forked kernel) that runs a command gets a watchdog of its
    own; when the fork exits, that watchdog reaps what the fork started — not the parent's running
    commands. (With the parent's token kept in the fork it did: a later command of the parent's
    was killed.)"""
    tag = "07.6"
    manager = CommandSessionManager()
    try:
        _spawn_and_wait(manager, f"setsid sleep 3{tag}1 > /dev/null 2>&1 &", tag)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only runs a command and leaves
            try:
                child = CommandSessionManager()
                child.spawn(f"setsid sleep 3{tag}2 > /dev/null 2>&1 &", "/")
                deadline = time.monotonic() + 30
                while not any(line.endswith(f"3{tag}2") for line in alive(f"sleep 3{tag}")) and time.monotonic() < deadline:
                    time.sleep(0.05)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        # the fork's watchdog saw its owner go and reaped: the fork's sleep ends, the parent's stays
        assert wait_until(lambda: not any(line.endswith(f"3{tag}2") for line in alive(f"sleep 3{tag}"))), alive(f"sleep 3{tag}")
        time.sleep(1.5)  # past the watchdog's grace and rescan
        assert [line.split()[-1] for line in alive(f"sleep 3{tag}")] == [f"3{tag}1"]
        manager.dispose()
        manager.wait_reaped()
        assert alive(f"sleep 3{tag}") == []
    finally:
        _cleanup(tag)
