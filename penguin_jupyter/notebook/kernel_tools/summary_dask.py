"""Summaries of Dask DataFrames, Series and Arrays, computing nothing.

Owns what `inspect_variables` says about Dask collections: columns and dtypes (from the
collection's metadata), partitions and divisions, or shape, chunks and dtype; never `len()`,
`head()` or `compute()`, which would run the graph (on a cluster, perhaps for minutes). The
summary says what it did not compute and how to get it. Dask is used only if the user already
imported it.
"""

from __future__ import annotations

import math
from typing import Any

from .summary_pandas import MAX_COLUMNS
from .summary_text import Budget, Family, bounded_repr, count, human_bytes, loaded


def _is_frame(value: object) -> bool:
    dd = loaded("dask.dataframe")
    return dd is not None and isinstance(value, dd.DataFrame)


def _is_series(value: object) -> bool:
    dd = loaded("dask.dataframe")
    return dd is not None and isinstance(value, dd.Series)


def _is_array(value: object) -> bool:
    da = loaded("dask.array")
    return da is not None and isinstance(value, da.Array)


def _divisions_text(collection: Any) -> str:
    if not collection.known_divisions:
        return "divisions unknown"
    divisions = collection.divisions
    return f"index divisions from {bounded_repr(divisions[0], 60)} to {bounded_repr(divisions[-1], 60)}"


def _frame_listing(ddf: Any) -> tuple[str, str, str]:
    return "dask.DataFrame", f"?×{len(ddf.columns)} ({ddf.npartitions} partitions)", "not computed"


def _frame_summary(name: str, ddf: Any, budget: Budget) -> str:
    columns = list(ddf.columns)
    lines = [
        f"{name}: Dask DataFrame (lazy), {len(columns)} columns in {ddf.npartitions} partitions, "
        f"{_divisions_text(ddf)}; nothing was computed"
    ]
    lines.append("columns (dtype):")
    dtypes = ddf.dtypes  # from the collection's metadata
    for column in columns[:MAX_COLUMNS]:
        lines.append(f"  {column!s}: {dtypes[column]}")
    if len(columns) > MAX_COLUMNS:
        lines.append(f"  … {len(columns) - MAX_COLUMNS} more columns")
    lines.append(
        "Not computed: row count, null counts, statistics and rows. To get them (this runs the graph, "
        f"on the cluster if a dask.distributed Client is active): `len({name})`, "
        f"`{name}.head()` (first partition only), `{name}.describe().compute()`, "
        f"`{name}.isna().sum().compute()`."
    )
    return "\n".join(lines)


def _series_listing(series: Any) -> tuple[str, str, str]:
    return "dask.Series", f"? ({series.npartitions} partitions)", "not computed"


def _series_summary(name: str, series: Any, budget: Budget) -> str:
    return (
        f"{name}: Dask Series {series.name!r} (lazy), dtype {series.dtype}, {series.npartitions} "
        f"partitions, {_divisions_text(series)}; nothing was computed\n"
        f"Not computed: length, statistics and values. To get them (this runs the graph): "
        f"`len({name})`, `{name}.head()`, `{name}.describe().compute()`."
    )


def _array_bytes(array: Any) -> int | None:
    if any(isinstance(n, float) and math.isnan(n) for n in array.shape):
        return None
    return int(array.nbytes)


def _shape_text(shape: tuple[object, ...]) -> str:
    return "×".join("?" if isinstance(n, float) and math.isnan(n) else str(n) for n in shape)


def _array_listing(array: Any) -> tuple[str, str, str]:
    size = _array_bytes(array)
    memory = "not computed" if size is None else f"{human_bytes(size)} when computed"
    return "dask.Array", f"{_shape_text(array.shape)} ({array.npartitions} chunks)", memory


def _array_summary(name: str, array: Any, budget: Budget) -> str:
    size = _array_bytes(array)
    size_text = "unknown size" if size is None else f"{human_bytes(size)} when computed"
    return (
        f"{name}: Dask Array (lazy), shape ({_shape_text(array.shape)}), dtype {array.dtype}, "
        f"{size_text}; {count(array.npartitions)} chunks of up to {array.chunksize}; nothing was computed\n"
        f"Not computed: values and statistics. To get them (this runs the graph): "
        f"`{name}[:5].compute()`, `{name}.mean().compute()`, `{name}.min().compute()`."
    )


FAMILIES = [
    Family(_is_frame, _frame_listing, _frame_summary, True, "Dask, lazy"),
    Family(_is_series, _series_listing, _series_summary),
    Family(_is_array, _array_listing, _array_summary),
]
