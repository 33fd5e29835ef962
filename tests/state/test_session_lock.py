"""One writer per session (issue 17 point 1): a session open for running in one process is
refused in another with one line naming the holder, stays readable, and a dead holder never
blocks. Real processes race real sessions against the scripted model server."""

from __future__ import annotations

import gc
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import PROCESS_EXIT_PLACEHOLDER, SessionBusyError, read_trace
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import allow, collect, configure_model

# Resumes a session when told to, runs one Task if it got the session, then holds it open
# until its stdin says to close. Prints READY, then BUSY <line> or RAN.
_RACER = textwrap.dedent(
    """
    import asyncio, sys
    from penguin_jupyter import create_agent
    from penguin_jupyter.omni import user_text
    from penguin_jupyter.trace import SessionBusyError

    async def allow(_call):
        return "allow"

    async def main(session_id, prompt):
        agent = await create_agent()
        print("READY", flush=True)
        sys.stdin.readline()
        try:
            session = await agent.resume_session(session_id)
        except SessionBusyError as exc:
            print("BUSY", exc, flush=True)
            return
        async for _ in session.run([user_text(prompt)], approve=allow):
            pass
        print("RAN", flush=True)
        sys.stdin.readline()
        await session.aclose()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def _racer(session_id: str, prompt: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _RACER, session_id, prompt],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        _, err = proc.communicate(timeout=60)
        raise AssertionError(f"racer ended without a line: {err}")
    return line


def _send(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()


def _tool_call(cmd: str, call_id: str) -> dict:
    return {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": cmd}, "id": call_id}]}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


async def test_two_processes_racing_one_session_one_is_refused_and_the_trace_stays_whole(workspace):
    script = [
        _tool_call("echo first-output", "call_1"),
        {"text": "first answer"},
        _tool_call("echo second-output", "call_2"),
        {"text": "second answer"},
        {"text": "third answer"},
    ]
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        await collect(session.run([user_text("task one")], approve=allow))
        session_id = session.session_id
        await session.aclose()

        racers = [_racer(session_id, "task two"), _racer(session_id, "task two")]
        try:
            assert [_line(p) for p in racers] == ["READY", "READY"]
            for proc in racers:
                _send(proc)
            lines = [_line(p) for p in racers]
            busy = [line for line in lines if line.startswith("BUSY")]
            assert sorted(line.split(" ", 1)[0] for line in lines) == ["BUSY", "RAN"], lines
            winner = racers[lines.index("RAN")]
            # One line: which session, who holds it (pid) and since when.
            assert "\n" not in busy[0]
            assert f"session {session_id} is open in another process (pid {winner.pid}, since " in busy[0]
            # The refused process can still read the session while the other holds it.
            assert read_trace(session.trace_path)
            assert session_id in [s.session_id for s in agent.list_sessions()]
            with pytest.raises(SessionBusyError):
                await agent.resume_session(session_id)
            _send(winner)
            for proc in racers:
                _, err = proc.communicate(timeout=120)
                assert proc.returncode == 0, err
        finally:
            for proc in racers:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()

        resumed = await agent.resume_session(session_id)
        history = resumed.render_messages
        joined = "\n".join(m.model_dump_json() for m in history)
        texts = [
            m.payload.text
            for m in history
            if getattr(m.payload, "type", "") == "text" and getattr(m.payload, "role", "") == "assistant"
        ]
        assert texts == ["first answer", "second answer"]
        assert "first-output" in joined and "second-output" in joined
        assert PROCESS_EXIT_PLACEHOLDER not in joined
        out = await collect(resumed.run([user_text("task three")], approve=allow))
        assert any(getattr(m.payload, "text", None) == "third answer" for m in out)
        await resumed.aclose()


async def test_a_holder_killed_by_sigkill_never_blocks_the_next_resume(workspace):
    with ScriptedModelServer([{"text": "hi"}, {"text": "again"}]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        await collect(session.run([user_text("hello")], approve=allow))
        session_id = session.session_id
        session.dispose()

        holder = _racer(session_id, "hold it")
        try:
            assert _line(holder) == "READY"
            _send(holder)
            assert _line(holder) == "RAN"
            with pytest.raises(SessionBusyError, match=f"pid {holder.pid}"):
                await agent.resume_session(session_id)
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait(timeout=60)
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()
        resumed = await agent.resume_session(session_id)
        await resumed.aclose()


_PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from penguin_jupyter.trace import SessionBusyError, SessionLock
    try:
        SessionLock.acquire(Path(sys.argv[1]), sys.argv[2]).release()
    except SessionBusyError as exc:
        print("BUSY", exc)
    else:
        print("FREE")
    """
)


def _probe(session_dir: Path, session_id: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(session_dir), session_id],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def test_a_new_session_holds_a_private_lock_until_dispose(workspace):
    with ScriptedModelServer([]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        session_dir = session._setup.scratchpad_dir
        lock_file = session_dir / ".session.lock"
        assert lock_file.stat().st_mode & 0o777 == 0o600
        assert session_dir.stat().st_mode & 0o777 == 0o700
        assert _probe(session_dir, session.session_id).startswith(
            f"BUSY session {session.session_id} is open in another process (pid {os.getpid()}, since "
        )
        session.dispose()
        assert _probe(session_dir, session.session_id) == "FREE"


@pytest.mark.kernel
def test_a_second_kernel_gets_one_line_can_list_the_session_and_runs_it_once_released(tmp_path: Path) -> None:
    script = [{"text": "from kernel one"}, {"text": "from kernel two"}]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        env = kernel_env({"JPY_SESSION_NAME": str(tmp_path / "a.ipynb")})
        one = KernelHarness(str(tmp_path), env)
        two = KernelHarness(str(tmp_path), env)
        try:
            for kernel in (one, two):
                assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            first = one.execute("%%penguin\nhello", timeout=120)
            assert first.reply["content"]["status"] == "ok", first.stderr
            status = one.execute("%penguin status").stdout
            session_id = re.search(r"^session: (\S+)$", status, re.M).group(1)  # type: ignore[union-attr]
            pid_one = one.km.provisioner.pid  # type: ignore[union-attr]

            refused = two.execute(f"%%penguin --session {session_id}\nhi", timeout=120)
            lines = [line for line in refused.stderr.splitlines() if line.strip()]
            assert len(lines) == 1, refused.stderr
            assert lines[0].startswith(
                f"penguin: cannot resume session {session_id}: session {session_id} is open"
            )
            assert f"(pid {pid_one}, since " in lines[0]
            assert "Traceback" not in refused.stderr
            assert session_id in two.execute("%penguin sessions").stdout  # still readable

            assert one.execute("%penguin new").reply["content"]["status"] == "ok"  # releases it
            taken = two.execute(f"%%penguin --session {session_id}\nhi", timeout=120)
            assert taken.reply["content"]["status"] == "ok", taken.stderr
            assert "open in another process" not in taken.stderr
        finally:
            one.close()
            two.close()
    assert len(server.requests) == 2


async def test_a_session_dropped_without_dispose_releases_its_lock(workspace):
    with ScriptedModelServer([]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        session_dir, session_id = session._setup.scratchpad_dir, session.session_id
        assert _probe(session_dir, session_id).startswith("BUSY")
        del session
        gc.collect()
        assert _probe(session_dir, session_id) == "FREE"
