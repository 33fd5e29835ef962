"""`examples/explore-data.ipynb` executes headless (`jupyter nbconvert --execute`, a real kernel,
the scripted exploration model, the demo environment's package set) and its saved transcript
holds the plot and the proposed cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from penguin_jupyter.notebook.transcript.saved_images import with_saved_images
from penguin_jupyter.testing.explore_script import CLEANING_CODE, SUMMARY_CODE
from tests.support.demo_env import execute_example

pytestmark = pytest.mark.kernel
MIME = "application/vnd.penguin.transcript+json"


def _execute(tmp_path: Path) -> dict:
    return execute_example("explore-data.ipynb", tmp_path)


def _payloads(data: dict, kind: str) -> list[dict]:
    return [m["payload"] for m in data["messages"] if m["payload"].get("type") == kind]


def test_explore_notebook_executes_headless_with_plot_and_proposed_cell(tmp_path):
    nb = _execute(tmp_path)
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    outputs = [o for c in code_cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    bundles = [o["data"] for o in outputs if MIME in o.get("data", {})]
    assert len(bundles) == 1
    html = "".join(bundles[0]["text/html"])  # a saved notebook stores multi-line text as a list
    assert "data:image" not in json.dumps(bundles[0][MIME])  # the plot is saved once, in the HTML
    data = with_saved_images(bundles[0][MIME], html)  # as every reader puts it back
    assert data["status"] == "completed"
    assert str(tmp_path) not in json.dumps(data["session"])  # a saved header names no local path

    calls = _payloads(data, "tool_call")
    assert [c["name"] for c in calls] == ["inspect_variables", "run_python", "run_python", "propose_cell"]
    results = {o["tool_call_id"]: o for o in _payloads(data, "tool_call_output")}
    assert all(o.get("stop_reason", "completed") == "completed" for o in results.values())

    # The model inspected the DataFrame loaded by the notebook's own cell.
    inspected = results["call_explore_inspect"]["output"]
    assert inspected.startswith("penguins: pandas DataFrame, 19 rows × 6 columns\ncolumns (dtype, nulls):\n")
    assert "  body_mass_g: float64, 2 null" in inspected

    # run_python computed the summary in the kernel; the next cell shows the variable it left.
    assert json.loads(calls[1]["arguments"])["code"] == SUMMARY_CODE
    summary = results["call_explore_summary"]["output"]
    assert summary.startswith("sex labels: {'female': 7, 'male': 5, 'MALE': 3, nan: 2, ")
    assert "Gentoo" in summary and "5116.7" in summary
    by_species = next(c for c in code_cells if "".join(c["source"]) == "by_species")
    table = "".join(by_species["outputs"][0]["data"]["text/plain"])
    assert "Chinstrap" in table and "217.5" in table

    # The plot is a PNG on the tool output and in the self-contained HTML transcript.
    assert results["call_explore_plot"]["output"] == "Text(0.5, 1.0, 'Bill vs flipper length by species')"
    images = results["call_explore_plot"]["images"]
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,iVBORw0KGgo")
    assert images[0] in html

    # The proposed cleaning cell's code is in the transcript, and the tool said where it went.
    assert json.loads(calls[3]["arguments"])["code"] == CLEANING_CODE
    assert results["call_explore_propose"]["output"] == (
        "Proposed a new cell (4 lines) directly below the current %%penguin cell. "
        "It has not been run; the user will review and run it."
    )
    assert "penguins.dropna(subset=" in html
    assert "leaving 17 rows" in html
    assert "sk-demo-not-a-real-key" not in json.dumps(nb)
