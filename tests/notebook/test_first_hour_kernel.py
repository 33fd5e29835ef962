"""The first hour, in a real kernel (issue 39): a provider's key alone runs a `%%penguin` cell
on that provider's default model, and a failure waiting cannot fix ends the cell at once, naming
its cause. The model is the scripted server (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` point the
provider's default endpoint at it)."""

from __future__ import annotations

import socket

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env

pytestmark = pytest.mark.kernel
MIME = "application/vnd.penguin.transcript+json"


def _kernel(tmp_path, extra: dict[str, str]) -> KernelHarness:
    notebook_dir = tmp_path / "notebooks"
    notebook_dir.mkdir(exist_ok=True)
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb"), **extra})
    harness = KernelHarness(str(tmp_path), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def test_a_key_in_the_folders_env_runs_the_cell_on_the_providers_default_model(tmp_path):
    """Before: "No model is configured" with a key at hand."""
    key = "sk-ant-test-key-0123456789"
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / ".env").write_text(f"ANTHROPIC_API_KEY={key}\n")
    with ScriptedModelServer(["Hello from the default model."], api_key=key) as server:
        kernel = _kernel(tmp_path, {"ANTHROPIC_BASE_URL": server.root_url})
        try:
            models = kernel.execute("%penguin models")
            result = kernel.execute("%%penguin\nSay hello.", timeout=120)
        finally:
            kernel.close()
        assert [call.protocol for call in server.calls] == ["anthropic-messages"]
        assert server.requests[0]["model"] == "claude-sonnet-5"
    assert "anthropic/claude-sonnet-5  (ANTHROPIC_API_KEY)  ← in use: ANTHROPIC_API_KEY is set in .env" in models.stdout
    assert models.stdout.index("openai/gpt-5.5") < models.stdout.index("anthropic/claude-sonnet-5")
    assert (
        "penguin: no model is configured, so ANTHROPIC_API_KEY from .env selects anthropic/claude-sonnet-5"
        in result.notes
    )
    assert result.stderr == ""
    bundle = result.final_bundles()[-1][MIME]
    assert bundle["status"] == "completed"
    assert (bundle["session"]["provider"], bundle["session"]["model_id"]) == ("anthropic", "claude-sonnet-5")
    assert key not in str(result.messages)


