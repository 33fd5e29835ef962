"""Summaries of lazy and distributed collections compute nothing: counted with each library's own
hooks (dask.callbacks.Callback sees every local-scheduler computation and task; a polars
LazyFrame's map_batches function counts its calls), each with a positive control showing the
counter does see a computation. Spark runs for real (pyspark and a Java runtime come with
scripts/setup.sh); the torch test skips when torch is not installed (README "Compatibility")."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from penguin_jupyter.notebook.kernel_tools.notebook_prompt import notebook_prompt
from penguin_jupyter.notebook.kernel_tools.summaries import summarize_variable, variables_table

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")
pl = pytest.importorskip("polars")
xr = pytest.importorskip("xarray")

from dask.callbacks import Callback  # noqa: E402


class Computations(Callback):
    """Counts computations started and tasks run by dask's local schedulers."""

    def __init__(self) -> None:
        super().__init__()
        self.started = 0
        self.tasks = 0

    def _start(self, dsk):
        self.started += 1

    def _pretask(self, key, dsk, state):
        self.tasks += 1


def _dask_frame():
    pdf = pd.DataFrame({"k": np.arange(1000) % 7, "v": np.arange(1000, dtype=np.float64)})
    return dd.from_pandas(pdf, npartitions=4).assign(w=lambda d: d.v * 2)


def test_dask_frame_series_and_array_summaries_compute_nothing():
    ddf = _dask_frame()
    series = ddf["w"]
    array = da.ones((4000, 300), chunks=(1000, 100)) + 1
    namespace = {"ddf": ddf, "w": series, "arr": array}
    with Computations() as seen:
        table = variables_table(namespace)
        frame_text = summarize_variable("ddf", ddf)
        series_text = summarize_variable("w", series)
        array_text = summarize_variable("arr", array)
        prompt = notebook_prompt(namespace)
    assert (seen.started, seen.tasks) == (0, 0)

    assert "ddf\tdask.DataFrame\t?×3 (4 partitions)\tnot computed" in table
    assert "arr\tdask.Array\t4000×300 (12 chunks)\t9.2 MB when computed" in table
    assert frame_text.startswith(
        "ddf: Dask DataFrame (lazy), 3 columns in 4 partitions, index divisions from 0 to 999; "
        "nothing was computed\ncolumns (dtype):\n  k: int64\n  v: float64\n  w: float64\n"
    )
    assert "Not computed: row count, null counts, statistics and rows." in frame_text
    assert "`len(ddf)`" in frame_text and "`ddf.describe().compute()`" in frame_text
    assert series_text.startswith("w: Dask Series 'w' (lazy), dtype float64, 4 partitions")
    assert array_text.startswith(
        "arr: Dask Array (lazy), shape (4000×300), dtype float64, 9.2 MB when computed; 12 chunks of up "
        "to (1000, 100); nothing was computed"
    )
    assert "DataFrames defined when this session started: ddf (Dask, lazy)." in prompt

    # Positive control: the counter sees a computation when one happens.
    with Computations() as seen:
        assert float(ddf["w"].sum().compute()) == 999_000.0
    assert seen.started == 1 and seen.tasks >= 4


def test_dask_array_with_unknown_chunks_says_so():
    array = da.arange(100, chunks=10)
    unknown = array[array > 50]
    with Computations() as seen:
        text = summarize_variable("sel", unknown)
        table = variables_table({"sel": unknown})
    assert seen.started == 0
    assert text.startswith("sel: Dask Array (lazy), shape (?), dtype int64, unknown size; 10 chunks")
    assert "sel\tdask.Array\t? (10 chunks)\tnot computed" in table


def test_polars_lazyframe_summary_collects_nothing():
    calls = []

    def counted(frame):
        calls.append(frame.height)
        return frame

    lazy = (
        pl.LazyFrame({"city": ["a", "b", "c"], "n": [1, 2, 3]}).map_batches(counted).filter(pl.col("n") > 1)
    )
    table = variables_table({"lazy": lazy})
    text = summarize_variable("lazy", lazy)
    prompt = notebook_prompt({"lazy": lazy})
    assert calls == []
    assert "lazy\tpolars.LazyFrame\t?×2 (lazy)\tnot computed" in table
    assert text.startswith(
        "lazy: polars LazyFrame (lazy query), 2 columns; nothing was collected\n"
        "columns (dtype):\n  city: String\n  n: Int64\nquery plan (unoptimized):\n"
    )
    assert "`lazy.select(pl.len()).collect()`" in text
    assert "lazy (polars, lazy)" in prompt
    assert lazy.collect().height == 2 and len(calls) == 1  # positive control (older polars filter first)


