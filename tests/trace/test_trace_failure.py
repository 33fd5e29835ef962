"""A Trace that cannot be written (issue 17 point 7): the session goes on, the failure is
kept as one line (`Session.recording_error`), told to the user once, and `%penguin status`
says recording is off. Real files, a real kernel, the scripted model server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import allow, collect, configure_model


def _texts(msgs) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.payload.text for m in msgs if getattr(m.payload, "type", "") == "text"]


async def test_an_unwritable_trace_is_reported_once_and_the_session_goes_on(tmp_path: Path, capsys) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([{"text": "first answer"}, {"text": "second answer"}]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        # The day's trace directory cannot be created: a file is in its way.
        blocker = session.trace_path.parent
        blocker.parent.mkdir(parents=True, exist_ok=True)
        blocker.write_text("not a directory")
        assert session.recording_error is None and session.recording

        first = await collect(session.run([user_text("one")], approve=allow))
        assert "first answer" in _texts(first)
        error = session.recording_error
        assert error is not None and "\n" not in error
        assert error.startswith(f"cannot write the trace {session.trace_path}: ")
        assert not session.recording
        notice = session.take_recording_notice()
        assert notice is not None and notice.startswith("penguin: recording is off — cannot write the trace")
        assert session.take_recording_notice() is None  # once

        second = await collect(session.run([user_text("two")], approve=allow))
        assert "second answer" in _texts(second)
        assert session.take_recording_notice() is None
        assert "[trace] write failed" not in capsys.readouterr().err  # no stderr line per record
        await session.aclose()


async def test_a_record_that_cannot_be_serialized_turns_recording_off_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A non-OSError failure (here the UnicodeDecodeError raw bytes in a record used to raise)
    is no longer swallowed: the record is counted lost and `recording_error` names it."""
    import penguin_jupyter.trace.writer as writer_module

    real_to_json = writer_module.to_json

    def failing_to_json(msg):  # type: ignore[no-untyped-def]
        if getattr(msg.payload, "text", None) == "first answer":
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        return real_to_json(msg)

    monkeypatch.setattr(writer_module, "to_json", failing_to_json)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([{"text": "first answer"}, {"text": "second answer"}]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        first = await collect(session.run([user_text("one")], approve=allow))
        assert "first answer" in _texts(first)
        error = session.recording_error
        assert error is not None and "\n" not in error
        assert error == (
            f"cannot write the trace {session.trace_path}: a text record could not be serialized "
            "(UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte)"
        )
        notice = session.take_recording_notice()
        assert notice is not None and notice.startswith("penguin: recording is off — cannot write the trace")
        assert session.take_recording_notice() is None
        second = await collect(session.run([user_text("two")], approve=allow))
        assert "second answer" in _texts(second)
        assert session.recording  # later records are written again
        await session.aclose()
    written = session.trace_path.read_text()
    assert "second answer" in written and "first answer" not in written


def _chattr(flag: str, path: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


@pytest.mark.kernel
def test_an_immutable_trace_shows_in_the_cell_once_and_status_says_recording_is_off(tmp_path: Path) -> None:
    script = [{"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"}]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(tmp_path / "a.ipynb")}))
        trace: Path | None = None
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            first = kernel.execute("%%penguin\none", timeout=120)
            assert first.reply["content"]["status"] == "ok", first.stderr
            status = kernel.execute("%penguin status").stdout
            assert "recording: on" in status
            trace = Path(re.search(r"^trace: (.+)$", status, re.M).group(1))  # type: ignore[union-attr]
            if not _chattr("+i", trace):
                pytest.skip("chattr +i is not available here (needs root on a supporting filesystem)")

            second = kernel.execute("%%penguin\ntwo", timeout=120)
            assert second.reply["content"]["status"] == "ok", second.stderr
            shown = second.stderr.count("penguin: recording is off — cannot write the trace")
            assert shown == 1, second.stderr
            assert "Operation not permitted" in second.stderr
            assert "[trace] write failed" not in second.stderr

            third = kernel.execute("%%penguin\nthree", timeout=120)
            assert third.reply["content"]["status"] == "ok", third.stderr
            assert "recording is off" not in third.stderr  # told once per session

            status = kernel.execute("%penguin status").stdout
            assert re.search(
                r"^recording: off — cannot write the trace .*Operation not permitted$", status, re.M
            )
        finally:
            if trace is not None:
                _chattr("-i", trace)
            kernel.close()
