"""A saved notebook from elsewhere, replayed by Restart & Run All in a real kernel.

A forged .ipynb holds a `%%penguin` cell whose transcript bundle says `completed`, next to outputs
a stranger wrote: `application/javascript`, `text/html` with a `<script>` and a remote `<img>`, a
stderr stream, and forged HTML/plain/metadata beside the bundle itself. The bundle's messages
carry remote images, raw HTML, a configured secret and fields no message has. The kernel (real
ipykernel, the execute request carrying the cell id as JupyterLab sends it) publishes nothing but
the transcript rebuilt from the validated messages: one display, three mime types, no script, no
URL a browser would load, the secret redacted, none of the stranger's bytes. A bundle that does
not validate is not replayed: one line says why and the model is asked (the scripted server sees
the request). On 838a3dd the replay re-displayed every saved output as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from penguin_jupyter.notebook.runtime.saved_transcript import RERUN_LINE
from penguin_jupyter.notebook.transcript.transcript_bundle import TRANSCRIPT_MIME
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.forged_notebook import (
    FORGED,
    PROMPT,
    SECRET,
    SECRET_NAME,
    forged_cell,
    hostile_bundle,
    write_notebook,
)
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.no_fetch import audit
from tests.support.session import configure_model

pytestmark = [pytest.mark.kernel, pytest.mark.security]

BASE = "http://127.0.0.2:9"  # nothing listens: what matters is that no output names it loadably


def start_kernel(tmp_path: Path, notebook: Path) -> KernelHarness:
    env = kernel_env({"JPY_SESSION_NAME": str(notebook), SECRET_NAME: SECRET})
    harness = KernelHarness(str(tmp_path), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def published(result) -> list[dict[str, Any]]:
    return result.of_type("display_data", "update_display_data", "execute_result")


def test_a_forged_saved_notebook_replays_only_the_rebuilt_transcript(tmp_path):
    notebook = tmp_path / "shared.ipynb"
    write_notebook(notebook, [forged_cell("agent", hostile_bundle(BASE), BASE)])
    kernel = start_kernel(tmp_path, notebook)
    try:
        result = kernel.execute(PROMPT, cell_id="agent", timeout=120)
    finally:
        kernel.close()
    assert result.reply["content"]["status"] == "ok"
    everything = json.dumps([m["content"] for m in result.messages])
    assert FORGED not in everything  # none of the stranger's bytes: outputs, HTML, plain, metadata, fields
    assert "application/javascript" not in everything
    assert SECRET not in everything
    # the replay notice is information: a plain-text output of its own, not a red stderr line
    assert result.notes == RERUN_LINE and result.stderr == ""
    shown = [m for m in published(result) if set(m["content"].get("data", {})) != {"text/plain"}]
    assert len(shown) == 1, [m["content"].get("data", {}).keys() for m in shown]
    content = shown[0]["content"]
    assert set(content["data"]) == {TRANSCRIPT_MIME, "text/html", "text/plain"}
    assert content["metadata"] == {}
    markup = content["data"]["text/html"]
    assert "<script" not in markup.lower()
    assert audit(markup).loads == [], audit(markup).loads
    assert f"[redacted:{SECRET_NAME}]" in markup
    assert "image from 127.0.0.2" in markup  # the remote image is a click-to-open placeholder
    bundle = content["data"][TRANSCRIPT_MIME]
    assert bundle["version"] == 1 and bundle["status"] == "completed"
    assert len(bundle["messages"]) == len(hostile_bundle(BASE)["messages"])


INVALID = {
    "bad-version": lambda b: {**b, "version": 2},
    "bad-message": lambda b: {**b, "messages": [*b["messages"], {"type": "model_msg", "payload": {"type": "script"}}]},
    "a-partial": lambda b: {
        **b,
        "messages": [{"timestamp": "t", "type": "model_msg", "payload": {"type": "partial_text", "event_type": "delta", "text": "x"}}],
    },
    "extra-key": lambda b: {**b, "html": f"<script>{FORGED}</script>"},
}


def test_a_bundle_that_does_not_validate_is_not_replayed_and_the_model_is_asked(tmp_path):
    cells = [
        forged_cell(cell_id, spoil(hostile_bundle(BASE)), BASE, source=f"%%penguin\nTask {cell_id}")
        for cell_id, spoil in INVALID.items()
    ]
    notebook = tmp_path / "spoiled.ipynb"
    write_notebook(notebook, cells)
    script = [{"text": f"Fresh answer {n}."} for n in range(len(INVALID))]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = start_kernel(tmp_path, notebook)
        try:
            results = {
                cell_id: kernel.execute(f"%%penguin\nTask {cell_id}", cell_id=cell_id, timeout=120)
                for cell_id in INVALID
            }
        finally:
            kernel.close()
        assert len(server.requests) == len(INVALID), "a spoiled bundle was replayed instead of asking the model"
    reasons = {}
    for cell_id, result in results.items():
        lines = [line for line in result.stderr.splitlines() if "was not replayed" in line]
        assert len(lines) == 1, result.stderr
        reasons[cell_id] = lines[0]
        assert RERUN_LINE not in result.stderr and RERUN_LINE not in result.notes
        assert FORGED not in json.dumps([m["content"] for m in result.messages])
    assert "version is 2" in reasons["bad-version"]
    assert "invalid" in reasons["bad-message"]
    assert "partial" in reasons["a-partial"]
    assert "unknown keys: html" in reasons["extra-key"]
