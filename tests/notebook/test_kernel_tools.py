"""Kernel tools inside a real ipykernel (issue 11): `%%penguin` cells against the real stack and
the ScriptedModelServer over loopback HTTP; every assertion reads what the model was actually sent
(`server.requests`), the static transcript bundle, or what the next notebook cell sees."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from penguin_jupyter.notebook.kernel_tools.python_runner import BUSY_MESSAGE
from penguin_jupyter.notebook.kernel_tools.summaries import summarize_variable
from penguin_jupyter.notebook.transcript.saved_images import with_saved_images
from penguin_jupyter.omni.markers import quoted_data
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model, request_messages, typed_messages

pytestmark = pytest.mark.kernel
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
SALES_CELL = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'region': ['North', 'South', None], 'units': [120, 45, 98], "
    "'price': [4.5, 12.0, 4.5]})\n"
    "notes = 'not a frame'"
)


CLEAN_1 = "sales = sales.dropna(subset=['region'])"
CLEAN_2 = "sales = sales.sort_values('revenue')"


def _local_sales() -> pd.DataFrame:
    """The same DataFrame SALES_CELL builds in the kernel (same pandas), for exact summaries."""
    return pd.DataFrame(
        {"region": ["North", "South", None], "units": [120, 45, 98], "price": [4.5, 12.0, 4.5]}
    )


def _start(tmp_path: Path, server: ScriptedModelServer) -> KernelHarness:
    configure_model(Path(os.environ["PENGUIN_HOME"]), server)
    notebook_dir = tmp_path / "notebooks"
    notebook_dir.mkdir()
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "explore.ipynb")})
    kernel = KernelHarness(str(notebook_dir), env)
    assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return kernel


def _ok(result) -> None:
    assert result.reply["content"]["status"] == "ok", (result.stderr, result.of_type("error"))


def _transcript(result) -> dict:
    """The cell's saved bundle with its images put back from its HTML, as every reader does."""
    bundles = result.final_bundles()
    assert bundles, "the cell did not leave a static transcript"
    return with_saved_images(bundles[-1][TRANSCRIPT_MIME], bundles[-1].get("text/html"))


def _outputs(data: dict) -> dict[str, dict]:
    """tool_call_id → final tool_call_output payload of a transcript (with the wire's default
    stop_reason, which a saved bundle leaves out)."""
    return {
        m["payload"]["tool_call_id"]: {"stop_reason": "completed", **m["payload"]}
        for m in data["messages"]
        if m["payload"].get("type") == "tool_call_output"
    }


def _tool_reply(request: dict, call_id: str) -> dict:
    """The chat message answering `call_id` in a recorded request body."""
    for message in request["messages"]:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return message
    raise AssertionError(f"no tool message for {call_id} in the request")


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _call(call_id: str, name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "id": call_id, "arguments": arguments}]}


