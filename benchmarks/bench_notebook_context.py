"""What `read_notebook` hands the model on a large notebook: characters and images, whole vs outline.

The generated analysis notebooks of tests/support/notebooks.py (markdown notes, loading code,
`head()`/`describe()` tables, plots, an error and a `%%penguin` cell every twelve cells; the last
cell is the running `%%penguin` cell) of 60 and 300 cells, saved as .ipynb and read by the real
`read_notebook` tool through a NotebookLink with no frontend (the saved-file path; the bridge
hands the same cell dicts to the same function). "Whole" is the full text of every cell as the
tool answered before (cell_outputs.cells_text; the tool cut it at 32,000 characters), "now" is
the default answer. Also the time the answer takes. Prints a table; asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import print_table, verdict  # noqa: E402

from penguin_jupyter.environment.types import ToolExecutionContext, ToolResult  # noqa: E402
from penguin_jupyter.notebook.kernel_tools.cell_outputs import cells_text  # noqa: E402
from penguin_jupyter.notebook.kernel_tools.notebook_cells import ReadNotebookTool  # noqa: E402
from penguin_jupyter.notebook.link.notebook_link import NotebookLink  # noqa: E402
from tests.support.notebooks import analysis_cells, write_notebook  # noqa: E402

GOALS = {60: 6_700, 300: 16_000}


class _Shell:
    def __init__(self) -> None:
        self.user_ns: dict[str, object] = {}
        self.events = None
        self.kernel = None


async def read(link: NotebookLink) -> tuple[str, int]:
    text, images = [], 0
    async for item in ReadNotebookTool(link).execute({}, ToolExecutionContext("/tmp", "bench")):
        if isinstance(item, ToolResult):
            images = len(item.images or [])
        else:
            text.append(item.payload.output)
    return "".join(text), images


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-context-") as folder:
        for count, goal in GOALS.items():
            cells = analysis_cells(count)
            path = write_notebook(Path(folder) / f"analysis_{count}.ipynb", cells)
            os.environ["JPY_SESSION_NAME"] = str(path)
            link = NotebookLink(_Shell(), None)
            link.task.running_cell_id = cells[-1]["id"]
            whole = cells_text(cells, cells[-1]["id"])
            start = time.perf_counter()
            text, images = asyncio.run(read(link))
            took = time.perf_counter() - start
            rows.append([
                f"{count} cells ({path.stat().st_size / 1e6:.1f} MB saved)", len(whole.text),
                min(4, len(whole.images)), len(text), images, took * 1000, f"≤ {goal:,}: {verdict(len(text) <= goal)}",
            ])  # fmt: skip
    print_table(
        "read_notebook on a large notebook: the whole text before, the default answer now",
        ["notebook", "whole chars", "whole images", "now chars", "now images", "now ms", "goal"],
        rows,
        ["whole: every cell in full (the tool then cut it at 32,000 characters); now: the outline"],
    )


if __name__ == "__main__":
    main()
