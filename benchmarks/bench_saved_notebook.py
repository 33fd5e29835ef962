"""The "Run All reproduces" lookup at a `%%penguin` cell start: the saved .ipynb read once per
version of the file (saved_notebook_cache.py) against a full parse at every cell start.

Builds notebooks of about 20 MB and 50 MB on disk (nbformat 4 JSON): %%penguin cells whose
completed transcript bundle holds 120 messages of 300 chars plus 40 KB of HTML, between code cells
of 20 source lines with 1,000 printed lines and a 100 KB PNG output. For each notebook it times the lookup a cell start makes — `NotebookLink.
saved_completed_outputs` for the first and for the last %%penguin cell, its file named by
`__session__` as jupyter_server does — on a fresh cache (the 1st cell start after `%load_ext` or
after a save) and on a warm one (every following cell start while the file is unchanged), then
after the file is rewritten. "before" runs the same lookup with notebook_file.py of git revision
`--baseline` (default 7493678, the last one without the cache): read_saved_cells +
completed_transcript at every cell start. Best of REPS runs each. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import module_at_revision, print_table  # noqa: E402

from penguin_jupyter.notebook.link.notebook_link import NotebookLink  # noqa: E402
from penguin_jupyter.notebook.link.saved_notebook_cache import SavedNotebookCache  # noqa: E402
from penguin_jupyter.notebook.transcript.cell_sources import set_cell_source_lookup  # noqa: E402

MIME = "application/vnd.penguin.transcript+json"
MODULE = "penguin_jupyter/notebook/kernel_tools/notebook_file.py"  # its path at the baseline revisions
DEFAULT_BASELINE = "7493678"
REPS = 3
SIZES_MB = (20, 50)
PAIR_BYTES = 232_000  # one %%penguin cell and one code cell, as JSON (indent=1)


def _penguin_cell(n: int) -> dict[str, Any]:
    messages = [
        {
            "type": "model_msg",
            "timestamp": 1.7e12 + i,
            "payload": {"type": "text", "role": "assistant", "text": f"step {n}.{i} " + "x" * 300},
        }
        for i in range(120)
    ]
    bundle = {
        "version": 1,
        "session": {"session_id": "s"},
        "status": "completed",
        "usage": None,
        "messages": messages,
    }
    output = {
        "output_type": "display_data",
        "metadata": {},
        "data": {MIME: bundle, "text/html": "<div>" + "y" * 40_000 + "</div>", "text/plain": "transcript"},
    }
    source = f"%%penguin --approve ask\nAnalyse part {n}"
    return {
        "cell_type": "code",
        "id": f"p{n}",
        "metadata": {},
        "execution_count": n,
        "source": source,
        "outputs": [output],
    }


def _code_cell(n: int) -> dict[str, Any]:
    png = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "A" * 100_000, "text/plain": ["<Figure>"]},
    }
    printed = {
        "output_type": "stream",
        "name": "stdout",
        "text": [f"row {i}: {i * 0.5:.3f}\n" for i in range(1000)],
    }
    source = [f"line_{i} = plot({n}, {i})\n" for i in range(20)]
    return {
        "cell_type": "code",
        "id": f"c{n}",
        "metadata": {},
        "execution_count": n,
        "source": source,
        "outputs": [printed, png],
    }


def write_notebook(path: Path, megabytes: int) -> int:
    """A notebook of about `megabytes` MB; returns how many %%penguin cells it has."""
    cells: list[dict[str, Any]] = []
    size, n = 0, 0
    while size < megabytes * 1_000_000:
        cells += [_penguin_cell(n), _code_cell(n)]
        size += PAIR_BYTES
        n += 1
    notebook = {
        "cells": cells,
        "metadata": {"penguin": {"session_id": "s"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return n


class _Kernel:
    cell_id = "p0"

    def get_parent(self) -> dict[str, Any]:
        return {"metadata": {"cellId": self.cell_id}}


class _Shell:
    def __init__(self, notebook: Path) -> None:
        self.user_ns = {"__session__": str(notebook)}
        self.events = None
        self.kernel = _Kernel()


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def measure(path: Path, cells: int, baseline: Any) -> list[list[Any]]:
    link = NotebookLink(_Shell(path), None)
    first, last = (
        ("p0", "%%penguin --approve ask\nAnalyse part 0"),
        (f"p{cells - 1}", f"%%penguin --approve ask\nAnalyse part {cells - 1}"),
    )

    def lookup(target: tuple[str, str]) -> Callable[[], Any]:
        def run() -> Any:
            link.shell.kernel.cell_id = target[0]
            return link.saved_completed_outputs(target[1])

        return run

    def old_lookup(target: tuple[str, str]) -> Callable[[], Any]:
        return lambda: baseline.completed_transcript(
            baseline.read_saved_cells(str(path)), target[0], target[1]
        )

    rows = []
    for label, target in (("1st %%penguin cell", first), ("last %%penguin cell", last)):
        before = min(_timed(old_lookup(target))[0] for _ in range(REPS))
        cold, warm = [], []
        for _ in range(REPS):
            link.saved_notebooks = SavedNotebookCache()
            seconds, found = _timed(lookup(target))
            assert found is not None, "the lookup must find the saved transcript"
            cold.append(seconds)
            warm.append(min(_timed(lookup(target))[0] for _ in range(20)))
        parses = link.saved_notebooks.parses
        rows.append(
            [label, before * 1000, min(cold) * 1000, min(warm) * 1000, f"{before / min(warm):,.0f}x", parses]
        )
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a save
    seconds, _ = _timed(lookup(last))
    rows.append(["after a save (file changed)", "", seconds * 1000, "", "", link.saved_notebooks.parses])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        default=DEFAULT_BASELINE,
        help="notebook_file.py of this git revision is 'before'",
    )
    parser.add_argument(
        "--sizes", default=",".join(map(str, SIZES_MB)), help="notebook sizes in MB, comma-separated"
    )
    args = parser.parse_args()
    baseline = module_at_revision(args.baseline, MODULE)
    with tempfile.TemporaryDirectory(prefix="bench-saved-notebook-") as tmp:
        for megabytes in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"big_{megabytes}.ipynb"
            cells = write_notebook(path, megabytes)
            size = path.stat().st_size / 1e6
            rows = measure(path, cells, baseline)
            print_table(
                f"Saved-transcript lookup at a cell start: {size:.1f} MB notebook, {cells} %%penguin + {cells} code cells",
                [
                    "lookup",
                    "before ms (every start)",
                    "after ms, 1st start",
                    "after ms, Nth start",
                    "Nth: before ÷ after",
                    "parses",
                ],
                rows,
                [
                    f"before = notebook_file.py of {args.baseline}: json.load + a copy of every cell at each start;",
                    "after = saved_notebook_cache.py: parse once per (path, mtime_ns, size, inode), then a stat;",
                    f"best of {REPS}; 'parses' = files decoded by the cache so far (incl. the cold runs).",
                ],
            )
            path.unlink()
    set_cell_source_lookup(None)


if __name__ == "__main__":
    main()
