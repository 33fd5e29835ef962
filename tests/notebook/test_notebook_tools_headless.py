"""The notebook tools without a notebook frontend (nbconvert): `read_notebook` reads the saved
.ipynb (found by the running cell's source, since nbclient does not tell the kernel its notebook)
and says it may be stale; insert/edit/run/delete are not offered, and the system prompt says why.
Plus the pure pieces: cell formatting, the saved-transcript check, `{{match:…}}` placeholders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from penguin_jupyter.notebook.kernel_tools.cell_outputs import cells_text, error_text
from penguin_jupyter.notebook.link.notebook_file import locate_notebook, normalize_cell_source
from penguin_jupyter.notebook.link.saved_notebook_cache import SavedNotebookCache
from penguin_jupyter.testing.placeholders import resolve
from tests.support.kernel import REPO_ROOT

MIME = "application/vnd.penguin.transcript+json"
SETUP = """from penguin_jupyter.notebook.demo import start_demo_model
demo = start_demo_model(entries=[
    {"tool_calls": [{"name": "read_notebook", "id": "call_read", "arguments": {}}]},
    {"text": "I read it."},
])"""


@pytest.mark.kernel
def test_under_nbconvert_read_notebook_reads_the_saved_file_and_write_tools_are_absent(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext penguin_jupyter"),
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_markdown_cell("# Saved heading"),
        nbformat.v4.new_code_cell("%%penguin --approve allow-all\nWhat is in this notebook?"),
        nbformat.v4.new_code_cell('print(sorted(t["function"]["name"] for t in demo.server.requests[0]["tools"]))'),
    ]
    nbformat.write(nb, str(tmp_path / "headless.ipynb"))
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("jupyter")), "nbconvert", "--to", "notebook", "--execute",
         "headless.ipynb", "--output", "out.ipynb", "--ExecutePreprocessor.timeout=120"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = json.loads((tmp_path / "out.ipynb").read_text())
    bundle = next(o["data"][MIME] for o in out["cells"][3]["outputs"] if MIME in o.get("data", {}))
    outputs = [m["payload"] for m in bundle["messages"] if m["payload"].get("type") == "tool_call_output"]
    text = outputs[0]["output"]
    assert outputs[0].get("stop_reason", "completed") == "completed"
    assert "read from the saved file" in text and "may be stale" in text
    assert "# Saved heading" in text and "the running %%penguin cell" not in text  # no cell ids headless
    offered = "".join(out["cells"][4]["outputs"][0]["text"])
    assert "'read_notebook'" in offered and "'propose_cell'" in offered
    assert not [name for name in ("insert_cell", "edit_cell", "run_cell", "delete_cell") if name in offered]


def test_system_prompt_and_tools_without_a_frontend():
    from penguin_jupyter.notebook.kernel_tools.notebook_cells import notebook_tools, notebook_tools_prompt
    from penguin_jupyter.notebook.link.notebook_link import NotebookLink

    class Shell:
        def __init__(self) -> None:
            self.user_ns: dict[str, object] = {}
            self.events = None
            self.kernel = None

    link = NotebookLink(Shell(), None)
    assert [tool.name for tool in notebook_tools(link)] == ["read_notebook"]
    prompt = notebook_tools_prompt(link)
    assert "unavailable" in prompt and "propose_cell" in prompt and "nbconvert" in prompt


def test_cells_text_bounds_outputs_trims_tracebacks_and_keeps_images():
    png = "iVBORw0KGgo" + "A" * 40
    cells = [
        {"index": 0, "id": "a", "cell_type": "markdown", "source": "# Title", "outputs": []},
        {
            "index": 1, "id": "b", "cell_type": "code", "source": "x", "execution_count": 3,
            "outputs": [
                {"output_type": "stream", "name": "stdout", "text": "y" * 5000},
                {"output_type": "display_data", "data": {"image/png": png, "text/plain": "<Figure>"}},
                {"output_type": "error", "ename": "ValueError", "evalue": "bad",
                 "traceback": [f"\x1b[31mline {i}\x1b[0m" for i in range(40)]},
            ],
        },
        {"index": 2, "id": "c", "cell_type": "code", "source": "%%penguin\nhi", "outputs": [
            {"output_type": "display_data", "data": {MIME: {"status": "completed"}, "text/html": "<div/>"}}]},
    ]  # fmt: skip
    rendered = cells_text(cells, running_cell_id="c")
    assert "### cell 0 · id a · markdown" in rendered.text
    assert "### cell 1 · id b · code · [3]" in rendered.text
    assert "more chars]" in rendered.text and "y" * 2100 not in rendered.text
    assert rendered.images == [f"data:image/png;base64,{png}"] and "[image 1: image/png]" in rendered.text
    assert "the running %%penguin cell" in rendered.text and "[penguin transcript of a Task (completed)]" in rendered.text
    err = error_text(cells[1]["outputs"][2])
    assert err.startswith("ValueError: bad") and "\x1b" not in err and "line 39" in err and "line 0" not in err


def test_completed_transcript_needs_the_same_cell_the_same_source_and_a_completed_task(tmp_path):
    done = nbformat.v4.new_output("display_data", data={MIME: {"status": "completed"}})
    failed = nbformat.v4.new_output("display_data", data={MIME: {"status": "failed"}})
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%%penguin  --approve ask\nGo", id="p1", outputs=[done]),
        nbformat.v4.new_code_cell("%%penguin\nAgain", id="p2", outputs=[failed]),
    ]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, str(path))
    saved = SavedNotebookCache().index(str(path))
    assert saved.completed_bundle("p1", "%%penguin --approve ask\nGo\n") is not None  # spacing ignored
    assert saved.completed_bundle("p1", "%%penguin --approve ask\nGo now") is None  # edited
    assert saved.completed_bundle("p2", "%%penguin\nAgain") is None  # not completed
    assert saved.completed_bundle(None, "%%penguin --approve ask\nGo") is None  # no cell id
    assert normalize_cell_source("  %%penguin   --new\nbody\n\n") == "%%penguin --new\nbody"
    assert locate_notebook(str(tmp_path), "%%penguin\nAgain") == str(path)
    assert locate_notebook(str(tmp_path), "%%penguin\nnowhere") is None


def test_match_placeholders_take_values_from_the_request():
    request = {"messages": [
        {"role": "tool", "content": "Inserted a code cell with id old-1 at index 2."},
        {"role": "tool", "content": [{"type": "text", "text": "Inserted a code cell with id new-2 at index 3."}]},
    ]}  # fmt: skip
    args = json.dumps({"cell_id": "{{match:code cell with id (\\S+) at}}"})
    assert json.loads(resolve(args, request)) == {"cell_id": "new-2"}  # newest message first
    missing = json.dumps({"cell_id": "{{match:nothing (\\d+)}}"})
    assert resolve(missing, request) == missing
