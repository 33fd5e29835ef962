"""Kernel tools driven directly (a real namespace dict, real pandas/matplotlib, worker threads);
the kernel-level tests in test_kernel_tools.py run them inside a real ipykernel."""

from __future__ import annotations

import asyncio
import base64
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from penguin_jupyter.environment.types import ToolExecutionContext, ToolFailed, ToolResult
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.kernel_tools import InspectVariablesTool, ProposeCellTool, RunPythonTool
from penguin_jupyter.notebook.kernel_tools.displayed import (
    MAX_DISPLAY_IMAGES,
    MAX_IMAGE_BYTES,
    DisplayCapture,
    bundle_image,
    bundle_text,
)
from penguin_jupyter.notebook.kernel_tools.notebook_prompt import notebook_prompt
from penguin_jupyter.notebook.kernel_tools.python_runner import html_to_text
from penguin_jupyter.notebook.runtime.cell_prompt import expand_variables
from penguin_jupyter.notebook.runtime.kernel_runtime import KernelRuntime
from penguin_jupyter.notebook.runtime.options import (
    LineCommand,
    OptionError,
    parse_cell_options,
    parse_line_command,
)


class FakeShell:
    """Only what the tools touch on an InteractiveShell: `user_ns` and `set_next_input`."""

    def __init__(self, ns):
        self.user_ns = ns
        self.next_inputs = []

    def set_next_input(self, text, replace=False):
        self.next_inputs.append((text, replace))


async def run_tool(tool, args, signal=None):
    """(output, result) of one call; a `ToolFailed` reads as the close-out turns it: its text
    after what was streamed, stop reason failed."""
    text, result = [], None
    try:
        async for item in tool.execute(args, ToolExecutionContext("/tmp", "c1", signal=signal)):
            if isinstance(item, ToolResult):
                result = item
            else:
                text.append(item.payload.output)
    except ToolFailed as failed:
        text.append(failed.text)
        result = ToolResult(stop_reason="failed", note=failed.note)
    return "".join(text), result


@pytest.fixture
def shell():
    return FakeShell(
        {"sales": pd.DataFrame({"region": ["n", "s", None], "revenue": [10.0, 20.5, None]}), "n": 3}
    )


async def test_run_python_shares_namespace_prints_and_returns_last_value(shell):
    out, result = await run_tool(
        RunPythonTool(shell),
        {"code": "print('rows', len(sales))\nsales['double'] = sales.revenue * 2\nsales.double.sum()"},
    )
    assert out == f"rows 3\n{pd.Series([61.0]).sum()!r}"  # numpy 2 writes np.float64(61.0), numpy 1 61.0
    assert result.stop_reason == "completed"
    assert list(shell.user_ns["sales"].columns) == ["region", "revenue", "double"]


async def test_run_python_error_is_failed_with_trimmed_traceback(shell):
    out, result = await run_tool(RunPythonTool(shell), {"code": "x = 1\nundefined_name + 1"})
    assert result.stop_reason == "failed"
    assert out.startswith('Traceback (most recent call last):\n  File "<run_python-')
    assert "NameError: name 'undefined_name' is not defined" in out
    assert "python_runner.py" not in out
    assert shell.user_ns["x"] == 1


async def test_run_python_syntax_error(shell):
    out, result = await run_tool(RunPythonTool(shell), {"code": "def ("})
    assert result.stop_reason == "failed"
    assert "SyntaxError" in out


async def test_run_python_figure_becomes_png_image(shell):
    code = (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nNone"
    )
    _out, result = await run_tool(RunPythonTool(shell), {"code": code})
    assert result.stop_reason == "completed"
    assert len(result.images) == 1 and result.images[0].startswith("data:image/png;base64,iVBOR")
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []


async def test_run_python_abort_interrupts_busy_loop_and_namespace_survives(shell):
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.3, signal.abort)
    out, result = await run_tool(
        RunPythonTool(shell), {"code": "i = 0\nwhile True:\n    i += 1"}, signal=signal
    )
    assert result.stop_reason == "aborted"
    assert shell.user_ns["i"] > 0
    out, result = await run_tool(RunPythonTool(shell), {"code": "n + 1"})
    assert (out, result.stop_reason) == ("4", "completed")


async def test_run_python_rejects_missing_code(shell):
    out, result = await run_tool(RunPythonTool(shell), {})
    assert result.stop_reason == "failed" and "non-empty `code`" in out


def test_html_only_repr_becomes_text():
    assert html_to_text("<table><tr><td>a</td><td>1</td></tr></table>") == "a\t1"


