"""`examples/dask-cluster.ipynb` executes headless (`jupyter nbconvert --execute`, a real kernel,
a real dask.distributed LocalCluster, the scripted model, the demo environment's package set):
the agent's summary of the Dask DataFrame computed nothing, its groupby ran through `run_python`
on the cluster, and the next cell sees the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from penguin_jupyter.testing.dask_script import REVENUE_CODE
from tests.support.demo_env import execute_example

pytest.importorskip("distributed")
pytestmark = pytest.mark.kernel
MIME = "application/vnd.penguin.transcript+json"
NOTEBOOK = "dask-cluster.ipynb"


def _execute(tmp_path: Path) -> dict:
    return execute_example(NOTEBOOK, tmp_path)


def test_dask_notebook_inspects_without_computing_and_groups_on_the_cluster(tmp_path):
    nb = _execute(tmp_path)
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    outputs = [o for c in code_cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    bundles = [o["data"][MIME] for o in outputs if MIME in o.get("data", {})]
    assert len(bundles) == 1
    data = bundles[0]
    assert data["status"] == "completed"
    messages = [m["payload"] for m in data["messages"]]
    calls = [p for p in messages if p.get("type") == "tool_call"]
    assert [c["name"] for c in calls] == ["inspect_variables", "run_python"]
    results = {p["tool_call_id"]: p for p in messages if p.get("type") == "tool_call_output"}
    assert all(r.get("stop_reason", "completed") == "completed" for r in results.values())

    inspected = results["call_dask_inspect"]["output"]
    assert inspected.startswith(
        "orders: Dask DataFrame (lazy), 4 columns in 8 partitions, divisions unknown; nothing was computed\n"
        "columns (dtype):\n  order_id: int64\n  region: "
    )
    assert "Not computed: row count, null counts, statistics and rows." in inspected

    assert json.loads(calls[1]["arguments"])["code"] == REVENUE_CODE
    grouped = results["call_dask_groupby"]["output"]
    assert grouped.splitlines()[2].split() == ["North", "7999980", "123999759.0"]
    revenue = next(c for c in code_cells if "".join(c["source"]) == "revenue")
    table = "".join(revenue["outputs"][0]["data"]["text/plain"])
    assert "West" in table and "30999444.0" in table
