"""Kernel tools driven directly (a real namespace dict, real pandas/matplotlib, worker threads);
the kernel-level tests in test_kernel_tools.py run them inside a real ipykernel."""

from __future__ import annotations

import asyncio

import numpy as np
import pandas as pd
import pytest

from penguin_jupyter.environment.types import ToolExecutionContext, ToolResult
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.kernel_tools import (
    InspectVariablesTool,
    ProposeCellTool,
    RunPythonTool,
    expand_variables,
    notebook_prompt,
)
from penguin_jupyter.notebook.kernel_tools.python_runner import html_to_text


class FakeShell:
    """Only what the tools touch on an InteractiveShell: `user_ns` and `set_next_input`."""

    def __init__(self, ns):
        self.user_ns = ns
        self.next_inputs = []

    def set_next_input(self, text, replace=False):
        self.next_inputs.append((text, replace))


async def run_tool(tool, args, signal=None):
    text, result = [], None
    async for item in tool.execute(args, ToolExecutionContext("/tmp", "c1", signal=signal)):
        if isinstance(item, ToolResult):
            result = item
        else:
            text.append(item.payload.output)
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
    assert out == "rows 3\nnp.float64(61.0)"
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
    assert "200000 rows × 100 columns" in text
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
