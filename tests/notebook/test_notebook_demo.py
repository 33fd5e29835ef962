"""The quickstart notebook executes headless (nbconvert, a real kernel, the scripted demo model)
in the demo environment's package set (tests/support/demo_env.py) and leaves the static
transcript in its output."""

from __future__ import annotations

import json

import pytest

from tests.support.demo_env import execute_example

pytestmark = pytest.mark.kernel
MIME = "application/vnd.penguin.transcript+json"


def test_quickstart_executes_headless_and_holds_the_transcript(tmp_path):
    nb = execute_example("quickstart.ipynb", tmp_path)
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    bundles = [o["data"] for o in outputs if MIME in o.get("data", {})]
    assert len(bundles) == 1
    data = bundles[0][MIME]
    assert data["status"] == "completed"
    # A notebook travels: its saved header does not say where its author keeps files (the
    # workspace is the notebook's folder: summary.md lands there, checked below).
    assert set(data["session"]) == {"session_id", "provider", "model_id", "approval_mode"}
    calls = [m["payload"]["name"] for m in data["messages"] if m["payload"].get("type") == "tool_call"]
    assert calls == ["exec_command", "read_file", "write_file"]
    assert "summary.md" in "".join(bundles[0]["text/html"])
    assert "".join(bundles[0]["text/plain"]).startswith("penguin transcript — openai/scripted-demo — completed")
    assert "sk-demo-not-a-real-key" not in json.dumps(nb)
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith("# Sales summary")