async def test_inspect_variables_lists_and_summarizes(shell):
    shell.user_ns.update({"np": np, "f": len, "_hidden": 1, "arr": np.arange(4.0)})
    listing, result = await run_tool(InspectVariablesTool(shell), {})
    assert result is None
    names = [line.split("\t")[0] for line in listing.splitlines()[1:]]
    assert names == ["arr", "n", "sales"]
    assert "sales\tDataFrame\t3×2\t" in listing
    summary, _ = await run_tool(InspectVariablesTool(shell), {"names": ["sales", "arr", "nope"]})
    assert "sales: pandas DataFrame, 3 rows × 2 columns" in summary
    assert "  revenue: float64, 1 null" in summary
    assert "describe() of numeric columns:" in summary
    assert "arr: numpy ndarray, shape (4,), dtype float64" in summary
    assert "Not defined: nope." in summary


async def test_inspect_variables_is_bounded_for_huge_frames():
    big = pd.DataFrame(np.random.default_rng(0).normal(size=(200_000, 100)))
    text, _ = await run_tool(InspectVariablesTool(FakeShell({"big": big})), {"names": ["big"]})
    assert "200,000 rows × 100 columns" in text
    assert len(text) < 16_000


async def test_propose_cell_sets_next_input(shell):
    tool = ProposeCellTool(shell)
    out, result = await run_tool(tool, {"code": "sales = sales.dropna()\nsales"})
    assert shell.next_inputs == [("sales = sales.dropna()\nsales", False)]
    assert out.startswith("Proposed a new cell (2 lines) directly below")
    assert result is None


def test_expand_variables_and_escapes(shell):
    text = expand_variables("Clean {sales} then {{not_a_var}} and {missing} stay", shell.user_ns)
    assert "sales: pandas DataFrame, 3 rows × 2 columns" in text
    assert "{not_a_var}" in text and "{missing}" in text


def test_notebook_prompt_names_dataframes(shell):
    prompt = notebook_prompt(shell.user_ns)
    assert "run_python" in prompt and "inspect_variables" in prompt and "propose_cell" in prompt
    assert "DataFrames defined when this session started: sales." in prompt


# --- run_python's timeout setting ---------------------------------------------------------


def test_python_timeout_option_and_line_command_parse():
    assert parse_cell_options("--python-timeout 600").python_timeout_s == 600
    assert parse_cell_options("--python-timeout=0").python_timeout_s == 0
    assert parse_cell_options("--new").python_timeout_s is None
    for bad in ("abc", "-1", "nan", "inf"):
        with pytest.raises(OptionError) as info:
            parse_cell_options(f"--python-timeout {bad}")
        assert str(info.value) == (
            f"penguin: python-timeout needs a number of seconds from 0 to 604800 (0 = no limit), got {bad!r}"
        )
    with pytest.raises(OptionError, match="needs a value"):
        parse_cell_options("--python-timeout")
    assert parse_line_command("python-timeout 90") == LineCommand("python-timeout", "90")
    with pytest.raises(OptionError, match="usage: %penguin python-timeout SECONDS"):
        parse_line_command("python-timeout")
    with pytest.raises(OptionError, match="got 'x'"):
        parse_line_command("python-timeout x")


def test_run_python_definition_follows_cell_then_kernel_then_default(shell):
    runtime = KernelRuntime(None)
    tool = RunPythonTool(shell, runtime.python_timeout_ms)
    assert tool.definition.timeout_ms == 120_000
    runtime.sessions.python_timeout_s = 0  # %penguin python-timeout 0: no limit
    assert tool.definition.timeout_ms == 0
    runtime.current = SimpleNamespace(python_timeout_s=2.5)  # a running cell's --python-timeout
    assert tool.definition.timeout_ms == 2500
    assert tool.definition.description == RunPythonTool(shell).definition.description
    runtime.current = SimpleNamespace(python_timeout_s=None)  # a running cell without the option
    assert tool.definition.timeout_ms == 0
    runtime.current = None  # between cells: the cell's setting ended with it
    assert tool.definition.timeout_ms == 0
    assert RunPythonTool(shell).definition.timeout_ms == 120_000


