"""The warm sandbox (environment/sandbox/warm.py, warm_host.py): one bwrap per Environment that
its commands start inside, with the guarantees a bwrap per command gave.

Real bubblewrap, real commands through the Environment. Commands share one PID namespace (its
inode tells sandboxes apart); a credential file that appears afterwards is still hidden (the
view is checked before every command, a changed one gets a new sandbox); what a command leaves
behind (`setsid`, a double fork, a cleared environment) ends with it while another command keeps
running; a command that kills its keeper ends, and what it left with it; the sandbox outlives the
thread that started it; a command too large for the socket gets its own bwrap; keepers cannot be
read; dispose ends the sandbox."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import threading
import time
from pathlib import Path

import pytest

from penguin_jupyter.environment.commands.owner_marker import can_scan
from penguin_jupyter.environment.sandbox import sandbox_support
from tests.support.processes import alive, wait_until
from tests.support.sandbox_env import make_env, run, run_once

pytestmark = [
    pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}"),
    pytest.mark.skipif(not can_scan(), reason="process scans need Linux /proc"),
]

NAMESPACE = "readlink /proc/self/ns/pid"
AWS_SECRET = "AWS-WARM-SECRET-5772156"


def _namespace(output: str) -> str:
    line = output.splitlines()[0]
    assert line.startswith("pid:["), output
    return line


async def _settled(env) -> str:  # type: ignore[no-untyped-def]
    """Run commands until two in a row share a sandbox: a folder without `.git` gets its
    placeholders from the first views (bwrap makes their mount points), each a new view."""
    last = ""
    for _ in range(5):
        current = _namespace(await run(env, cmd=NAMESPACE))
        if current == last:
            return current
        last = current
    raise AssertionError("the view never settled")


async def test_commands_share_one_sandbox_and_a_credential_that_appears_later_stays_hidden(home, tmp_path):
    env = make_env(tmp_path)
    try:
        first = await _settled(env)
        second = _namespace(await run(env, cmd=NAMESPACE))
        (home / ".aws").mkdir()
        (home / ".aws" / "credentials").write_text(AWS_SECRET)
        after = await run(env, cmd=f"{NAMESPACE}; cat ~/.aws/credentials; echo done")
    finally:
        env.dispose()
    host = os.readlink("/proc/self/ns/pid")
    assert first == second != host
    assert AWS_SECRET not in after and "done" in after, after
    assert _namespace(after) != first  # a new view: a new sandbox


async def test_what_a_command_leaves_behind_ends_with_it_while_another_keeps_running(home, tmp_path):
    tag = f"31.{os.getpid() % 1000:03d}"
    env = make_env(tmp_path)
    try:
        running = await run(env, cmd=f"sleep 6{tag}", yield_time_ms=300)
        assert "process_id" in running
        left = await run(
            env,
            cmd=f"(setsid sleep 7{tag}1 > /dev/null 2>&1 &); (env -i sleep 7{tag}2 > /dev/null 2>&1 &); "
            f"nohup sleep 7{tag}3 > /dev/null 2>&1 & echo started",
        )
        assert "started" in left
        assert wait_until(lambda: not alive(f"sleep 7{tag}")), alive(f"sleep 7{tag}")
        assert alive(f"sleep 6{tag}")  # the other command runs on, in the same sandbox
    finally:
        env.dispose()
    assert wait_until(lambda: not alive(f"sleep 6{tag}")), alive(f"sleep 6{tag}")


async def test_a_command_that_kills_its_keeper_ends_and_what_it_left_with_it(home, tmp_path):
    tag = f"32.{os.getpid() % 1000:03d}"
    env = make_env(tmp_path)
    try:
        before = await _settled(env)
        killed = await run(env, cmd=f"(sleep 8{tag} &); kill -9 $PPID; sleep 8{tag}")
        assert "terminated by signal SIGKILL" in killed, killed
        assert wait_until(lambda: not alive(f"sleep 8{tag}")), alive(f"sleep 8{tag}")
        assert _namespace(await run(env, cmd=NAMESPACE)) == before  # the sandbox itself goes on
    finally:
        env.dispose()


async def test_the_sandbox_outlives_the_thread_that_started_it(home, tmp_path):
    env = make_env(tmp_path)
    seen: list[str] = []
    try:

        def in_a_thread() -> None:  # a cell's thread: it ends long before the session does
            seen.append(asyncio.run(_settled(env)))

        thread = threading.Thread(target=in_a_thread)
        thread.start()
        await asyncio.to_thread(thread.join)
        time.sleep(0.3)  # bwrap's parent-death signal would have come by now
        later = await run(env, cmd=NAMESPACE)
    finally:
        env.dispose()
    assert _namespace(later) == seen[0]


async def test_a_command_too_large_for_the_socket_runs_in_its_own_sandbox(home, tmp_path, monkeypatch):
    monkeypatch.setenv("PJ_LARGE_VALUE", "y" * 100_000)  # with the command, more than a message holds
    env = make_env(tmp_path)
    try:
        warm = await _settled(env)
        filler = "x" * 120_000  # one argument's limit is 128 KiB
        large = await run(env, cmd=f": '{filler}'; {NAMESPACE}; touch {home}/escaped 2>&1")
    finally:
        env.dispose()
    assert _namespace(large) != warm
    assert "Read-only file system" in large and not (home / "escaped").exists()


async def test_a_command_cannot_read_its_keeper_or_the_host(home, tmp_path):
    out = await run_once(tmp_path, cmd="cat /proc/$PPID/environ; echo; cat /proc/2/environ; echo end")
    assert out.count("Permission denied") == 2 and "PENGUIN_OWNER" not in out, out


async def test_dispose_ends_the_sandbox(home, tmp_path):
    env = make_env(tmp_path)
    try:
        await run(env, cmd="true")
        assert alive(sandbox_support().bwrap, containing=str(tmp_path))  # bwrap's command line names the workspace
    finally:
        env.dispose()
    assert wait_until(lambda: not alive(sandbox_support().bwrap, containing=str(tmp_path)))


def test_the_host_script_is_standalone() -> None:
    """warm_host.py runs inside the sandbox as `python -I -S`: stdlib only, no package import."""
    source = (Path(__file__).parents[2] / "penguin_jupyter" / "environment" / "sandbox" / "warm_host.py").read_text()
    assert "penguin_jupyter" not in source.split('"""', 2)[2]


