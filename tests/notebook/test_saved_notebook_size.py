"""The saved notebook stays proportional to what was said (docs/notebook-runtime.md "Saved size").

Real Tasks in a real kernel (ScriptedModelServer, jupyter_client): a small one (a command and a
short answer), one with a 20 KB answer, and one whose run_python call draws a matplotlib plot
followed by a 2 KB answer. For each, the bytes its final display output adds to the .ipynb (as
nbformat writes it) are compared with the Task's text plus images (tests.support.saved_size);
the plot is stored once (in the HTML; the JSON names it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from penguin_jupyter.notebook.transcript.saved_images import with_saved_images
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.saved_size import saved_output_bytes, transcript_bytes
from tests.support.session import configure_model

pytestmark = pytest.mark.kernel
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
MAX_RATIO = 2.5
# A small Task cannot reach MAX_RATIO: its fixed bytes (docs/notebook-runtime.md "Saved size")
# outweigh its text. It saved 9,962 bytes before the bundle left out unshown events, 7,243 before
# it left out the default stop_reason and local paths and the HTML carried only the rules it uses;
# 5,832 before the bundle carried its tools' card roles (`"tools"`, ~200 bytes here for
# exec_command and run_python: what lets the labextension draw cards without a table of tools).
MAX_SMALL_TASK_BYTES = 6_300
PLOT = (
    "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\nax.plot(range(50), [i * i % 17 for i in range(50)])\nplt.show()\n"
)


def _paragraphs(size: int) -> str:
    words = "The model fits the penguins' flipper length against body mass; residuals look flat. "
    return "\n\n".join(words * 4 for _ in range(size // (len(words) * 4) + 1))[:size]


TASKS = {
    "small": [
        {"tool_calls": [{"name": "exec_command", "id": "c1", "arguments": {"cmd": "ls"}}]},
        {"text": "There is one file, data.csv, with the penguin measurements. " * 12},
    ],
    "20 KB answer": [{"text": _paragraphs(20_000)}],
    "plot + 2 KB answer": [
        {
            "tool_calls": [
                {"name": "run_python", "id": "p1", "arguments": {"description": "Plot", "code": PLOT}}
            ]
        },
        {"text": _paragraphs(2_000)},
    ],
}


def _run(tmp_path: Path, name: str) -> dict:
    with ScriptedModelServer(TASKS[name]) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        (tmp_path / "data.csv").write_text("species,mass\nAdelie,3750\n")
        kernel = KernelHarness(str(tmp_path), kernel_env())
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            result = kernel.execute("%%penguin --approve allow-all\nDescribe the data", timeout=180)
        finally:
            kernel.close()
    bundles = result.final_bundles()
    assert bundles, "the Task left no static transcript"
    return bundles[-1]


def figures(data: dict) -> tuple[int, int, int]:
    text, images = transcript_bytes(with_saved_images(data[TRANSCRIPT_MIME], data["text/html"]))
    return saved_output_bytes(data), text, images


@pytest.mark.parametrize("name", list(TASKS))
def test_a_saved_task_stays_proportional_to_what_it_said(tmp_path, name):
    data = _run(tmp_path, name)
    saved, text, images = figures(data)
    ratio = saved / (text + images)
    print(f"{name}: saved {saved} B, text {text} B, images {images} B, ratio {ratio:.2f}")
    if name.startswith("plot"):
        assert images > 5_000, "the plot did not reach the transcript"
        png = data["text/html"].count("data:image/png;base64,")
        assert png == 1, f"the HTML (what GitHub shows) must show the plot once, found {png}"
        assert "data:image" not in json.dumps(data[TRANSCRIPT_MIME]), "the JSON must name the plot, not hold it again"
    if name == "small":
        assert saved <= MAX_SMALL_TASK_BYTES, f"a small Task saved {saved} bytes"
    else:
        assert ratio <= MAX_RATIO, f"{name}: the saved output is {ratio:.2f}x what the Task said"