def _closed_local_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_local_endpoint_ends_the_cell_at_the_first_attempt_naming_it(tmp_path):
    """Before: five retries over a minute, each "Request timeout: Connection error."."""
    port = _closed_local_port()
    kernel = _kernel(tmp_path, {"OPENAI_API_KEY": "sk-test-key-0123456789", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"})
    try:
        result = kernel.execute("%%penguin\nhello", timeout=120)
    finally:
        kernel.close()
    bundle = result.final_bundles()[-1]
    events = [m["payload"] for m in bundle[MIME]["messages"] if m["payload"]["type"] == "request_end"]
    assert len(events) == 1 and "retry_in_ms" not in events[0]
    cause = f"connection refused by 127.0.0.1:{port} (Connection refused); is the model server running?"
    assert events[0]["error_message"] == cause
    assert f"Request failed: {cause}" in bundle["text/html"]
    assert "Request timeout" not in bundle["text/html"]


# --- trying it needs nothing: %penguin demo --------------------------------------------------------


def test_penguin_demo_runs_the_scripted_task_then_says_it_is_done_and_stops_at_exit(tmp_path):
    import json
    import os
    from pathlib import Path

    kernel = _kernel(tmp_path, {})
    stopped_by_exit: dict = {}
    try:
        helped = kernel.execute("%penguin help").stdout
        started = kernel.execute("%penguin demo")
        kernel.execute("%penguin approve allow-all")
        task = kernel.execute(
            "%%penguin\nList the files here, read sales.csv and write a short revenue summary to summary.md.",
            timeout=120,
        )
        after = kernel.execute("%%penguin\nAnd now plot it.", timeout=120)
        where = kernel.execute(
            "import json, os\n"
            "from penguin_jupyter.notebook.demo import running_demo\n"
            "d = running_demo()\n"
            "print(json.dumps({'root': str(d.root), 'port': d.server.port, 'home': os.environ['PENGUIN_HOME']}))"
        )
        stopped_by_exit = json.loads(where.stdout.strip().splitlines()[-1])
    finally:
        kernel.close(graceful=True)  # as JupyterLab's shutdown or restart: the demo's exit hook runs
    assert "%penguin demo" in helped and "demo [stop]" in helped
    assert started.stdout.startswith("penguin: offline demo started — a scripted model on 127.0.0.1")
    assert "%%penguin\n    List the files here" in started.stdout and "`%penguin demo stop`" in started.stdout
    assert started.stderr == ""
    bundle = task.final_bundles()[-1][MIME]
    assert bundle["status"] == "completed"
    calls = [m["payload"]["name"] for m in bundle["messages"] if m["payload"]["type"] == "tool_call"]
    assert calls == ["exec_command", "read_file", "write_file"]
    assert (tmp_path / "notebooks" / "summary.md").is_file()
    # the script is done: the demo model says so and how to go on, as an answer, not an error
    done = after.final_bundles()[-1][MIME]
    assert done["status"] == "completed"
    assert "offline demo model" in json.dumps(done["messages"]) and "%penguin demo stop" in json.dumps(done["messages"])
    assert after.stderr == ""
    # the kernel's exit stopped the server and removed the temporary data root
    assert stopped_by_exit["home"] == stopped_by_exit["root"]
    assert not Path(stopped_by_exit["root"]).exists()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", stopped_by_exit["port"]), timeout=2).close()
    assert os.environ.get("PENGUIN_HOME") != stopped_by_exit["root"]


def test_penguin_demo_stop_restores_the_data_root(tmp_path):
    kernel = _kernel(tmp_path, {})
    try:
        before = kernel.execute("import os; print(os.environ['PENGUIN_HOME'])").stdout.strip()
        kernel.execute("%penguin demo")
        during = kernel.execute("import os; print(os.environ['PENGUIN_HOME'])").stdout.strip()
        stop = kernel.execute("%penguin demo stop")
        again = kernel.execute("%penguin demo stop")
        after = kernel.execute("import os; print(os.environ['PENGUIN_HOME'])").stdout.strip()
        bad = kernel.execute("%penguin demo now")
    finally:
        kernel.close()
    assert during != before and after == before
    assert stop.stdout.strip() == "penguin: demo stopped"
    assert again.stdout.strip() == "penguin: no demo is running"
    assert bad.stderr.strip() == "penguin: usage: %penguin demo [stop]"
    from pathlib import Path

    assert not Path(during).exists()


# --- the stale "cannot resume session" warning ----------------------------------------------------


def test_a_session_this_data_root_never_recorded_is_not_a_warning_after_each_demo_start(tmp_path):
    """Before: the first cell after each demo start warned "cannot resume session …" (the id in
    the notebook's metadata lived in an earlier, deleted data root) and saved it into the output."""
    import nbformat

    notebook_dir = tmp_path / "notebooks"
    notebook_dir.mkdir()
    gone = "session-2026-01-01-00-00-00-0123abcd"
    nb = nbformat.v4.new_notebook()
    nb.metadata["penguin"] = {"session_id": gone}
    nbformat.write(nb, str(notebook_dir / "analysis.ipynb"))
    kernel = _kernel(tmp_path, {})
    try:
        results = []
        for _ in range(2):
            kernel.execute("from penguin_jupyter.notebook.demo import start_demo_model\nstart_demo_model()")
            results.append(kernel.execute("%%penguin --approve allow-all\nSummarise sales.csv.", timeout=120))
    finally:
        kernel.close()
    for result in results:
        assert "cannot resume" not in result.stderr, result.stderr
        assert gone not in str(result.messages)
        assert result.final_bundles()[-1][MIME]["status"] == "completed"


# --- no internal log lines in cells ---------------------------------------------------------------


def test_a_hard_clamp_of_the_output_cap_does_not_print_into_the_cell(tmp_path):
    """Before: `output cap clamped hard: max_tokens 32000 -> 512 …` on the cell's stderr."""
    import os
    from pathlib import Path

    from penguin_jupyter.state import add_model

    with ScriptedModelServer(["fine"]) as server:
        add_model(
            Path(os.environ["PENGUIN_HOME"]), "default_project", provider="local", model_id="small",
            base_url=server.url, api_key="sk-test-key-0123456789", client_type="openai-chat",
            context_window=4096, default=True,
        )  # fmt: skip
        kernel = _kernel(tmp_path, {})
        try:
            result = kernel.execute("%%penguin\nhello", timeout=120)
        finally:
            kernel.close()
        body = server.requests[0]
        assert (body.get("max_tokens") or body["max_completion_tokens"]) < 32000 / 2  # the clamp did happen
    assert "clamped" not in result.stderr and result.stderr == ""
    assert result.final_bundles()[-1][MIME]["status"] == "completed"


# --- big prompts ----------------------------------------------------------------------------------


def _configure(server: ScriptedModelServer, context_window: int) -> None:
    import os
    from pathlib import Path

    from penguin_jupyter.state import add_model

    add_model(
        Path(os.environ["PENGUIN_HOME"]), "default_project", provider="local", model_id="m",
        base_url=server.url, api_key="sk-test-key-0123456789", client_type="openai-chat",
        context_window=context_window, default=True,
    )  # fmt: skip


def test_a_prompt_larger_than_the_context_window_is_refused_before_sending(tmp_path):
    with ScriptedModelServer(["never"]) as server:
        _configure(server, 32_768)
        kernel = _kernel(tmp_path, {})
        try:
            result = kernel.execute("%%penguin\n" + "x" * 200_000, timeout=120)
        finally:
            kernel.close()
        assert server.requests == []
    assert len(result.stderr.strip().splitlines()) == 1
    line = result.stderr.strip()
    assert line.startswith("penguin: this prompt is about 50,")
    assert "more than the context window of local/m (32,768 tokens), so nothing was sent" in line
    assert not result.final_bundles()


def test_a_one_megabyte_prompt_is_saved_once_and_folds_in_the_transcript(tmp_path):
    """Before: a 1 MB prompt made a 3 MB .ipynb (the cell's source, the bundle's user message and
    the HTML transcript), shown unfolded."""
    prompt = "".join(f"row {i:06d}, sensor reading {i * 7 % 1000:03d}, ok\n" for i in range(30_000))
    assert len(prompt) > 1_000_000
    with ScriptedModelServer(["Read it."]) as server:
        _configure(server, 1_048_576)
        kernel = _kernel(tmp_path, {})
        try:
            result = kernel.execute("%%penguin\nSummarise these readings:\n" + prompt, timeout=180)
        finally:
            kernel.close()
        sent = str(server.requests[0])
        assert "row 000000," in sent and "row 029999, sensor reading 993, ok" in sent  # all of it went
    saved = result.final_bundles()[-1]
    import json

    size = len(json.dumps(saved))
    assert size < 40_000, size  # the cell's outputs: far below the prompt (was over 2 MB)
    user = next(m["payload"]["text"] for m in saved[MIME]["messages"] if m["payload"].get("role") == "user")
    assert user.startswith("Summarise these readings:\nrow 000000,")
    assert "more characters of this prompt are not kept in the transcript" in user
    html = saved["text/html"]
    assert "<details><summary>… " in html and " more lines</summary>" in html
    assert "row 029999" not in html


# --- undo -----------------------------------------------------------------------------------------


def test_a_task_that_changed_nothing_offers_no_undo_in_the_kernel(tmp_path):
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_ls", "arguments": {"cmd": "ls"}}]},
        {"text": "Two files."},
    ]
    with ScriptedModelServer(script) as server:
        _configure(server, 32_768)
        kernel = _kernel(tmp_path, {})
        try:
            task = kernel.execute("%%penguin --approve allow-all\nWhat is here?", timeout=120)
            undo = kernel.execute("%penguin undo")
        finally:
            kernel.close()
    bundle = task.final_bundles()[-1][MIME]
    assert bundle["status"] == "completed" and "undo" not in bundle  # no Undo button
    assert "nothing to undo" in undo.stderr and "nothing needed restoring" not in undo.stdout