# --- display() captured for the model -------------------------------------------------------

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_bundle_text_prefers_markdown_then_plain_then_html():
    assert bundle_text({"text/plain": "<Markdown object>", "text/markdown": "**hi**"}) == "**hi**"
    assert bundle_text({"text/plain": "   a\n0  1"}) == "   a\n0  1"
    html_only = {"text/plain": "<IPython.core.display.HTML object>", "text/html": "<b>x</b><br>y"}
    assert bundle_text(html_only) == "x\ny"
    assert bundle_text({"text/plain": "<IPython.core.display.Image object>", "image/png": PNG_1PX}) is None
    assert bundle_text({"application/json": {"a": 1}}) is None


def test_bundle_image_png_jpeg_bytes_and_too_large():
    assert bundle_image({"image/png": PNG_1PX}) == ("data:image/png;base64," + PNG_1PX, None)
    raw = base64.b64decode(PNG_1PX)
    assert bundle_image({"image/png": raw}) == ("data:image/png;base64," + PNG_1PX, None)
    assert bundle_image({"image/jpeg": "abcd"}) == ("data:image/jpeg;base64,abcd", None)
    image, note = bundle_image({"image/png": "A" * (MAX_IMAGE_BYTES + 4)})
    assert image is None and note.startswith("[displayed image/png of 3,000,003 bytes not sent")


def test_display_capture_bounds_images_per_call():
    texts, images = [], []
    capture = DisplayCapture(texts.append, images)
    for _ in range(MAX_DISPLAY_IMAGES + 2):
        capture({"text/plain": "<IPython.core.display.Image object>", "image/png": PNG_1PX})
    assert len(images) == MAX_DISPLAY_IMAGES
    assert texts == [f"[displayed image not sent: more than {MAX_DISPLAY_IMAGES} in one call]\n"] * 2


class PrintingPublisher:
    """Publishes the way terminal IPython's DisplayPublisher does: prints the text/plain."""

    def publish(self, data, metadata=None, *, transient=None, update=False):
        if "text/plain" in data:
            print(data["text/plain"])


class DisplayShell(FakeShell):
    """A FakeShell with a display publisher and IPython's real DisplayFormatter."""

    def __init__(self, ns):
        from IPython.core.formatters import DisplayFormatter

        super().__init__(ns)
        self.display_pub = PrintingPublisher()
        self.display_formatter = DisplayFormatter()


async def test_run_python_display_goes_to_the_model_in_order_with_prints(capsys):
    shell = DisplayShell({})
    shell.user_ns["show"] = lambda data: shell.display_pub.publish(data=data, metadata={})
    code = (
        "print('one', end='')\n"
        "show({'text/plain': 'frame text', 'text/markdown': '**md**'})\n"
        "show({'text/plain': '<IPython.core.display.Image object>', 'image/png': PNG})\n"
        "print('two')\n"
        "7"
    )
    shell.user_ns["PNG"] = PNG_1PX
    out, result = await run_tool(RunPythonTool(shell), {"code": code})
    assert out == "one\n**md**\ntwo\n7"
    assert result.images == ["data:image/png;base64," + PNG_1PX]
    # the printing publisher still printed for the user, and only there (not into the model text)
    assert "frame text" in capsys.readouterr().out
    # other threads (the kernel's own displays) are not captured
    shell.display_pub.publish(data={"text/plain": "kernel display"}, metadata={})
    assert "kernel display" in capsys.readouterr().out
    out, _ = await run_tool(RunPythonTool(shell), {"code": "print('next')"})
    assert out == "next\n"


async def test_run_python_figure_passed_to_display_is_not_collected_again():
    import matplotlib

    matplotlib.use("Agg")
    shell = DisplayShell({})
    shell.user_ns["show"] = lambda obj: shell.display_pub.publish(
        data=shell.display_formatter.format(obj)[0], metadata={}
    )
    code = (
        "import matplotlib.pyplot as plt\nfig = plt.figure()\nplt.plot([1, 2])\nshow(fig)\nplt.figure()\nNone"
    )
    out, result = await run_tool(RunPythonTool(shell), {"code": code})
    import matplotlib.pyplot as plt

    # no inline backend here, so display(fig) sends its text only; of the two new figures only
    # the one never displayed is collected as an image (in a kernel the displayed one is its PNG)
    assert out == "<Figure size 640x480 with 1 Axes>\n"
    assert len(result.images) == 1
    assert plt.get_fignums() == []


def test_the_packages_lazy_names_are_not_submodule_names():
    """Importing a submodule rebinds the package attribute of its name to the module, so a lazily
    loaded function named like a submodule would turn into a module after that import."""
    import pkgutil

    import penguin_jupyter.notebook.kernel_tools as package

    submodules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert not (set(package._LAZY) | set(package.__all__)) & submodules
