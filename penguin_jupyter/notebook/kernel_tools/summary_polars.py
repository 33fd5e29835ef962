"""Summaries of polars DataFrames, Series and LazyFrames.

Owns what `inspect_variables` says about polars objects. Eager frames: shape, schema, null counts
(polars keeps them per column, no scan), describe() over a fixed-size sample beyond the row budget,
first rows. LazyFrames: the schema and the query plan only; nothing is collected, and the summary
says how to get rows and statistics. polars is used only if the user already imported it.

Resolving a LazyFrame's schema (and its plan, which `explain` resolves too) runs a Python UDF
(`map_batches` / `map_elements` without `return_dtype`) on dummy data to infer its output type:
user code run by a summary. While a summary resolves, `seams.polars_udfs.udfs_refused` refuses
such a call on the summary's thread, the resolution fails, and the summary says the schema is
unknown past the UDF (docs/data-at-scale.md "Lazy and distributed objects"). When that guard is
off (its check failed on this polars), nothing is resolved and the summary says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...seams.polars_udfs import UDF_GUARD, udfs_refused
from .summary_pandas import MAX_COLUMNS, ROW_BUDGET, SAMPLE_ROWS, sample_positions
from .summary_text import Budget, Family, bounded_repr, count, human_bytes, loaded, matched_library


def _is(value: object, attribute: str) -> bool:
    pl = loaded("polars")
    return pl is not None and isinstance(value, getattr(pl, attribute))


def _schema_lines(schema: Mapping[str, object], nulls: dict[str, int] | None = None) -> list[str]:
    lines = []
    for index, (column, dtype) in enumerate(schema.items()):
        if index == MAX_COLUMNS:
            lines.append(f"  … {len(schema) - MAX_COLUMNS} more columns")
            break
        null_text = f", {nulls[column]} null" if nulls is not None else ""
        lines.append(f"  {column}: {dtype}{null_text}")
    return lines


def _frame_listing(df: Any) -> tuple[str, str, str]:
    return "polars.DataFrame", f"{df.height}×{df.width}", human_bytes(int(df.estimated_size()))


def _frame_summary(name: str, df: Any, budget: Budget) -> str:
    pl = matched_library("polars")
    rows = df.height
    lines = [
        f"{name}: polars DataFrame, {count(rows)} rows × {df.width} columns, "
        f"{human_bytes(int(df.estimated_size()))}"
    ]
    columns = df.select(df.columns[:MAX_COLUMNS])
    nulls = dict(zip(columns.columns, columns.null_count().row(0), strict=True))
    lines.append("columns (dtype, nulls):")
    lines.extend(_schema_lines(df.schema, nulls))
    positions = sample_positions(rows, ROW_BUDGET)
    sample = columns if positions is None else columns[positions.tolist()]
    numeric = sample.select(pl.selectors.numeric())
    if numeric.width and budget.allows("describe()"):
        label = "describe() of numeric columns"
        if positions is not None:
            label += f" (stats from a {count(len(positions))}-row sample of {count(rows)} rows)"
        with pl.Config(tbl_cols=20, tbl_rows=12, tbl_width_chars=200):
            lines.append(label + ":")
            lines.append(bounded_repr(numeric.describe(), 3000))
    if budget.allows("sample rows"):
        with pl.Config(tbl_cols=20, tbl_width_chars=200, fmt_str_lengths=40):
            lines.append(f"first {min(SAMPLE_ROWS, rows)} rows:")
            lines.append(bounded_repr(columns.head(SAMPLE_ROWS), 3000))
    return "\n".join(lines)


def _series_listing(series: Any) -> tuple[str, str, str]:
    return "polars.Series", f"len {series.len()}", human_bytes(int(series.estimated_size()))


def _series_summary(name: str, series: Any, budget: Budget) -> str:
    rows = series.len()
    lines = [
        f"{name}: polars Series {series.name!r}, length {count(rows)}, dtype {series.dtype}, "
        f"{series.null_count()} null"
    ]
    positions = sample_positions(rows, ROW_BUDGET)
    if series.dtype.is_numeric() and budget.allows("describe()"):
        sample = series if positions is None else series.gather(positions.tolist())
        note = "" if positions is None else f" (stats from a {count(len(positions))}-row sample)"
        lines.append(f"describe(){note}:")
        lines.append(bounded_repr(sample.describe(), 1500))
    lines.append("first values:")
    lines.append(bounded_repr(series.head(SAMPLE_ROWS), 1500))
    return "\n".join(lines)


UDF_NOTE = "a Python UDF (map_batches / map_elements without return_dtype)"


def plan_schema(lf: Any) -> Mapping[str, object] | None:
    """The LazyFrame's schema from its plan, or None when resolving it would run a Python UDF (or
    the guard that tells is off)."""
    with udfs_refused() as refusals:
        if refusals is None:
            return None
        try:
            return lf.collect_schema()
        except Exception:
            if refusals.count:
                return None
            raise


def _lazy_listing(lf: Any) -> tuple[str, str, str]:
    schema = plan_schema(lf)
    width = "?" if schema is None else str(len(schema))
    return "polars.LazyFrame", f"?×{width} (lazy{', UDF' if schema is None else ''})", "not computed"


def _lazy_summary(name: str, lf: Any, budget: Budget) -> str:
    schema = plan_schema(lf)  # resolved from the plan; no data is read or computed, no UDF run
    if schema is None and UDF_GUARD.on is False:
        return "\n".join(
            [
                f"{name}: polars LazyFrame (lazy query); nothing was collected",
                "columns: not resolved — this polars cannot be kept from running Python UDFs while "
                f"it resolves a schema ({UDF_GUARD.reason}; `%penguin status`).",
                f"To see them (this may run UDFs on dummy data): `{name}.collect_schema()`; to get rows "
                f"(this runs the query): `{name}.head(5).collect()`.",
            ]
        )
    if schema is None:
        lines = [
            f"{name}: polars LazyFrame (lazy query); nothing was collected",
            f"columns: unknown past {UDF_NOTE}: polars infers its output type by calling it on dummy "
            "data, so the summary did not resolve the schema or the plan.",
            f"To see them (this runs that function on dummy data): `{name}.collect_schema()`, "
            f"`{name}.explain()`; to get rows (this runs the query): `{name}.head(5).collect()`. "
            "Declaring `return_dtype=` on the UDF makes the schema known without running it.",
        ]
        return "\n".join(lines)
    lines = [f"{name}: polars LazyFrame (lazy query), {len(schema)} columns; nothing was collected"]
    lines.append("columns (dtype):")
    lines.extend(_schema_lines(schema))
    if budget.allows("query plan"):
        lines.append("query plan (unoptimized):")
        with udfs_refused():  # (only polars' own code runs inside: the guard refuses any other)
            plan = lf.explain(optimized=False)
        lines.append(bounded_repr_text(plan, 1500))
    lines.append(
        f"Not computed: row count, null counts, statistics and rows. To get them (this runs the query): "
        f"`{name}.select(pl.len()).collect()`, `{name}.head(5).collect()`, `{name}.describe()`."
    )
    return "\n".join(lines)


def bounded_repr_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [cut at {limit} chars]"


FAMILIES = [
    Family(lambda v: _is(v, "DataFrame"), _frame_listing, _frame_summary, True, "polars"),
    Family(lambda v: _is(v, "LazyFrame"), _lazy_listing, _lazy_summary, True, "polars, lazy"),
    Family(lambda v: _is(v, "Series"), _series_listing, _series_summary),
]
