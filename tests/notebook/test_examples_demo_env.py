"""Every example notebook runs top to bottom in the environment `bash scripts/demo.sh` makes
(`pip install -e '.[demo]'`, no test extra) and its scripted agent says only what happened
(issue 39). Each notebook is executed once, by the test named in `EXAMPLE_TESTS`, through
`tests.support.demo_env.execute_example` (nbconvert, a real kernel, imports limited to the demo
package set)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from penguin_jupyter.testing.notebook_tools_script import ANALYSIS_CODE
from tests.support.demo_env import EXAMPLES, demo_env, execute_example
from tests.support.paths import REPO_ROOT

MIME = "application/vnd.penguin.transcript+json"

EXAMPLE_TESTS = {
    "quickstart.ipynb": "tests/notebook/test_notebook_demo.py",
    "explore-data.ipynb": "tests/notebook/test_explore_notebook.py",
    "dask-cluster.ipynb": "tests/notebook/test_summaries_dask_notebook.py",
    "agent-in-notebook.ipynb": "tests/notebook/test_examples_demo_env.py",
}


def test_every_example_is_executed_in_the_demo_environment_by_a_test():
    assert {path.name for path in EXAMPLES.glob("*.ipynb")} == set(EXAMPLE_TESTS)
    for name, test_file in EXAMPLE_TESTS.items():
        source = (REPO_ROOT / test_file).read_text(encoding="utf-8")
        assert "execute_example(" in source and (name in source or "NOTEBOOK" in source), test_file


def test_the_demo_environment_lacks_what_only_the_test_extra_installs(tmp_path):
    """The guard is real: polars (test extra only) is not importable, pandas (demo extra) is."""
    probe = (
        "import pandas, matplotlib, dask, distributed, penguin_jupyter\n"
        "try:\n    import polars\nexcept ModuleNotFoundError as exc:\n    print('blocked:', exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=demo_env(tmp_path / "guard"), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "blocked: No module named 'polars'"


@pytest.mark.kernel
def test_agent_in_notebook_runs_headless_and_says_it_could_not_insert_cells(tmp_path):
    """Before: headless, the scripted agent called notebook tools that were not offered and still
    answered "I added two cells below this one and ran the code cell"."""
    nb = execute_example("agent-in-notebook.ipynb", tmp_path)
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    outputs = [o for c in code_cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert not [o for o in outputs if o["output_type"] == "stream" and o["name"] == "stderr"]
    bundles = [o["data"][MIME] for o in outputs if MIME in o.get("data", {})]
    assert len(bundles) == 1 and bundles[0]["status"] == "completed"
    payloads = [m["payload"] for m in bundles[0]["messages"]]
    calls = [p for p in payloads if p["type"] == "tool_call"]
    assert [c["name"] for c in calls] == ["read_notebook", "run_python"]
    assert json.loads(calls[1]["arguments"])["code"] == ANALYSIS_CODE
    results = [p for p in payloads if p["type"] == "tool_call_output"]
    assert all(r.get("stop_reason", "completed") == "completed" for r in results)
    answer = [p["text"] for p in payloads if p["type"] == "text" and p.get("role") == "assistant"][-1]
    assert answer.startswith("This run has no notebook page linked to the kernel")
    assert "I added" not in answer and "ran the code cell" not in answer
    by_species = next(c for c in code_cells if "".join(c["source"]) == "by_species")
    table = "".join(by_species["outputs"][0]["data"]["text/plain"])
    assert "Gentoo" in table and "5116.7" in table
    assert len(code_cells) == 5  # nothing was inserted


@pytest.mark.kernel
def test_a_notebook_that_fails_after_starting_the_demo_leaves_nothing_behind(tmp_path):
    """Issue 39: Run All stopped at a failing cell, so `demo.stop()` never ran and the scripted
    server and its temporary data root were left behind. nbconvert shuts the kernel down as a
    frontend does; the demo's exit hook stops it."""
    import os
    from pathlib import Path

    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext penguin_jupyter"),
        nbformat.v4.new_code_cell(
            "from penguin_jupyter.notebook.demo import start_demo_model\n"
            "demo = start_demo_model()\n"
            "open('demo-root.txt', 'w').write(f'{demo.root} {demo.server.port}')"
        ),
        nbformat.v4.new_code_cell("import polars  # not in the demo environment: the run stops here"),
        nbformat.v4.new_code_cell("demo.stop()"),
    ]
    nbformat.write(nb, str(tmp_path / "fails.ipynb"))
    jupyter = Path(sys.executable).with_name("jupyter")
    done = subprocess.run(
        [str(jupyter), "nbconvert", "--to", "notebook", "--execute", "fails.ipynb", "--output", "fails.out.ipynb"],
        cwd=tmp_path, env=demo_env(tmp_path / ".guard"), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr
    root, port = (tmp_path / "demo-root.txt").read_text().split()
    assert not os.path.exists(root), "the demo's temporary data root was left behind"
    import socket

    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()
