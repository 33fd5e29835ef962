"""read_notebook stays bounded on a large notebook: an outline by default (one line per cell, the
running cell marked), the cells asked for in full, every answer within its budget and saying what
it left out and how to get it. The real tool reads a saved .ipynb (no frontend); the bridge hands
the same cell dicts to the same `notebook_answer`, which the bridge-shaped cases call directly."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from penguin_jupyter.environment.types import ToolExecutionContext, ToolResult
from penguin_jupyter.notebook.kernel_tools.cell_outputs import cells_text
from penguin_jupyter.notebook.kernel_tools.notebook_cells import EditCellTool, ReadNotebookTool
from penguin_jupyter.notebook.kernel_tools.notebook_outline import (
    ANSWER_BUDGET,
    notebook_answer,
    resolve_cell_id,
    short_ids,
)
from penguin_jupyter.notebook.link.notebook_link import NotebookLink
from tests.support.notebooks import analysis_cells, write_notebook


class _Shell:
    def __init__(self) -> None:
        self.user_ns: dict[str, object] = {}
        self.events = None
        self.kernel = None


def _read(link: NotebookLink, **args) -> tuple[str, list[str]]:
    async def run() -> tuple[str, list[str]]:
        text, images = [], []
        async for item in ReadNotebookTool(link).execute(args, ToolExecutionContext("/tmp", "c1")):
            if isinstance(item, ToolResult):
                images = item.images or []
            else:
                text.append(item.payload.output)
        return "".join(text), images

    return asyncio.run(run())


@pytest.fixture
def saved(tmp_path, monkeypatch):
    """A link without a frontend reading `write(n)`'s saved notebook; the last cell is running."""

    def write(count: int) -> tuple[NotebookLink, list[dict]]:
        cells = analysis_cells(count)
        path = write_notebook(tmp_path / f"analysis_{count}.ipynb", cells)
        monkeypatch.setenv("JPY_SESSION_NAME", str(path))
        link = NotebookLink(_Shell(), None)
        link.task.running_cell_id = cells[-1]["id"]
        return link, cells

    return write


@pytest.mark.parametrize(("count", "limit"), [(60, 6_700), (300, 16_000)])
def test_a_large_saved_notebook_reads_as_an_outline_within_its_budget(saved, count, limit):
    link, cells = saved(count)
    text, images = _read(link)
    whole = cells_text(cells, cells[-1]["id"]).text
    assert len(whole) > 2 * len(text), "the outline replaces the whole notebook"
    assert len(text) <= limit, f"{count} cells: {len(text)} chars"
    assert images == [], "no plot is sent with an outline"
    assert "read from the saved file" in text and "start/end" in text and "cell_ids" in text
    lines = [line for line in text.splitlines() if line[:1].isdigit()]
    running = [line for line in lines if "◀ the running %%penguin cell" in line]
    assert running == [lines[-1]] and "%%penguin Summarize" in running[0]
    first_code = next(line for line in lines if line.startswith("1 "))
    assert "import pandas as pd" in first_code and "text 11" in first_code
    assert any("→ png" in line for line in lines) and any("error KeyError" in line for line in lines)
    if count == 60:
        assert len(lines) == 60, "every cell has its line"
    else:
        skipped = [line for line in text.splitlines() if line.startswith("… cells ")]
        assert skipped and all("not listed: read_notebook start=" in line for line in skipped)


def test_cells_asked_for_come_in_full_and_a_long_range_is_cut_with_the_call_for_the_rest(saved):
    link, cells = saved(300)
    short = short_ids(cells)
    wanted = cells[8]  # the KeyError cell
    text, _ = _read(link, cell_ids=[short[wanted["id"]], "nope"])
    assert text.startswith("1 of 300 cells")
    assert f"### cell 8 · id {wanted['id']}" in text and "KeyError: 'profit'" in text
    assert "No cell with id nope" in text
    text, images = _read(link, start=0, end=120)
    assert len(text) <= ANSWER_BUDGET
    shown = text.count("### cell ")
    assert 0 < shown < 120 and f"read_notebook start={shown} end=120]" in text
    assert 0 < len(images) <= 4


def test_a_small_notebook_still_comes_whole():
    cells = analysis_cells(4)
    answer = notebook_answer(cells, cells[-1]["id"], note="(live notebook)")
    assert answer.text.startswith("4 of 4 cells (live notebook)")
    assert "### cell 2 · id" in answer.text and "<table>" not in answer.text
    assert "the running %%penguin cell" in answer.text


def test_short_ids_stay_unique_and_resolve_back():
    cells = [{"id": "abcdefgh-1111"}, {"id": "abcdefgh-2222"}, {"id": "12345678-xxxx"}]
    short = short_ids(cells)
    assert short["12345678-xxxx"] == "12345678"
    assert short["abcdefgh-1111"] != short["abcdefgh-2222"]
    known = [c["id"] for c in cells]
    assert all(resolve_cell_id(s, known) == full for full, s in short.items())
    assert resolve_cell_id("abcdefgh", known) == "abcdefgh"  # ambiguous: left as given


def test_a_write_tool_takes_the_outlines_short_id():
    link = SimpleNamespace(sources={"f5dd9e84-aaaa": "x = 1", "7adfed39-bbbb": "%%penguin\nhi"},
                           task=SimpleNamespace(running_cell_id="7adfed39-bbbb"))  # fmt: skip
    tool = EditCellTool(link)  # type: ignore[arg-type]
    assert tool._target_cell("f5dd9e84", "edited") == "f5dd9e84-aaaa"
    with pytest.raises(Exception, match="running %%penguin cell"):
        tool._target_cell("7adfed39", "edited")
