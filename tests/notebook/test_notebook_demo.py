"""The quickstart notebook executes headless (nbclient, a real kernel, the scripted demo model)
and leaves the static transcript in its output."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.support.kernel import REPO_ROOT

pytestmark = pytest.mark.kernel
MIME = "application/vnd.penguin.transcript+json"


def test_quickstart_executes_headless_and_holds_the_transcript(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", REPO_ROOT)
    notebook = tmp_path / "quickstart.ipynb"
    shutil.copy(Path(REPO_ROOT) / "examples" / "quickstart.ipynb", notebook)
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    bundles = [o.data for o in outputs if MIME in o.get("data", {})]
    assert len(bundles) == 1
    data = bundles[0][MIME]
    assert data["status"] == "completed"
    # A notebook travels: its saved header does not say where its author keeps files (the
    # workspace is the notebook's folder: summary.md lands there, checked below).
    assert set(data["session"]) == {"session_id", "provider", "model_id", "approval_mode"}
    calls = [m["payload"]["name"] for m in data["messages"] if m["payload"].get("type") == "tool_call"]
    assert calls == ["exec_command", "read_file", "write_file"]
    assert "summary.md" in bundles[0]["text/html"]
    assert bundles[0]["text/plain"].startswith("penguin transcript — openai/scripted-demo — completed")
    assert "sk-demo-not-a-real-key" not in str(nb)
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith("# Sales summary")
