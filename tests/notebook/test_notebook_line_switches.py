"""`%penguin new` / `resume ID` / `model P/M` are all-or-nothing: a failure is one line and leaves
the previous state exactly as it was (real Agent and Sessions on a private data root; one real
kernel for the reported symptom: after `%penguin resume no-such-id` every later cell failed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from penguin_jupyter.notebook.runtime.kernel_runtime import KernelRuntime
from penguin_jupyter.notebook.runtime.line_commands import HANDLERS
from penguin_jupyter.omni import user_text
from penguin_jupyter.state import paths
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import (
    MODEL_ID,
    PROVIDER,
    allow,
    collect,
    configure_child_model,
    configure_model,
    typed_messages,
)


@pytest.fixture
def server():
    with ScriptedModelServer([{"text": "unused"}]) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        yield server


async def _line(runtime: KernelRuntime, command: str, arg: str | None = None) -> None:
    await HANDLERS[command](runtime, arg)


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert captured.out == ""
    return lines[0]


async def _runtime_with_a_session(capsys, tmp_path) -> KernelRuntime:
    runtime = KernelRuntime(None)
    os.chdir(tmp_path)
    await _line(runtime, "new")
    assert runtime.sessions.session is not None
    capsys.readouterr()
    return runtime


async def test_failed_resume_keeps_the_current_session(server, capsys, tmp_path):
    runtime = await _runtime_with_a_session(capsys, tmp_path)
    before = runtime.sessions.session
    assert before is not None
    await _line(runtime, "resume", "no-such-id")
    line = _one_error_line(capsys)
    assert line.startswith("penguin: cannot resume session no-such-id: ")
    assert line.endswith(f"; still on session {before.session_id}")
    assert runtime.sessions.session is before
    assert before.task_running is False and not before._disposed  # still usable


async def test_failed_resume_without_a_session_leaves_none(server, capsys):
    runtime = KernelRuntime(None)
    await _line(runtime, "resume", "no-such-id")
    assert _one_error_line(capsys).startswith("penguin: cannot resume session no-such-id: ")
    assert runtime.sessions.session is None and runtime.sessions.model is None


async def test_resume_switches_only_when_it_succeeds(server, capsys, tmp_path):
    runtime = await _runtime_with_a_session(capsys, tmp_path)
    first = runtime.sessions.session
    assert first is not None
    await collect(first.run([user_text("hello")], approve=allow))  # a session with a trace
    await _line(runtime, "new")
    second = runtime.sessions.session
    assert second is not None and second.session_id != first.session_id
    capsys.readouterr()
    await _line(runtime, "resume", first.session_id)
    assert capsys.readouterr().out.strip() == (
        f"penguin: the next %%penguin cell continues session {first.session_id}"
    )
    resumed = runtime.sessions.session
    assert resumed is not None and resumed.session_id == first.session_id
    assert second._disposed  # the session it replaced is gone (its commands and subagents too)


async def test_failed_model_keeps_the_model_and_the_session(server, capsys, tmp_path):
    runtime = await _runtime_with_a_session(capsys, tmp_path)
    before = runtime.sessions.session
    await _line(runtime, "model", "nope/no-such-model")
    line = _one_error_line(capsys)
    assert "no-such-model" in line and line.startswith("penguin: ")
    assert runtime.sessions.session is before and runtime.sessions.model is None

    fresh = KernelRuntime(None)  # no session yet: the pair is still checked now
    await _line(fresh, "model", "nope/no-such-model")
    assert _one_error_line(capsys).startswith("penguin: cannot use model nope/no-such-model: ")
    assert fresh.sessions.model is None and fresh.sessions.session is None


async def test_model_switches_the_session_when_it_can(server, capsys, tmp_path):
    configure_child_model(Path(os.environ["PENGUIN_HOME"]), server)
    runtime = await _runtime_with_a_session(capsys, tmp_path)
    before = runtime.sessions.session
    assert before is not None and (before.provider, before.model_id) == (PROVIDER, MODEL_ID)
    await _line(runtime, "model", f"{PROVIDER}/child-model")
    after = runtime.sessions.session
    assert after is not None and after.model_id == "child-model" and after is not before
    assert runtime.sessions.model == (PROVIDER, "child-model")
    assert capsys.readouterr().out.startswith(f"penguin: new sessions use {PROVIDER}/child-model; session ")


async def test_failed_new_keeps_the_current_session(server, capsys, tmp_path):
    runtime = await _runtime_with_a_session(capsys, tmp_path)
    before = runtime.sessions.session
    assert before is not None
    config = paths.project_config_path(paths.resolve_root(None), paths.DEFAULT_PROJECT_ID)
    good = config.read_text()
    config.write_text("models = [oops\n")  # a typo in the config: no session can start
    try:
        await _line(runtime, "new")
    finally:
        config.write_text(good)
    line = _one_error_line(capsys)
    assert line.startswith("penguin: could not start a session: ")
    assert line.endswith(f"; still on session {before.session_id}")
    assert runtime.sessions.session is before and not before._disposed


async def test_new_without_any_model_prints_how_to_configure_one(capsys, tmp_path):
    runtime = KernelRuntime(None)
    os.chdir(tmp_path)
    await _line(runtime, "new")
    err = capsys.readouterr().err
    assert err.startswith("penguin: no model yet, so nothing was run. Any one of these is enough:\n")
    assert "%penguin demo" in err and "OPENAI_API_KEY" in err
    assert runtime.sessions.session is None


@pytest.mark.kernel
def test_kernel_cells_go_on_after_a_failed_resume(tmp_path):
    notebook_dir = tmp_path / "project" / "notebooks"
    notebook_dir.mkdir(parents=True)
    script = [{"text": "first answer"}, {"text": "second answer"}]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel_cwd = tmp_path / "elsewhere"
        kernel_cwd.mkdir()
        kernel = KernelHarness(
            str(kernel_cwd), kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "a.ipynb")})
        )
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            first = kernel.execute("%%penguin\nfirst question", timeout=90)
            failed = kernel.execute("%penguin resume no-such-id")
            second = kernel.execute("%%penguin\nsecond question", timeout=90)
            status = kernel.execute("%penguin status")
        finally:
            kernel.close()
    assert first.reply["content"]["status"] == "ok", first.stderr
    assert failed.reply["content"]["status"] == "ok"
    error = failed.stderr.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("penguin: cannot resume session no-such-id: ")
    assert second.reply["content"]["status"] == "ok" and second.stderr == "", second.stderr
    sent = typed_messages(server.requests[1])
    assert ("user", "first question") in sent and sent[-1] == ("user", "second question")
    assert error[0].endswith("; still on session " + status.stdout.split("session: ")[1].split()[0])