async def test_a_reaped_commands_number_is_signalled_late_only_for_its_own_processes(tmp_path, monkeypatch):
    """Once a command's first process is reaped its number is free: right after (its clean-up,
    the kill's grace) its group is signalled; later only its own marked processes in that group
    are, never a group that may be someone else's by now."""
    from penguin_jupyter.environment.commands import child as child_module
    from penguin_jupyter.environment.commands.owner_marker import OWNER_ENV_VAR, new_owner_token

    marker = new_owner_token()
    env = {**os.environ, OWNER_ENV_VAR: marker}
    ended = child_module.PopenChild(["bash", "-c", "sleep 30 & exit 0"], str(tmp_path), env, None)
    ended.wait()
    real_killpg = os.killpg
    groups: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "killpg", lambda group, sig: groups.append((group, sig)))
    ended.signal_command(15, wait=False, ended=True)
    assert groups == [(ended.pid, 15)]  # right after the reap: the group is still ours
    monkeypatch.setattr(child_module, "NUMBER_KEPT_S", 0.0)
    groups.clear()
    ended.kill_everything()
    assert groups == []  # later: never the group as such...
    monkeypatch.setattr(os, "killpg", real_killpg)
    assert wait_until(lambda: not child_module.marked_pids(marker))  # ...but its own sleep, by its marker


def test_a_forked_child_starts_its_own_warm_sandbox(home, tmp_path):
    """A kernel forked (multiprocessing's fork) has none of its parent's threads: its first
    sandboxed command must not wait forever for the parent's starter thread."""
    env = make_env(tmp_path)
    try:
        asyncio.run(run(env, cmd="true"))  # the starter thread exists in this process now
        other = make_env(tmp_path / "child")
        (tmp_path / "child").mkdir()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through the pipe
            try:
                out = asyncio.run(run(other, cmd="echo from-the-child"))
                os.write(write, out.encode())
            finally:
                os._exit(0)
        os.close(write)
        deadline = time.monotonic() + 30
        chunks = b""
        while (left := deadline - time.monotonic()) > 0 and select.select([read], [], [], left)[0]:
            if not (chunk := os.read(read, 4096)):
                break
            chunks += chunk
        os.close(read)
        os.kill(pid, signal.SIGKILL)  # gone already, or stuck: it must not outlive the test
        os.waitpid(pid, 0)
        other.dispose()
    finally:
        env.dispose()
    assert "from-the-child" in chunks.decode(), chunks


def test_a_kill_after_the_command_ended_writes_nothing_to_a_reused_descriptor(home, tmp_path):
    """A finished command's kill timer fires a second later: its control pipe is closed by then
    and the number may be another file's (here: the next pipe made). Nothing may be written to it
    (it was: a later command's output began with `signal 9`)."""
    from penguin_jupyter.environment.sandbox.command_sandbox import CommandSandbox, SandboxConfig, SandboxPlan

    sandbox = CommandSandbox(SandboxConfig(), str(tmp_path))
    try:
        child = sandbox.warm_start(["/bin/true"], str(tmp_path), dict(os.environ), SandboxPlan(True), {"PATH": os.defpath})
        assert child is not None
        assert child.wait() == 0
        for pipe in (child.stdin, child.stdout, child.stderr):
            assert pipe is not None
            pipe.close()
        number = child._control  # the control pipe's number, reused below by another file
        child.close()
        read, write = os.pipe()
        os.dup2(write, number)
        try:
            child.kill_everything()
            child.signal_command(signal.SIGTERM, wait=False, ended=False)
            os.close(number)
            os.close(write)
            assert os.read(read, 100) == b""
        finally:
            os.close(read)
    finally:
        sandbox.dispose()