def test_polars_eager_frame_and_series():
    rows = 300_000
    frame = pl.DataFrame({"x": np.arange(rows, dtype=np.float64), "s": ["a", None, "c"] * (rows // 3)})
    text = summarize_variable("frame", frame)
    assert text.startswith("frame: polars DataFrame, 300,000 rows × 2 columns, ")
    assert "columns (dtype, nulls):\n  x: Float64, 0 null\n  s: String, 100000 null\n" in text
    assert "describe() of numeric columns (stats from a 100,000-row sample of 300,000 rows):" in text
    assert "first 5 rows:" in text
    table = variables_table({"frame": frame, "col": frame["x"]})
    assert "frame\tpolars.DataFrame\t300000×2\t" in table
    assert "col\tpolars.Series\tlen 300000\t2.3 MB" in table
    series_text = summarize_variable("col", frame["x"])
    assert series_text.startswith("col: polars Series 'x', length 300,000, dtype Float64, 0 null\n")
    assert "describe() (stats from a 100,000-row sample):" in series_text


def test_xarray_dask_backed_dataset_loads_nothing_and_in_memory_dataarray_shows_values():
    lazy = xr.Dataset(
        {"temp": (("time", "x"), da.ones((1000, 50), chunks=(100, 50)) * 20)},
        coords={"time": np.arange(1000), "x": np.arange(50)},
    )
    with Computations() as seen:
        text = summarize_variable("ds", lazy)
        table = variables_table({"ds": lazy})
    assert (seen.started, seen.tasks) == (0, 0)
    assert text.startswith(
        "ds: xarray Dataset, dims time=1000×x=50, 398.8 KB when computed (Dask-backed, lazy; nothing was computed)"
    )
    assert "Not computed: values and statistics." in text
    assert "ds\txarray.Dataset\ttime=1000×x=50\t398.8 KB when computed" in table
    eager = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("a", "b"), name="grid")
    text = summarize_variable("grid", eager)
    assert text.startswith(
        "grid: xarray DataArray, dims a=2×b=3, 48 B\n<xarray.DataArray 'grid' (a: 2, b: 3)>"
    )
    assert "Not computed" not in text


def _spark_jobs(tracker, group: str) -> list[int]:
    """The ids of `group`'s jobs once Spark's status tracker has heard of them (it is fed
    asynchronously, through the listener bus)."""
    deadline = time.monotonic() + 60
    while not tracker.getJobIdsForGroup(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    jobs = list(tracker.getJobIdsForGroup(group))
    assert jobs, f"the status tracker never saw the {group!r} job"
    return jobs


def test_spark_dataframe_summary_runs_no_job():
    """A real local Spark (pyspark from the `data` extra, Java from scripts/setup.sh): neither the
    summary nor the listing starts a Spark job. Spark numbers jobs in the order they are
    submitted, from any thread (a summary runs on a worker thread, outside the test's job group):
    an action just before and one just after bracket them, and no job id lies in between."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("penguin-summaries")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    context = spark.sparkContext
    tracker = context.statusTracker()
    try:
        frame = spark.createDataFrame([(1, "a"), (2, "b")], ["n", "s"])
        context.setJobGroup("before", "the action before")
        assert frame.count() == 2
        before = _spark_jobs(tracker, "before")
        text = summarize_variable("sdf", frame)
        table = variables_table({"sdf": frame})
        context.setJobGroup("after", "the action after")
        assert frame.count() == 2
        after = _spark_jobs(tracker, "after")
        assert min(after) == max(before) + 1, "summarizing the Spark DataFrame ran a Spark job"
        assert text.startswith("sdf: Spark DataFrame (lazy), 2 columns; no Spark job was run\n")
        assert "  n: bigint, nullable" in text
        assert "sdf\tspark.DataFrame\t?×2 (lazy)\tnot computed" in table
        assert "`sdf.count()`" in text
    finally:
        spark.stop()


def test_torch_tensor_summary():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    tensor = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    text = summarize_variable("t", tensor)
    assert text.startswith("t: torch Tensor, shape (3, 4), dtype torch.float32, device cpu, 48 B\n")
    assert "min 0, max 11, mean 5.5" in text
    assert "t\ttorch.Tensor\t3×4\t48 B" in variables_table({"t": tensor})
    big = torch.ones(1000, 600).T  # not contiguous: sampled by index, not flattened
    text = summarize_variable("big", big)
    assert "min 1, max 1, mean 1, std 0, nan 0 (from a 100,000-element sample)" in text
    assert "device meta, 48 B" in summarize_variable("m", torch.empty(3, 4, device="meta"))


@pytest.mark.parametrize("udf", ["map_batches", "map_elements"])
def test_polars_lazyframe_with_an_undeclared_udf_runs_no_user_function(udf, monkeypatch):
    """polars resolves a UDF's output type by calling it on dummy data (no return_dtype): the
    summary and the listing do not resolve such a plan, and say the schema is unknown past it."""
    from penguin_jupyter.seams import polars_udfs

    # decided afresh against this polars (a seam's decision lasts the process; another test of
    # this worker may have decided it against a simulated upgrade — CI saw it off here once)
    monkeypatch.setattr(polars_udfs.UDF_GUARD, "on", None)
    calls = []

    def counted(value):
        calls.append(value)
        return value

    column = getattr(pl.col("n"), udf)(counted).alias("m")
    lazy = pl.LazyFrame({"city": ["a", "b", "c"], "n": [1, 2, 3]}).with_columns(column).filter(pl.col("n") > 1)
    text = summarize_variable("lazy", lazy)
    table = variables_table({"lazy": lazy})
    assert calls == [], "no user function ran"
    assert "unknown past a Python UDF" in text and "`lazy.collect_schema()`" in text
    assert "lazy\tpolars.LazyFrame\t?×? (lazy, UDF)\tnot computed" in table
    declared = pl.LazyFrame({"n": [1, 2]}).with_columns(pl.col("n").map_batches(counted, return_dtype=pl.Int64))
    assert "n: Int64" in summarize_variable("declared", declared) and calls == []
    assert lazy.collect()["m"].to_list() == [2, 3] and calls  # positive control: the query still runs


@pytest.mark.security
def test_a_polars_that_calls_udfs_on_another_thread_turns_the_guard_off_and_resolves_nothing(monkeypatch):
    """An upgrade that moves polars' schema inference to a thread of its own (simulated: the
    resolution runs in a worker thread): the guard's probe sees its UDF run, the seam is off, and
    summaries resolve nothing rather than run the user's function (on 3758335 the guard refused
    only on polars' foreign threads and the summary thread: the UDF ran)."""
    import os

    from penguin_jupyter.seams import polars_udfs

    # polars' own code (its file), as an upgrade would ship it
    source = (
        "def collect_schema(self):\n"
        "    from concurrent.futures import ThreadPoolExecutor\n"
        "    with ThreadPoolExecutor(1) as pool:\n"
        "        return pool.submit(resolve, self).result()\n"
    )
    namespace = {"resolve": pl.LazyFrame.collect_schema}
    exec(compile(source, os.path.join(os.path.dirname(pl.__file__), "lazyframe", "frame.py"), "exec"), namespace)
    monkeypatch.setattr(pl.LazyFrame, "collect_schema", namespace["collect_schema"])
    monkeypatch.setattr(polars_udfs.UDF_GUARD, "on", None)  # decided afresh, restored after
    calls = []

    def counted(value):
        calls.append(value)
        return value

    lazy = pl.LazyFrame({"n": [1, 2, 3]}).with_columns(pl.col("n").map_batches(counted).alias("m"))
    text = summarize_variable("lazy", lazy)
    assert calls == [], "no user function ran"
    assert "columns: not resolved — this polars cannot be kept from running Python UDFs" in text, text
    assert polars_udfs.UDF_GUARD.status_line().startswith("polars.udf_guard: off — polars ran a Python function")
    monkeypatch.setattr(polars_udfs.UDF_GUARD, "reason", "")
