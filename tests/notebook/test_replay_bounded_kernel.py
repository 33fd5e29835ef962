"""A stranger's saved transcript is measured before its images are put back (issue 36, defect
9), in a real kernel against the scripted model server.

As an attacker: a ~2 MB shared notebook whose `%%penguin` cell saved one 2 MB image in its
`text/html` and names it 2,000 times (`penguin:html-image:0`) from its transcript bundle. On
3758335 Restart & Run All put the references back before the size check, and the check built
the whole expanded bundle (~4 GB) as one string: a `MemoryError` (in a capped process; the OS
killed an uncapped kernel), not caught either. Now the references are counted and their images'
lengths summed without building anything (tests/notebook/test_replay_bundle.py holds the size
limit to the same measure): one line says the transcript was not replayed, the model is asked
instead, and the kernel's peak memory (measured around that cell, once a first cell has loaded
what a Task needs) grows by a few tens of MB at most (measured: 1 MB). The kernel runs with its address space capped at its own size plus 768 MiB so that a regression
fails the test instead of the machine.
"""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import nbformat
import pytest

from penguin_jupyter.notebook.transcript.saved_images import SAVED_IMAGE_REF
from penguin_jupyter.notebook.transcript.transcript_bundle import TRANSCRIPT_MIME, make_bundle
from penguin_jupyter.omni import tool_call, tool_call_output
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.forged_notebook import write_notebook
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model

pytestmark = pytest.mark.kernel
REFERENCES = 2_000
SOURCE = "%%penguin\nPlot the data"

CAP_MEMORY = """
import resource
_size = int(open('/proc/self/status').read().split('VmSize:')[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (_size + 768 * 1024 * 1024, resource.RLIM_INFINITY))
"""
PEAK_MB = "print(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024)"


def _image() -> str:
    raw = random.Random(7).randbytes(1_500_000)
    return "data:image/png;base64," + base64.b64encode(raw).decode()


def _amplifying_notebook(path: Path) -> None:
    image = _image()
    messages = [tool_call("run_python", {"code": "plot()"}, "p1"), tool_call_output("[no output]", "p1", images=[image])]
    bundle = make_bundle(messages, session_info={"session_id": "s-stranger"}, status="completed")
    output = bundle["messages"][-1]["payload"]
    output["images"] = [f"{SAVED_IMAGE_REF}0"] * REFERENCES
    cell = nbformat.v4.new_code_cell(SOURCE, id="plotcell", execution_count=1)
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={TRANSCRIPT_MIME: bundle, "text/html": f'<div><img src="{image}"></div>', "text/plain": "plot"},
        )
    ]
    write_notebook(path, [cell])


def test_one_image_named_2000_times_is_refused_in_one_line_without_expanding_it(tmp_path):
    notebook = tmp_path / "shared.ipynb"
    _amplifying_notebook(notebook)
    assert notebook.stat().st_size < 3_000_000
    with ScriptedModelServer([{"text": "Warm."}, {"text": "Here is a fresh plot."}]) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(notebook)}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            assert kernel.execute(CAP_MEMORY).reply["content"]["status"] == "ok"
            warm = kernel.execute("%%penguin\nHello", cell_id="warm", timeout=180)  # imports and session
            assert warm.reply["content"]["status"] == "ok", warm.stderr[-2000:]
            before = int(kernel.execute(PEAK_MB).stdout.strip())
            replayed = kernel.execute(SOURCE, cell_id="plotcell", timeout=180)
            after = int(kernel.execute(PEAK_MB).stdout.strip())
            requests = len(server.requests)
        finally:
            kernel.close()
    assert replayed.reply["content"]["status"] == "ok", replayed.stderr[-2000:]
    lines = [line for line in replayed.stderr.splitlines() if "was not replayed" in line]
    assert lines == [
        "penguin: the saved transcript was not replayed (the transcript names more than 1000 images); "
        "asking the model."
    ], replayed.stderr[-2000:]
    assert "MemoryError" not in replayed.stderr and "Traceback" not in replayed.stderr
    assert requests == 2, "after the refusal the model is asked"
    assert after - before < 100, f"the kernel's peak memory grew by {after - before} MB"
    print(f"peak RSS before the replay {before} MB, after {after} MB")