def test_model_inspects_and_changes_the_notebook_dataframe(tmp_path):
    """Scenarios 1, 2, 6, 7: `{sales}` expands, the system prompt names the DataFrames,
    inspect_variables returns the summary, run_python adds a column the next cell sees."""
    body = "Look at {sales} and add revenue; keep {{braces}} and {undefined} as written."
    script = [
        {"text": "Hello; no data yet."},
        _call("call_inspect", "inspect_variables", description="Inspect sales", names=["sales"]),
        _call(
            "call_revenue",
            "run_python",
            description="Add a revenue column",
            code="sales['revenue'] = sales.units * sales.price\nprint('rows:', len(sales))\nsales.shape",
        ),
        _call("call_propose_1", "propose_cell", description="Drop empty regions", code=CLEAN_1),
        _call("call_propose_2", "propose_cell", description="Sort", code=CLEAN_2),
        {"text": "Added a revenue column and proposed a cleaning cell."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            before_data = kernel.execute("%%penguin\nHello", timeout=120)
            _ok(kernel.execute(SALES_CELL))
            cell = kernel.execute(f"%%penguin --new --approve allow-all\n{body}", timeout=120)
            after = kernel.execute("print(list(sales.columns)); print(sales.revenue.tolist())")
        finally:
            kernel.close()
    _ok(before_data)
    _ok(cell)
    _ok(after)
    early, *requests = server.requests
    assert len(requests) == 5
    summary = summarize_variable("sales", _local_sales())
    assert summary.startswith("sales: pandas DataFrame, 3 rows × 3 columns\ncolumns (dtype, nulls):\n")
    assert "  units: int64, 0 null" in summary

    # 7. the system prompt tells the model it is in a notebook and names the DataFrames
    first = requests[0]["messages"]
    system = _text(first[0])
    assert first[0]["role"] == "system"
    assert "# Jupyter notebook\nYou are running inside the user's Jupyter notebook kernel" in system
    assert "DataFrames defined when this session started: sales." in system
    # a session started before the data existed says its list is a snapshot, not the current state
    assert "DataFrames defined when this session started: none yet." in _text(early["messages"][0])

    # 6. `{sales}` became the summary, quoted as data (its values may be a stranger's); `{{`
    # stayed a literal brace; unknown names stay as written
    user = [content for role, content in typed_messages(requests[0]) if role == "user"][-1]
    assert user == (
        f"Look at \n{quoted_data(summary)}\n and add revenue; keep {{braces}} and {{undefined}} as written."
    )

    # 1. inspect_variables sent the DataFrame summary back to the model
    assert _text(_tool_reply(requests[1], "call_inspect")) == summary

    # 2. run_python changed the user's DataFrame: its output went to the model, the next cell sees it
    assert _text(_tool_reply(requests[2], "call_revenue")) == "rows: 3\n(3, 4)"
    assert after.stdout == "['region', 'units', 'price', 'revenue']\n[540.0, 540.0, 441.0]\n"
    outputs = _outputs(_transcript(cell))
    assert {o["stop_reason"] for o in outputs.values()} == {"completed"}

    # propose_cell: the frontend gets one proposed cell (the kernel keeps one per execution),
    # so the second proposal is appended to the first rather than replacing it
    assert cell.reply["content"]["payload"] == [
        {"source": "set_next_input", "text": CLEAN_1 + "\n\n" + CLEAN_2, "replace": False}
    ]
    assert outputs["call_propose_1"]["output"] == (
        "Proposed a new cell (1 line) directly below the current %%penguin cell. "
        "It has not been run; the user will review and run it."
    )
    assert outputs["call_propose_2"]["output"] == (
        "Appended to the cell already proposed in this task (now 3 lines; one proposed cell per "
        "%%penguin cell). It has not been run; the user will review and run it."
    )
    assert after.reply["content"]["payload"] == [], "a proposal belongs to its own cell only"


PLOT_CODE = (
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(3, 2))\n"
    "ax.bar(['a', 'b', 'c'], [3, 1, 2])\n"
    "ax.set_title('units')"
)
SHOW_CODE = (
    "import matplotlib.pyplot as plt\n"
    "plt.plot([1, 2, 3])\n"
    "plt.show()\n"
    "plt.plot([3, 1, 2], color='red')\n"
    "plt.show()"
)
# A figure whose rendering never ends: the timeout lands while run_python saves it as PNG.
STUCK_FIGURE_CODE = (
    "import matplotlib.pyplot as plt\n"
    "from matplotlib.artist import Artist\n"
    "class Stuck(Artist):\n"
    "    def draw(self, renderer):\n"
    "        while True:\n"
    "            pass\n"
    "stuck = plt.figure()\n"
    "stuck.add_artist(Stuck())"
)
# pyplot is imported first (as in any plotting notebook) so the short timeout never lands mid-import;
# the `%penguin python-timeout` line command sets run_python's limit for the following cells.
SHORT_TIMEOUT_CELL = "import matplotlib.pyplot\n%penguin python-timeout 2"
TIMEOUT_MARKER = "[tool timeout: exceeded 2000ms]"


def test_plot_and_exception_come_back_to_the_model(tmp_path):
    """Scenarios 3, 4: a figure comes back as a PNG image on the tool output; an exception as a
    failed output with its traceback, and the kernel stays usable."""
    script = [
        _call("call_plot", "run_python", description="Plot units", code=PLOT_CODE),
        _call("call_show", "run_python", description="Two plots", code=SHOW_CODE),
        _call("call_error", "run_python", description="Divide", code="ratio = 1\nratio / 0"),
        {"text": "Plotted; the division failed."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            cell = kernel.execute("%%penguin --approve allow-all\nPlot, then divide", timeout=120)
            plain = kernel.execute("print(ratio + 41, type(fig).__name__)")
        finally:
            kernel.close()
    _ok(cell)
    requests = server.requests
    assert len(requests) == 4
    outputs = _outputs(_transcript(cell))

    # 3. the figure is a PNG on the tool output, in the transcript bundle and in the model request
    plot = outputs["call_plot"]
    assert plot.get("stop_reason", "completed") == "completed"
    assert plot["output"] == "Text(0.5, 1.0, 'units')"
    images = plot["images"]
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,iVBORw0KGgo")
    sent_images = [
        part["image_url"]["url"]
        for message in requests[1]["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]
    assert sent_images == images, "the model must receive the figure as an image part"
    # plt.show() hands each figure to the model too (the inline backend would draw it in the cell)
    shown = outputs["call_show"]["images"]
    assert len(shown) == 2 and len(set(shown)) == 2
    assert all(image in json.dumps(requests[2]) for image in shown)
    assert not [m for m in cell.of_type("display_data") if "image/png" in m["content"]["data"]], (
        "the tool's figure must not also be drawn into the cell by the inline backend"
    )

    # 4. the exception is a failed output with the traceback; the kernel answers the next cell
    error = outputs["call_error"]
    assert error["stop_reason"] == "failed"
    assert error["output"].startswith('Traceback (most recent call last):\n  File "<run_python-')
    assert error["output"].endswith("ZeroDivisionError: division by zero")
    assert _text(_tool_reply(requests[3], "call_error")) == error["output"]
    _ok(plain)
    assert plain.stdout == "42 Figure\n"


def test_runaway_code_hits_the_timeout_and_the_kernel_still_answers(tmp_path):
    """Scenario 5: `while True` and a figure that never finishes drawing both end at the tool
    timeout (shortened inside the kernel); the next cell and a later run_python still work."""
    script = [
        _call("call_spin", "run_python", description="Spin", code="spins = 0\nwhile True:\n    spins += 1"),
        _call("call_stuck", "run_python", description="Draw", code=STUCK_FIGURE_CODE),
        {"text": "Both ran too long; I stopped them."},
        _call("call_after", "run_python", description="Check", code="print('still here', spins > 0)"),
        {"text": "The kernel still answers."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            # The definition is read each time the tool runs; the line command shortens its 120 s.
            short = kernel.execute(SHORT_TIMEOUT_CELL)
            status = kernel.execute("%penguin status")
            cell = kernel.execute("%%penguin --approve allow-all\nSpin, then draw", timeout=120)
            plain = kernel.execute("import matplotlib.pyplot as plt\nprint(6 * 7, plt.get_fignums())")
            follow = kernel.execute("%%penguin --approve allow-all\nAre you still there?", timeout=120)
        finally:
            kernel.close()
    _ok(short)
    assert short.stdout == "penguin: run_python time limit is now 2 s\n"
    assert "run_python time limit: 2 s\n" in status.stdout
    _ok(cell)
    requests = server.requests
    assert len(requests) == 5
    outputs = _outputs(_transcript(cell))
    for call_id, request in (("call_spin", requests[1]), ("call_stuck", requests[2])):
        assert outputs[call_id]["stop_reason"] == "failed"
        assert outputs[call_id]["output"] == TIMEOUT_MARKER
        assert _text(_tool_reply(request, call_id)) == TIMEOUT_MARKER
    assert "Exception in thread" not in cell.stderr
    _ok(plain)
    assert plain.stdout == "42 []\n", "the interrupted figure must be closed, not left to the backend"
    _ok(follow)
    assert _outputs(_transcript(follow))["call_after"]["output"] == "still here True\n"
    assert request_messages(requests[4])[-1] == ("tool", "still here True\n")


def test_kernel_interrupt_stops_runaway_run_python(tmp_path):
    """The notebook's interrupt (■) while run_python spins: the code is stopped, the tool output is
    `aborted`, the next cell and the next `%%penguin` cell work and carry the interruption over."""
    spin_code = "print('spinning', flush=True)\nwhile True:\n    pass"
    script = [
        _call("call_spin", "run_python", description="Spin", code=spin_code),
        {"text": "Picking up after the interruption."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            state = {"interrupted": False}

            def on_message(msg, result):
                data = json.dumps(msg["content"], default=str)
                if not state["interrupted"] and msg["msg_type"] == "comm_msg" and "spinning" in data:
                    state["interrupted"] = True
                    kernel.interrupt()

            cell = kernel.execute("%%penguin --approve allow-all\nSpin", on_message=on_message, timeout=90)
            plain = kernel.execute("print(6 * 7)")
            follow = kernel.execute("%%penguin --approve allow-all\nContinue", timeout=90)
        finally:
            kernel.close()
    assert state["interrupted"], "the run_python output never reached the live view"
    assert cell.reply["content"]["ename"] == "TaskInterrupted"
    data = _transcript(cell)
    assert data["status"] == "aborted"
    spin = _outputs(data)["call_spin"]
    assert spin["stop_reason"] == "aborted"
    # docs/environment.md "Close-out": output + "\n" + marker; the printed line keeps its own newline
    assert spin["output"] == "spinning\n\n[interrupted: tool aborted by user]"
    _ok(plain)
    assert plain.stdout == "42\n"
    _ok(follow)
    assert len(server.requests) == 2
    assert ("tool", "spinning\n\n[interrupted: tool aborted by user]") in request_messages(server.requests[1])


def test_code_stuck_in_native_code_is_abandoned_and_reported(tmp_path):
    """run_python blocked in native code (here `Event.wait()`) cannot take the interrupt: at the
    timeout it is abandoned; a run_python call while it still runs fails at once with a clear
    message instead of waiting behind it; once the stuck code returns, run_python works again."""
    script = [
        _call("call_block", "run_python", description="Wait", code="release.wait()\nprint('woke up')"),
        _call("call_busy", "run_python", description="Print", code="print('quick')"),
        {"text": "The first call is still blocked."},
        _call("call_free", "run_python", description="Print", code="print('free again')"),
        {"text": "run_python works again."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            _ok(kernel.execute(SHORT_TIMEOUT_CELL + "\nimport threading\nrelease = threading.Event()"))
            cell = kernel.execute("%%penguin --approve allow-all\nWait, then print", timeout=120)
            unblock = kernel.execute(
                "release.set()\n"
                "for t in threading.enumerate():\n"
                "    if t.name == 'penguin-run-python':\n"
                "        t.join(10)\n"
                "print(sorted(t.name for t in threading.enumerate() if t.name == 'penguin-run-python'))"
            )
            follow = kernel.execute("%%penguin --approve allow-all\nTry again", timeout=120)
        finally:
            kernel.close()
    _ok(cell)
    outputs = _outputs(_transcript(cell))
    assert outputs["call_block"]["stop_reason"] == "failed"
    assert outputs["call_block"]["output"] == TIMEOUT_MARKER
    busy = outputs["call_busy"]
    assert busy["stop_reason"] == "failed"
    assert busy["output"] == BUSY_MESSAGE
    _ok(unblock)
    assert unblock.stdout == "[]\n" and "woke up" not in unblock.stdout
    _ok(follow)
    assert _outputs(_transcript(follow))["call_free"]["output"] == "free again\n"


def _image_parts(request: dict) -> list[str]:
    return [
        part["image_url"]["url"]
        for message in request["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


# Sleeps 10 s in 0.05 s slices (interruptible between slices, as a training loop is).
SLEEP_CODE = "import time\nfor _ in range(200):\n    time.sleep(0.05)\nprint('slept')"


def test_python_timeout_option_ends_long_code_and_the_next_cell_runs(tmp_path):
    """`--python-timeout 2`: code that would sleep 10 s ends at 2 s with the timeout marker (model
    and transcript); the cell finishes, the next cell runs, and the next `%%penguin` cell without
    the option is back on the default limit (the same code would have run to the end)."""
    script = [
        _call("call_sleep", "run_python", description="Sleep", code=SLEEP_CODE),
        {"text": "It ran out of time."},
        _call(
            "call_quick", "run_python", description="Print", code="import time\ntime.sleep(2.5)\nprint('ok')"
        ),
        {"text": "Done."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            _ok(kernel.execute("import matplotlib.pyplot"))
            bad = kernel.execute("%%penguin --python-timeout soon\nSleep")
            cell = kernel.execute("%%penguin --approve allow-all --python-timeout 2\nSleep", timeout=120)
            plain = kernel.execute("print(6 * 7)")
            follow = kernel.execute("%%penguin --approve allow-all\nPrint", timeout=120)
        finally:
            kernel.close()
    _ok(bad)
    assert bad.stderr == (
        "penguin: python-timeout needs a number of seconds from 0 to 604800 (0 = no limit), got 'soon'\n"
    )
    _ok(cell)
    requests = server.requests
    assert len(requests) == 4
    sleep = _outputs(_transcript(cell))["call_sleep"]
    assert (sleep["stop_reason"], sleep["output"]) == ("failed", TIMEOUT_MARKER)
    assert _text(_tool_reply(requests[1], "call_sleep")) == TIMEOUT_MARKER
    _ok(plain)
    assert plain.stdout == "42\n"
    _ok(follow)
    quick = _outputs(_transcript(follow))["call_quick"]
    assert (quick["stop_reason"], quick["output"]) == ("completed", "ok\n")


# A 1×1 PNG; `Dot` displays as it (and as text `Dot()`).
DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
DOT_CELL = (
    "import base64\n"
    "class Dot:\n"
    "    def _repr_png_(self):\n"
    f"        return base64.b64decode({DOT_PNG!r})\n"
    "    def __repr__(self):\n"
    "        return 'Dot()'"
)
DISPLAY_FIGURE_CODE = (
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(2, 2))\nax.plot([1, 2])\ndisplay(fig)"
)
DISPLAY_CODE = (
    "from IPython.display import Markdown, display\n"
    "print('before', end='')\n"
    "display(sales[['region', 'units']])\n"
    "display(Markdown('**cleaned**'))\n"
    "display(Dot())\n"
    "print('after')"
)


def test_display_in_run_python_reaches_the_model(tmp_path):
    """display() inside run_python: a DataFrame's text and Markdown go into the tool's text, in
    order with the prints; an object with `_repr_png_` becomes an image part of the next model
    request. The user still sees the displays in the cell."""
    script = [
        _call("call_display", "run_python", description="Show", code=DISPLAY_CODE),
        _call("call_figure", "run_python", description="Plot", code=DISPLAY_FIGURE_CODE),
        {"text": "Shown."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, server)
        try:
            _ok(kernel.execute(SALES_CELL + "\n" + DOT_CELL))
            cell = kernel.execute("%%penguin --approve allow-all\nShow me", timeout=120)
        finally:
            kernel.close()
    _ok(cell)
    requests = server.requests
    assert len(requests) == 3
    frame = repr(_local_sales()[["region", "units"]])
    expected = f"before\n{frame}\n**cleaned**\nDot()\nafter\n"
    assert _text(_tool_reply(requests[1], "call_display")) == expected
    dot_url = "data:image/png;base64," + DOT_PNG
    assert _image_parts(requests[1]) == [dot_url]
    output = _outputs(_transcript(cell))["call_display"]
    assert (output["stop_reason"], output["output"], output["images"]) == ("completed", expected, [dot_url])
    shown = [m["content"]["data"] for m in cell.of_type("display_data")]
    # Markdown reaches the cell rendered to fetch-free HTML (output/display_no_fetch.py)
    assert {"text/plain": "<IPython.core.display.Markdown object>", "text/html": "<p><strong>cleaned</strong></p>\n"} in shown
    assert any(d.get("image/png") == DOT_PNG for d in shown), "the user still sees the displayed image"
    # display(fig): the figure reaches the model once (not again as a new open figure)
    figure = _outputs(_transcript(cell))["call_figure"]
    assert figure["output"] == "<Figure size 200x200 with 1 Axes>\n"
    assert len(figure["images"]) == 1 and figure["images"][0].startswith("data:image/png;base64,")
    assert _image_parts(requests[2])[-1:] == figure["images"]
