"""Undo's journaling cost per `run_python` call (issue 30), with large objects in the namespace.

What a call pays: the Task's first namespace-changing call takes the baseline
(`NamespaceBaseline.take`: a reference to every variable, the bounded fingerprint of each
mutable one, a copy of those under the copy limit); later calls of the Task only check that a
baseline exists; the Task's end compares the namespace with it (`settle`). Measured with a
namespace holding a 1e7-row pandas DataFrame (float, int, datetime, object columns), a 1e7
numpy array, a 1e7-element list, a 1e6-entry dict and a small DataFrame, list and dict (copied),
each step the best of 7 runs; extra memory is the tracemalloc peak during one baseline + settle
and the RSS growth. Goal: ≤ 5 ms per call and ≤ 10 MB extra when nothing large is copied.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import psutil  # noqa: E402
from _common import print_table, verdict  # noqa: E402

from penguin_jupyter.notebook.undo.namespace_journal import NamespaceBaseline  # noqa: E402
from penguin_jupyter.notebook.undo.undo_stack import TaskJournal, UndoStack  # noqa: E402

ROWS = 10_000_000
GOAL_MS = 5.0
GOAL_MB = 10.0


def _namespace(large: bool) -> dict[str, Any]:
    ns: dict[str, Any] = {
        "small_df": pd.DataFrame({"a": range(1000), "b": [0.5] * 1000}),
        "small_list": list(range(1000)),
        "small_dict": {i: str(i) for i in range(1000)},
        "threshold": 0.5,
    }
    if large:
        ns["df"] = pd.DataFrame(
            {
                "value": np.random.default_rng(0).random(ROWS),
                "count": np.arange(ROWS, dtype=np.int64),
                "when": pd.date_range("2020-01-01", periods=ROWS, freq="s"),
                "region": np.array(["north", "south", "east"], dtype=object)[np.arange(ROWS) % 3],
            }
        )
        ns["arr"] = np.arange(ROWS, dtype=np.float64)
        ns["big_list"] = list(range(ROWS))
        ns["big_dict"] = {i: i for i in range(1_000_000)}
    return ns


def _best_ms(fn: Any, runs: int = 7) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def _measure(ns: dict[str, Any]) -> dict[str, float]:
    stack = UndoStack()

    def first_call() -> None:  # the Task's first run_python: the baseline
        stack.current = TaskJournal("bench", "s", None, "p")
        stack.before_namespace_change(ns)

    def later_call() -> None:  # every later run_python call of the same Task
        stack.before_namespace_change(ns)

    baseline = NamespaceBaseline.take(ns)
    first = _best_ms(first_call)
    later = _best_ms(later_call)
    settle = _best_ms(lambda: baseline.settle(ns))
    process = psutil.Process()
    rss = process.memory_info().rss
    tracemalloc.start()
    kept = NamespaceBaseline.take(ns)
    kept.settle(ns)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    grown = max(0, process.memory_info().rss - rss)
    return {
        "first": first,
        "later": later,
        "settle": settle,
        "peak_mb": peak / 2**20,
        "rss_mb": grown / 2**20,
        "copied": float(len(kept.copies)),
    }


def main() -> int:
    rows = []
    results = {}
    for label, large in (("small objects only", False), ("+ 1e7-row DataFrame, 1e7 array, 1e7 list, 1e6 dict", True)):
        ns = _namespace(large)
        result = _measure(ns)
        results[label] = result
        rows.append(
            [
                label,
                f"{result['first']:.2f}",
                f"{result['later']:.4f}",
                f"{result['settle']:.2f}",
                f"{result['peak_mb']:.2f}",
                f"{result['rss_mb']:.1f}",
                f"{int(result['copied'])}",
            ]
        )
    large = results["+ 1e7-row DataFrame, 1e7 array, 1e7 list, 1e6 dict"]
    ok = large["first"] <= GOAL_MS and large["settle"] <= GOAL_MS and large["peak_mb"] <= GOAL_MB
    print_table(
        "undo journaling per run_python call (bench_undo.py)",
        ["namespace", "first call ms (baseline)", "later call ms", "Task end ms (settle)", "extra MB (tracemalloc)", "RSS growth MB", "objects copied"],
        rows,
        [
            f"goal: ≤ {GOAL_MS} ms per call and at the Task's end, ≤ {GOAL_MB} MB extra with the large objects "
            f"not copied — {verdict(ok)} (baseline {large['first']:.2f} ms, settle {large['settle']:.2f} ms, "
            f"{large['peak_mb']:.2f} MB)"
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
