"""Summaries stay bounded whatever the variable's size: statistics from a row sample that says so,
shallow memory marked "≥", container reprs walked only to the limit, the time budget and the hard
guard. Real pandas/numpy objects; no timing assertions (the figures live in
benchmarks/bench_summaries.py)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd

from penguin_jupyter.notebook.kernel_tools.notebook_prompt import notebook_prompt
from penguin_jupyter.notebook.kernel_tools.summaries import summarize_variable, variables_table
from penguin_jupyter.notebook.kernel_tools.summary_pandas import ROW_BUDGET, dataframe_summary
from penguin_jupyter.notebook.kernel_tools.summary_text import Budget, bounded_repr

ROWS = ROW_BUDGET * 3


def _frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "x": np.arange(rows, dtype=np.float64),
            "when": pd.date_range("2024-01-01", periods=rows, freq="s"),
            "label": pd.Series(np.array(["a", "bb", None], dtype=object)[np.arange(rows) % 3], dtype=object),
        }
    )


def test_large_frame_stats_come_from_a_sample_that_says_so():
    text = summarize_variable("big", _frame(ROWS))
    lines = text.splitlines()
    assert lines[0] == "big: pandas DataFrame, 300,000 rows × 3 columns"
    assert lines[1].startswith("stats from a 100,000-row sample (of 300,000 rows); memory ≥ ")
    assert "columns (dtype, nulls in sample):" in lines
    # a third of the labels are None: the sample's null count is about a third of 100,000
    label = next(line for line in lines if line.startswith("  label: object, "))
    assert 30_000 < int(label.split(", ")[1].split()[0]) < 37_000
    assert "describe() of numeric columns (sample):" in lines
    assert "count  100000.0" in text  # describe() saw the sample, not the 300,000 rows
    assert "first 5 rows:" in lines


def test_small_frame_is_summarized_exactly():
    text = summarize_variable("small", _frame(10))
    assert "sample" not in text
    assert "columns (dtype, nulls):" in text
    assert "  label: object, 3 null" in text


def test_listing_memory_is_shallow_and_marked_for_object_columns_beyond_the_row_budget():
    frame = _frame(ROWS)
    numeric = frame[["x", "when"]]
    table = variables_table({"frame": frame, "numeric": numeric, "small": _frame(10)})
    rows = {line.split("\t")[0]: line.split("\t") for line in table.splitlines()[1:]}
    shallow = int(frame.memory_usage(deep=False).sum())
    assert rows["frame"][2] == "300000×3"
    assert rows["frame"][3].startswith("≥ ") and rows["frame"][3] == f"≥ {shallow / 1024 / 1024:.1f} MB"
    assert rows["numeric"][3] == f"{int(numeric.memory_usage(deep=True).sum()) / 1024 / 1024:.1f} MB"
    small = _frame(10)
    assert rows["small"][3] == f"{int(small.memory_usage(deep=True).sum())} B"  # exact when small


def test_container_repr_is_cut_without_walking_the_whole_container():
    class Counted:
        reprs = 0

        def __repr__(self) -> str:
            Counted.reprs += 1
            return "item"

    items = [Counted() for _ in range(50_000)]
    text = bounded_repr(items, 200)
    assert text.startswith("[item, item, ") and text.endswith("… [cut at 200 chars of 50,000 items]")
    assert Counted.reprs < 50  # only the items that fit were repr'd
    nested = {"a": list(range(10**6)), "b": {"c": "x" * 10**6}}
    cut = bounded_repr(nested, 300)
    assert cut.startswith("{'a': [0, 1, 2, ") and len(cut) < 360
    assert bounded_repr((1,)) == "(1,)" and bounded_repr(set()) == "set()" and bounded_repr({}) == "{}"
    assert bounded_repr([1, [2, {"k": (3, 4)}]]) == repr([1, [2, {"k": (3, 4)}]])


def test_listing_of_huge_builtins_counts_without_repr():
    big_list = list(range(2_000_000))
    table = variables_table({"big_list": big_list, "text": "hello"})
    assert "big_list\tlist\tlen 2000000\t≥ " in table
    assert "text\tstr\tlen 5\t" in table
    summary = summarize_variable("big_list", big_list)
    assert summary.startswith("big_list: list, len 2000000\n[0, 1, 2, ")
    assert summary.endswith("… [cut at 2000 chars of 2,000,000 items]")


def test_len_is_never_called_on_unknown_objects():
    class Lazy:
        def __len__(self) -> int:
            raise AssertionError("len() would start a computation")

        def __repr__(self) -> str:
            return "<Lazy>"

    table = variables_table({"lazy": Lazy()})
    assert table.splitlines()[1].startswith("lazy\tLazy\t\t")
    assert summarize_variable("lazy", Lazy()) == "lazy: Lazy\n<Lazy>"


def test_spent_budget_cuts_optional_parts_with_a_note():
    budget = Budget(0.0)
    text = dataframe_summary("frame", _frame(10), budget)
    assert text.splitlines()[0] == "frame: pandas DataFrame, 10 rows × 3 columns"
    assert "  x: float64" in text  # dtypes always come
    assert "describe()" not in text and "first 5 rows" not in text
    assert budget.note() == ("[summary cut at its 0 s budget: skipped null counts, describe(), sample rows]")


def test_a_summary_that_never_finishes_is_cut_and_does_not_block():
    release = threading.Event()

    class Stuck:
        def __repr__(self) -> str:
            release.wait(30)
            return "<Stuck>"

    try:
        text = summarize_variable("stuck", Stuck(), hard_limit_s=0.2)
    finally:
        release.set()
    assert text == (
        "stuck: Stuck (summary cut: still running after 0.2 s, e.g. a slow __repr__; "
        "inspect it with run_python instead)"
    )


def test_large_series_and_array_use_samples():
    series = pd.Series(np.arange(ROWS, dtype=np.float64), name="v")
    text = summarize_variable("s", series)
    assert text.startswith("s: pandas Series 'v', length 300,000, dtype float64, 0 null in sample\n")
    assert "stats from a 100,000-row sample (of 300,000 rows); memory 2.3 MB" in text
    array = np.ones((600, 600))
    text = summarize_variable("a", array)
    assert "min 1, max 1, mean 1, std 0, nan 0 (from a 100,000-element sample)" in text


def test_notebook_prompt_lists_pandas_frames_by_name():
    prompt = notebook_prompt({"sales": _frame(3), "n": 1})
    assert "DataFrames defined when this session started: sales." in prompt


def test_a_failing_library_summary_is_one_line_and_keeps_the_repr():
    class Broken(pd.DataFrame):
        @property
        def shape(self):
            raise RuntimeError("backend\nunavailable")

    text = summarize_variable("broken", Broken({"a": [1]}))
    assert text.splitlines()[0] == "broken: Broken (summary failed: backend unavailable)"
    assert "a" in text.splitlines()[1]
