"""The cell you mean, in a real kernel: the model's first request of a Task names the running
`%%penguin` cell and the cell executed just before it with its error or result (from IPython's
own history, no frontend), and `{cell:-1}` / `{cell:ID}` expand in the cell body (the latter from
the saved notebook, since no frontend is connected), bounded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.notebooks import write_notebook

pytestmark = pytest.mark.kernel
SAVED_ID = "5c0ffee1-2222-4333-8444-555566667777"


def _user_texts(request: dict) -> str:
    """Every user message text of one chat-completions request, joined."""
    texts = []
    for message in request.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            texts.extend(str(part.get("text", "")) for part in content if isinstance(part, dict))
        else:
            texts.append(str(content))
    return "\n".join(texts)


def test_the_first_request_names_the_running_cell_and_the_error_above_and_cells_expand(tmp_path):
    notebook_dir = tmp_path / "notebooks"
    notebook_dir.mkdir()
    saved = write_notebook(notebook_dir / "explore.ipynb", [
        {"index": 0, "id": SAVED_ID, "cell_type": "code", "execution_count": 3, "source": "sales = load('sales.csv')",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "loaded 48213 rows\n"}]},
    ])  # fmt: skip
    script = [{"text": "Fixed."}, {"text": "Explained."}, {"text": "Looked."}]
    with ScriptedModelServer(script) as server:
        add_model(
            Path(os.environ["PENGUIN_HOME"]), "default_project", provider="openai", model_id="scripted-model",
            base_url=server.url, api_key="sk-test-secret", client_type="openai-chat", default=True,
        )  # fmt: skip
        kernel = KernelHarness(str(notebook_dir), kernel_env({"JPY_SESSION_NAME": str(saved)}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            failed = kernel.execute("ratio = 3\nratio / (ratio - 3)", cell_id="cell-err")
            fix = kernel.execute("%%penguin --approve allow-all\nFix the error above.", cell_id="cell-fix")
            kernel.execute("total = 40 + 2\ntotal", cell_id="cell-total")
            explain = kernel.execute("%%penguin --approve allow-all\nExplain this:\n{cell:-1}", cell_id="cell-explain")
            look = kernel.execute(
                "%%penguin --approve allow-all\nCompare {cell:5c0ffee1} with {cell:nope} and {{cell:-1}}.",
                cell_id="cell-look",
            )
            requests = list(server.requests)
        finally:
            kernel.close()
    assert failed.reply["content"]["status"] == "error"
    for result in (fix, explain, look):
        assert result.reply["content"]["status"] == "ok", result.stderr
    first, second, third = (_user_texts(r) for r in requests[:3])

    # The Task's first request: the running cell and the cell before it, with its error.
    assert first.startswith("Fix the error above.")
    assert "[notebook_context]" in first and "running %%penguin cell [3] (id cell-fix)" in first
    assert "cell [2] · id cell-err" in first and "ratio / (ratio - 3)" in first
    assert "raised ZeroDivisionError: division by zero" in first
    assert "traceback (last lines):" in first and "\x1b[" not in first

    # {cell:-1}: the cell executed just before, with its result.
    assert "total = 40 + 2" in second and "result: 42" in second
    assert second.count("result: 42") == 2  # expanded in the prompt, and in the context block

    # {cell:ID} (a short id works) from the saved file; an unknown one and {{…}} stay as written.
    assert "sales = load('sales.csv')" in third and "loaded 48213 rows" in third
    assert "{cell:nope}" in third and "{cell:-1}" in third

    # The transcript shows what the user wrote, not the context block.
    bundle = look.final_bundles()[-1]["application/vnd.penguin.transcript+json"]
    assert "[notebook_context]" not in json.dumps(bundle)
