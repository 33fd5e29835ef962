"""A deeply nested saved notebook is refused in one line, once (issue 36, defect 10), in a real
kernel against the scripted model server.

As an attacker: a shared notebook is valid JSON with a value nested 10,000 deep in its metadata.
On 3758335 every reader of the file (the Run-All replay check and the remembered session at each
`%%penguin` cell start, `{cell:ID}`, `read_notebook`, cell previews) caught only `ValueError` and
`OSError`: the first `%%penguin` cell of a fresh kernel ended in `RecursionError: maximum
recursion depth exceeded` and the model was never asked — at every cell, as the failure was not
remembered. Now the cell runs and the model is asked, `{cell:ID}` stays as written, the
`read_notebook` tool answers with the one-line refusal, and the file is decoded once for all
cells while it is unchanged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model

pytestmark = pytest.mark.kernel
DEPTH = 10_000


def _deep_notebook(path: Path) -> None:
    cell = {"cell_type": "code", "id": "abcdef12", "metadata": {}, "execution_count": 1, "outputs": [],
            "source": "%%penguin\nHello"}  # fmt: skip
    head = json.dumps({"cells": [cell], "nbformat": 4, "nbformat_minor": 5})[:-1]
    path.write_text(head + ', "metadata": {"deep": ' + "[" * DEPTH + "]" * DEPTH + "}}")


def _tool_outputs(request: dict) -> list[str]:
    return [str(m.get("content")) for m in request.get("messages", []) if m.get("role") == "tool"]


def test_a_notebook_nested_10000_deep_does_not_end_penguin_cells_in_a_traceback(tmp_path):
    notebook = tmp_path / "shared.ipynb"
    _deep_notebook(notebook)
    script = [
        {"text": "Hello."},
        {"tool_calls": [{"name": "read_notebook", "id": "call_1", "arguments": {}}]},
        {"text": "I could not read it."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(notebook)}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            first = kernel.execute("%%penguin\nHello", cell_id="abcdef12", timeout=120)
            second = kernel.execute("%%penguin --approve allow-all\nCompare with {cell:abcdef12}", cell_id="c2", timeout=120)
            parses = kernel.execute(
                "from penguin_jupyter.notebook.link.saved_notebook_cache import SAVED_NOTEBOOKS\n"
                "print(SAVED_NOTEBOOKS.parses)"
            )
            requests = list(server.requests)
        finally:
            kernel.close()
    for result in (first, second):
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert "RecursionError" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert len(requests) == 3, "the model must be asked by both cells"
    assert "{cell:abcdef12}" in json.dumps(requests[1]["messages"])
    [answer] = _tool_outputs(requests[2])
    assert f"cannot read the notebook file {notebook}: its JSON is nested too deeply" in answer
    assert parses.stdout.strip() == "1", "the refusal must be remembered, not recomputed at each cell"
