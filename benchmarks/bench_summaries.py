"""Variable summaries at scale: time and extra memory of `summarize_variable` and of one
`variables_table` row against the variable's size.

Cases: a pandas DataFrame (float, datetime and object columns; the object column holds three
repeated strings) at 1e5 → 5e7 rows, built once at the largest size and sliced (a view) for the
smaller ones; a list and a dict of 2e7 elements against 1e5; a polars DataFrame (float, datetime,
string) at 1e5 → 5e7 rows when polars is installed. Times are the best of two untraced runs. Extra
memory is the tracemalloc peak during a third call (numpy/pandas/Python allocations) and the peak RSS
growth sampled every 2 ms (also sees polars' Rust allocations). Goal: flat in n — largest ÷
smallest ≤ 3 — and ≤ 0.25 s, ≤ 50 MB for the largest frame.

`--baseline REV` also runs the summaries module of git revision REV (e.g. 5e99059, before
issue 19) on the pandas and builtin cases, for the before/after table.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import psutil  # noqa: E402
from _common import module_at_revision, print_table, verdict  # noqa: E402

from penguin_jupyter.notebook.kernel_tools import summaries  # noqa: E402

MODULE = "penguin_jupyter/notebook/kernel_tools/summaries.py"


def _peak_rss_growth(action: Callable[[], Any]) -> tuple[float, float, float]:
    """(seconds, tracemalloc peak MB, sampled peak RSS growth MB) of one call."""
    process = psutil.Process()
    base = process.memory_info().rss
    peak = [base]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            stop.wait(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    tracemalloc.start()
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    stop.set()
    sampler.join()
    return seconds, traced / 2**20, max(0, peak[0] - base) / 2**20


def _seconds(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(action: Callable[[], Any]) -> tuple[float, float, float]:
    """Best of two untraced timings (tracemalloc slows Python allocations several-fold), then one
    traced run for the memory figures."""
    seconds = min(_seconds(action) for _ in range(2))
    _, traced, rss = _peak_rss_growth(action)
    return seconds, traced, rss


def pandas_frame(rows: int) -> pd.DataFrame:
    labels = np.array(["alpha", "beta", "gamma"], dtype=object)
    return pd.DataFrame(
        {
            "x": np.random.default_rng(0).random(rows),
            "when": pd.date_range("2020-01-01", periods=rows, freq="s"),
            "label": pd.Series(labels[np.arange(rows) % 3], dtype=object),
        }
    )


def polars_frame(rows: int) -> Any:
    import polars as pl

    return pl.DataFrame(
        {
            "x": np.random.default_rng(0).random(rows),
            "when": np.arange(rows).astype("datetime64[ms]"),
            "label": pl.Series(["alpha", "beta", "gamma"]).gather(np.arange(rows) % 3),
        }
    )


def _cases(module: Any, value: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    return (lambda: module.summarize_variable("v", value)), (lambda: module.variables_table({"v": value}))


def run(sizes: list[int], baseline: Any | None) -> None:
    impls = [("after", summaries)] + ([("before", baseline)] if baseline is not None else [])
    rows: list[list[Any]] = []
    results: dict[tuple[str, str], list[tuple[int, float, float, float]]] = {}

    def record(case: str, n: int, impl: str, module: Any, value: Any) -> None:
        summary, listing = _cases(module, value)
        seconds, traced, rss = measure(summary)
        listing_s = min(_seconds(listing) for _ in range(2))
        results.setdefault((case, impl), []).append((n, seconds, traced, rss))
        rows.append(
            [case, f"{n:.0e}", impl, f"{seconds:.3f}", f"{traced:.1f}", f"{rss:.1f}", f"{listing_s:.4f}"]
        )

    largest = pandas_frame(max(sizes))
    for n in sizes:
        frame = largest.iloc[:n]
        for impl, module in impls:
            record("pandas DataFrame", n, impl, module, frame)
    del largest, frame
    for n in (100_000, 20_000_000):
        items = list(range(n))
        for impl, module in impls:
            record("list", n, impl, module, items)
        del items
        mapping = dict.fromkeys(range(n), 0)
        for impl, module in impls:
            record("dict", n, impl, module, mapping)
        del mapping
    if importlib.util.find_spec("polars") is not None:
        largest_pl = polars_frame(max(sizes))
        for n in sizes:
            record("polars DataFrame", n, "after", summaries, largest_pl.slice(0, n))
        del largest_pl

    notes = []
    for (case, impl), series in results.items():
        if impl != "after":
            continue
        small, large = series[0], series[-1]
        ratio = large[1] / small[1] if small[1] else float("inf")
        notes.append(
            f"{case}: time largest ÷ smallest = {ratio:.1f} (goal ≤ 3: {verdict(ratio <= 3)}); "
            f"largest {large[1]:.3f} s, {max(large[2], large[3]):.1f} MB extra"
        )
    print_table(
        "summarize_variable / variables_table at scale (best of 2)",
        ["case", "n", "impl", "summary s", "traced MB", "RSS+ MB", "listing s"],
        rows,
        notes,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6,1e7,5e7", help="pandas/polars row counts")
    parser.add_argument("--baseline", metavar="REV", help="also run the summaries.py of this git revision")
    args = parser.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    baseline = module_at_revision(args.baseline, MODULE) if args.baseline else None
    run(sizes, baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
