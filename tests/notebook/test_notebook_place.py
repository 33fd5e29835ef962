"""Where a kernel finds its notebook when the host does not say (a remote kernel): the page's
hello against the deployment's mapping or the server's root, `KERNEL_WORKING_DIR`, else the
kernel's working directory with one line saying why (link/notebook_place.py,
runtime/workspace.py). The real gateway run is tests/browser/test_browser_gateway.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from penguin_jupyter.notebook.link.notebook_place import notebook_place
from penguin_jupyter.notebook.runtime.workspace import choose_workspace


def _notebook(root: Path, relative: str) -> Path:
    path = root.joinpath(*relative.split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    return path


def test_the_hosts_name_wins_over_the_page(tmp_path):
    local = _notebook(tmp_path / "local", "a.ipynb")
    page_root = tmp_path / "server"
    _notebook(page_root, "x/b.ipynb")
    place = notebook_place({}, {"path": "x/b.ipynb", "server_root": str(page_root)}, {"JPY_SESSION_NAME": str(local)})
    assert (place.notebook, place.found_by) == (str(local), "host")


def test_the_page_path_under_the_server_root_the_page_reports(tmp_path):
    notebook = _notebook(tmp_path / "server", "project/remote.ipynb")
    place = notebook_place({}, {"path": "project/remote.ipynb", "server_root": str(tmp_path / "server")}, {})
    assert place.notebook == str(notebook) and place.directory == str(notebook.parent)
    assert place.found_by == "page"
    workspace, why = choose_workspace(None, {}, {}, {"path": "project/remote.ipynb", "server_root": str(tmp_path / "server")})
    assert (workspace, why) == (str(notebook.parent.resolve()), None)


def test_the_deployments_mapping_comes_before_the_pages_server_root(tmp_path):
    mounted = _notebook(tmp_path / "mnt", "project/remote.ipynb")
    _notebook(tmp_path / "server", "project/remote.ipynb")  # the same path exists on both sides
    hello = {"path": "project/remote.ipynb", "server_root": str(tmp_path / "server")}
    place = notebook_place({}, hello, {"KERNEL_PENGUIN_NOTEBOOK_ROOT": str(tmp_path / "mnt")})
    assert place.notebook == str(mounted)
    # a mapping where the file is not falls through to the server's root
    place = notebook_place({}, hello, {"PENGUIN_NOTEBOOK_ROOT": str(tmp_path / "nowhere")})
    assert place.notebook == str(tmp_path / "server" / "project" / "remote.ipynb")


def test_a_path_leaving_the_root_is_never_joined(tmp_path):
    _notebook(tmp_path, "secret.ipynb")
    root = tmp_path / "server"
    root.mkdir()
    place = notebook_place({}, {"path": "../secret.ipynb", "server_root": str(root)}, {})
    assert place.notebook is None and place.directory is None


def test_the_gateways_working_dir_gives_the_folder_and_the_page_its_file(tmp_path):
    notebook = _notebook(tmp_path / "server", "project/remote.ipynb")
    env = {"KERNEL_WORKING_DIR": str(notebook.parent)}
    before_hello = notebook_place({}, None, env)
    assert (before_hello.notebook, before_hello.directory, before_hello.found_by) == (
        None,
        str(notebook.parent.resolve()),
        "gateway",
    )
    after_hello = notebook_place({}, {"path": "project/remote.ipynb"}, env)  # no server_root in the hello
    assert after_hello.notebook == str(notebook.parent.resolve() / "remote.ipynb")


def test_a_notebook_the_kernel_cannot_see_falls_back_to_the_cwd_and_says_why(tmp_path, monkeypatch):
    kernel_cwd = tmp_path / "gateway-cwd"
    kernel_cwd.mkdir()
    monkeypatch.chdir(kernel_cwd)
    hello = {"path": "project/remote.ipynb", "server_root": "/srv/elsewhere"}
    env = {"KERNEL_WORKING_DIR": "/srv/elsewhere/project"}
    workspace, why = choose_workspace(None, {}, env, hello)
    assert workspace == str(kernel_cwd.resolve())
    assert why is not None and "\n" not in why
    assert f"the kernel's working directory {kernel_cwd.resolve()}" in why
    assert "/srv/elsewhere/project/remote.ipynb" in why and "KERNEL_PENGUIN_NOTEBOOK_ROOT" in why
    # only the page's relative path, no root anywhere: said too
    _, why = choose_workspace(None, {}, {}, {"path": "project/remote.ipynb"})
    assert why is not None and "project/remote.ipynb" in why


def test_a_kernel_nobody_named_a_notebook_for_stays_quiet(tmp_path, monkeypatch):
    """nbconvert / papermill / a terminal: the working directory, no note."""
    monkeypatch.chdir(tmp_path)
    assert choose_workspace(None, {}, {}, None) == (str(tmp_path.resolve()), None)
    assert choose_workspace(None, {}, {}, {"path": ""}) == (str(tmp_path.resolve()), None)


# --- a real kernel started the way a gateway starts it: another directory, no JPY_SESSION_NAME -----


def _gateway_like_kernel(tmp_path, working_dir: str):
    import os

    from penguin_jupyter.testing import ScriptedModelServer
    from tests.support.kernel import KernelHarness, kernel_env
    from tests.support.session import configure_model

    server = ScriptedModelServer(
        [{"tool_calls": [{"name": "exec_command", "id": "call_pwd", "arguments": {"cmd": "pwd"}}]}, {"text": "ok"}]
    ).start()
    configure_model(Path(os.environ["PENGUIN_HOME"]), server)
    kernel_cwd = tmp_path / "gateway-cwd"
    kernel_cwd.mkdir()
    env = kernel_env({"KERNEL_WORKING_DIR": working_dir})
    env.pop("JPY_SESSION_NAME", None)
    kernel = KernelHarness(str(kernel_cwd), env)
    assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return server, kernel, kernel_cwd


def _tool_outputs(server) -> str:
    from tests.support.session import request_messages

    return "\n".join(text for request in server.requests for role, text in request_messages(request) if role == "tool")


@pytest.mark.kernel
def test_a_gateway_kernel_works_in_the_notebooks_folder_from_kernel_working_dir(tmp_path):
    folder = tmp_path / "server" / "project"
    folder.mkdir(parents=True)
    server, kernel, _ = _gateway_like_kernel(tmp_path, str(folder))
    try:
        result = kernel.execute("%%penguin --approve allow-all\nWhere am I?", cell_id="cell-1", timeout=180)
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert str(folder.resolve()) in _tool_outputs(server)
        assert "working directory" not in result.stderr
    finally:
        kernel.close()
        server.stop()


@pytest.mark.kernel
def test_a_gateway_kernel_that_cannot_see_the_folder_says_which_directory_it_uses(tmp_path):
    server, kernel, kernel_cwd = _gateway_like_kernel(tmp_path, "/srv/not-on-this-host/project")
    try:
        result = kernel.execute("%%penguin --approve allow-all\nWhere am I?", cell_id="cell-1", timeout=180)
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert str(kernel_cwd.resolve()) in _tool_outputs(server)
        lines = [line for line in result.stderr.splitlines() if "the kernel's working directory" in line]
        assert len(lines) == 1, result.stderr
        assert str(kernel_cwd.resolve()) in lines[0] and "/srv/not-on-this-host/project" in lines[0]
        assert "KERNEL_PENGUIN_NOTEBOOK_ROOT" in lines[0]
    finally:
        kernel.close()
        server.stop()


@pytest.mark.kernel
def test_a_gateway_kernel_replays_the_saved_transcript_once_the_page_says_where_the_notebook_is(tmp_path):
    """Restart & Run All through a gateway: the `%%penguin` cell is sent before the page's hello
    (which names the notebook relative to `server_root`); the cell waits for it, finds the saved
    file and shows its transcript without a model request."""
    import os
    import uuid

    import nbformat

    from penguin_jupyter.notebook.link.frontend_bridge import COMM_TARGET
    from penguin_jupyter.notebook.transcript.transcript_bundle import TRANSCRIPT_MIME, make_bundle
    from penguin_jupyter.omni import assistant_text, user_text
    from penguin_jupyter.testing import ScriptedModelServer
    from tests.support.forged_notebook import write_notebook
    from tests.support.kernel import KernelHarness, kernel_env
    from tests.support.session import configure_model

    root = tmp_path / "server"
    (root / "project").mkdir(parents=True)
    source = "%%penguin\nSummarize the data"
    page_target = "penguin-notebook-page"  # the page-opened bridge's kernel target
    bundle = make_bundle(
        [user_text("Summarize the data"), assistant_text("SAVED-ANSWER: three species.")],
        session_info={"session_id": "session-saved", "provider": "openai", "model_id": "m", "workspace": str(root)},
        status="completed",
    )
    cell = nbformat.v4.new_code_cell(source, id="agent", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data={TRANSCRIPT_MIME: bundle, "text/plain": "t"})]
    write_notebook(root / "project" / "remote.ipynb", [cell])

    server = ScriptedModelServer([{"text": "a new answer"}]).start()
    configure_model(Path(os.environ["PENGUIN_HOME"]), server)
    kernel_cwd = tmp_path / "gateway-cwd"
    kernel_cwd.mkdir()
    env = kernel_env()
    for name in ("JPY_SESSION_NAME", "KERNEL_WORKING_DIR"):
        env.pop(name, None)
    kernel = KernelHarness(str(kernel_cwd), env)
    try:
        loaded = kernel.execute("%load_ext penguin_jupyter")
        comm_id = next(
            m["content"]["comm_id"]
            for m in loaded.of_type("comm_open")
            if m["content"].get("target_name") == COMM_TARGET
        )
        hello = {"op": "hello", "version": 1, "frontend": "jupyterlab", "path": "project/remote.ipynb",
                 "server_root": str(root), "subshells": False, "metadata": None}  # fmt: skip
        sent: list[bool] = []

        def say_hello_once_the_cell_runs(msg, _result):
            """What the page sends: its hello on the kernel's comm (bridge version 1) and on a comm
            of its own to the page target (the page-opened bridge: a kernel without that target
            closes it and logs one line)."""
            if not sent and msg["msg_type"] == "status" and msg["content"]["execution_state"] == "busy":
                sent.append(True)
                session = kernel.kc.session
                kernel.kc.shell_channel.send(session.msg("comm_msg", {"comm_id": comm_id, "data": hello}))
                page_comm = {"comm_id": uuid.uuid4().hex, "target_name": page_target, "data": {**hello, "page_id": "p1"}}
                kernel.kc.shell_channel.send(session.msg("comm_open", page_comm))

        result = kernel.execute(source, cell_id="agent", on_message=say_hello_once_the_cell_runs, timeout=120)
    finally:
        kernel.close()
        server.stop()
    assert sent and result.reply["content"]["status"] == "ok", result.stderr
    assert "the model was not called" in result.notes, result.stderr
    assert "SAVED-ANSWER" in str(result.final_bundles() or [m["content"] for m in result.messages])
    assert server.requests == []


# --- a gateway kernel no page says hello to: the cell's id finds the saved notebook, or one line says why not ---


def _saved_penguin_notebook(path: Path, cell_id: str, source: str, answer: str) -> None:
    import nbformat

    from penguin_jupyter.notebook.transcript.transcript_bundle import TRANSCRIPT_MIME, make_bundle
    from penguin_jupyter.omni import assistant_text, user_text
    from tests.support.forged_notebook import write_notebook

    bundle = make_bundle(
        [user_text(source.partition("\n")[2]), assistant_text(answer)],
        session_info={"session_id": "session-saved", "provider": "openai", "model_id": "m", "workspace": str(path.parent)},
        status="completed",
    )
    cell = nbformat.v4.new_code_cell(source, id=cell_id, execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data={TRANSCRIPT_MIME: bundle, "text/plain": "t"})]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_notebook(path, [cell])
    notebook = json.loads(path.read_text())
    notebook["metadata"]["penguin"] = {"session_id": "session-of-the-saved-notebook"}  # what a save keeps
    path.write_text(json.dumps(notebook))


def _pageless_gateway_kernel(tmp_path: Path, folder: Path, answers: list[str]):
    """A kernel started as a gateway starts it (another directory, `KERNEL_WORKING_DIR` = the
    notebook's folder, no `JPY_SESSION_NAME`) that no notebook page ever says hello to: the
    cells carry JupyterLab's cell ids, but the page went away (reloaded right after Restart & Run
    All) or its hello did not come in time."""
    import os

    from penguin_jupyter.testing import ScriptedModelServer
    from tests.support.kernel import KernelHarness, kernel_env
    from tests.support.session import configure_model

    server = ScriptedModelServer([{"text": answer} for answer in answers]).start()
    configure_model(Path(os.environ["PENGUIN_HOME"]), server)
    kernel_cwd = tmp_path / "gateway-cwd"
    kernel_cwd.mkdir()
    env = kernel_env({"KERNEL_WORKING_DIR": str(folder)})
    env.pop("JPY_SESSION_NAME", None)
    kernel = KernelHarness(str(kernel_cwd), env)
    assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return server, kernel


@pytest.mark.kernel
def test_a_gateway_kernel_no_page_answers_finds_the_saved_transcript_by_the_cells_id(tmp_path):
    folder = tmp_path / "server" / "project"
    source = "%%penguin\nSummarize the data"
    _saved_penguin_notebook(folder / "remote.ipynb", "agent", source, "SAVED-ANSWER: three species.")
    (folder / "other.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    server, kernel = _pageless_gateway_kernel(tmp_path, folder, ["a new answer"])
    try:
        result = kernel.execute(source, cell_id="agent", timeout=120)
        resumed = kernel.execute("%%penguin\nAnd now?", cell_id="next", timeout=120)
    finally:
        kernel.close()
        server.stop()
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert "the model was not called" in _said(result), _said(result)
    assert "SAVED-ANSWER" in str(result.final_bundles())
    assert "asking the model" not in _said(result)
    # the notebook it found is this kernel's from then on: a new cell asks the model without the
    # "not told its notebook" line a kernel that never found its notebook prints
    assert resumed.reply["content"]["status"] == "ok", _said(resumed)
    assert "asking the model" not in _said(resumed), _said(resumed)
    assert len(server.requests) == 1


@pytest.mark.kernel
def test_a_gateway_kernel_that_cannot_identify_its_notebook_says_so_before_asking_the_model(tmp_path):
    folder = tmp_path / "server" / "project"
    source = "%%penguin\nSummarize the data"
    _saved_penguin_notebook(folder / "remote.ipynb", "agent", source, "SAVED-ANSWER: one.")
    _saved_penguin_notebook(folder / "remote-Copy1.ipynb", "agent", source, "SAVED-ANSWER: another.")
    server, kernel = _pageless_gateway_kernel(tmp_path, folder, ["first new answer", "second new answer"])
    try:
        unsaved = kernel.execute("%%penguin\nA cell never saved", cell_id="fresh", timeout=120)
        copies = kernel.execute(source, cell_id="agent", timeout=120)
    finally:
        kernel.close()
        server.stop()
    assert len(server.requests) == 2
    lines = [line for line in _said(unsaved).splitlines() if "asking the model" in line]
    assert len(lines) == 1, _said(unsaved)
    assert "this kernel was not told its notebook and no notebook page said where it is" in lines[0]
    assert f"no saved notebook in {folder.resolve()} holds this cell" in lines[0], lines[0]
    lines = [line for line in _said(copies).splitlines() if "asking the model" in line]
    assert len(lines) == 1, _said(copies)
    assert f"2 saved notebooks in {folder.resolve()} hold this cell" in lines[0], lines[0]
    assert "remote.ipynb" in lines[0] and "remote-Copy1.ipynb" in lines[0]
    assert "SAVED-ANSWER" not in str(copies.final_bundles())  # neither copy is guessed


def test_the_cell_id_search_opens_only_regular_notebook_files(tmp_path):
    """A FIFO or a device named *.ipynb in the folder is never opened (it would block or never end)."""
    import os

    from penguin_jupyter.notebook.link.notebook_file import notebooks_holding_cell

    _saved_penguin_notebook(tmp_path / "real.ipynb", "agent", "%%penguin\nHi", "hello")
    os.mkfifo(tmp_path / "pipe.ipynb")
    (tmp_path / "zero.ipynb").symlink_to("/dev/zero")
    (tmp_path / "other.ipynb").write_text('{"cells": [{"id": "agent-2"}]}')  # an id that only starts alike
    assert notebooks_holding_cell(str(tmp_path), "agent") == [str(tmp_path / "real.ipynb")]
    assert notebooks_holding_cell(str(tmp_path / "missing"), "agent") == []


def _said(result) -> str:
    """What a cell told the user: its notes (information) and stderr (warnings)."""
    return result.notes + result.stderr
