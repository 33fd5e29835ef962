"""Nothing outlives the live view: a real kernel that ran 50 `%%penguin` Tasks holds no widget
model of any of them, as after the first one (the layout/style models a Task's widgets share
are closed after them), whether a Task completed, was interrupted or failed, and approval rows included.

A real ipykernel (jupyter_client) against the ScriptedModelServer; the kernel's own
`ipywidgets.Widget.widgets` and comm manager are counted once the paced teardown drained
(`KernelHarness.open_widgets`). The background subagent's card is checked in
test_notebook_background_subagents.py.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env

pytestmark = pytest.mark.kernel
TASKS = 50
APPROVED_TASK = 1  # this one asks (ask mode) and the test clicks Approve
FAILING_TASK = 2  # its model answers HTTP 401: the Task ends on the error (no retry)
INTERRUPTED_TASK = 3  # its command sleeps and the kernel is interrupted
STARTED = "sleeping.flag"


def _turns(index: int) -> list[dict]:
    if index == FAILING_TASK:
        return [{"fault": {"kind": "http", "status": 401, "message": "invalid api key"}}]
    command = f"touch {STARTED}; sleep 30" if index == INTERRUPTED_TASK else f"echo task {index}"
    call = {"name": "exec_command", "id": f"call_{index}", "arguments": {"cmd": command}}
    turns = [{"reasoning": ["Let me ", "check."], "text": ["Running ", "it."], "tool_calls": [call]}]
    if index != INTERRUPTED_TASK:
        turns.append({"text": ["Task ", f"{index} ", "done."]})
    return turns


def test_fifty_tasks_leave_as_many_widget_models_as_one(tmp_path):
    script = [turn for index in range(TASKS) for turn in _turns(index)]
    with ScriptedModelServer(script) as server:
        add_model(
            Path(os.environ["PENGUIN_HOME"]), "default_project", provider="openai", model_id="scripted-model",
            base_url=server.url, api_key="sk-test-secret", client_type="openai-chat", default=True,
        )  # fmt: skip
        notebook_dir = tmp_path / "notebooks"
        notebook_dir.mkdir()
        kernel = KernelHarness(str(notebook_dir), kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "soak.ipynb")}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            counts = []
            statuses = []
            for index in range(TASKS):
                statuses.append(_run_task(kernel, index, notebook_dir / STARTED))
                if index == 0:
                    counts.append(kernel.open_widgets())
            counts.append(kernel.open_widgets())
        finally:
            kernel.close()
    assert statuses[APPROVED_TASK] == "ok" and statuses[INTERRUPTED_TASK] == "error", statuses
    after_one, after_all = counts
    assert after_one["queued"] == 0 and after_all["queued"] == 0, "the paced teardown drained"
    # Nothing of any Task stays, not even the layout/style models its widgets shared.
    assert after_one["models"] == after_all["models"] == 0, counts
    extension_comms = after_one["comms"] - after_one["models"]  # the bridge's, the kernel's own
    assert after_all["comms"] - after_all["models"] == extension_comms, counts


def _run_task(kernel: KernelHarness, index: int, started: Path) -> str:
    clicked: list[str] = []

    def on_message(msg, result):
        for comm_id in result.buttons("Approve"):
            if comm_id not in clicked:
                clicked.append(comm_id)
                kernel.click(comm_id)

    def interrupt_once_sleeping() -> None:
        while not started.exists():
            time.sleep(0.05)
        kernel.interrupt()

    if index == INTERRUPTED_TASK:
        threading.Thread(target=interrupt_once_sleeping, daemon=True).start()
    mode = "ask" if index == APPROVED_TASK else "allow-all"
    result = kernel.execute(f"%%penguin --approve {mode}\nTask {index}.", on_message=on_message, timeout=180)
    assert result.final_bundles(), f"task {index} showed no transcript: {result.stderr[-500:]}"
    return str(result.reply["content"]["status"])
