"""Summaries of pandas DataFrames and Series and numpy arrays, in bounded time and memory.

Owns what `inspect_variables` says about these eager in-memory types: shape, dtypes, null counts,
describe() and sample rows, with statistics taken from a fixed-size row sample beyond the row
budget (and saying so), and memory as a cheap shallow figure marked "≥" where the deep one would
walk every Python object. The listing/dispatch is `summaries.py`'s; text helpers are
`summary_text.py`'s. pandas and numpy are used only if the user already imported them.
"""

from __future__ import annotations

from typing import Any

from .summary_text import Budget, bounded_repr, count, human_bytes, loaded, matched_library

MAX_COLUMNS = 60
SAMPLE_ROWS = 5
ROW_BUDGET = 100_000  # statistics over more rows than this come from a sample of this many
CELL_BUDGET = 2_000_000  # ... and of at most this many cells (rows × summarized columns)
_SEED = 0  # a fixed sample: the same variable gives the same summary


def is_pandas_frame(value: object) -> bool:
    pd = loaded("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def is_pandas_series(value: object) -> bool:
    pd = loaded("pandas")
    return pd is not None and isinstance(value, pd.Series)


def is_numpy_array(value: object) -> bool:
    np = loaded("numpy")
    return np is not None and isinstance(value, np.ndarray)


def sample_positions(n: int, wanted: int) -> Any:
    """Sorted row positions of a fixed random sample of `wanted` out of `n` rows (None: all rows)."""
    if n <= wanted:
        return None
    np = matched_library("numpy")  # choice() without replacement uses Floyd's algorithm when wanted << n
    return np.sort(np.random.default_rng(_SEED).choice(n, wanted, replace=False))


def _sample_size(columns: int) -> int:
    return max(1_000, min(ROW_BUDGET, CELL_BUDGET // max(columns, 1)))


def _python_object_dtype(dtype: object) -> bool:
    """Dtypes whose deep memory means visiting every Python object (shallow counts pointers only)."""
    storage = getattr(dtype, "storage", None)  # pandas string dtypes report kind "O" whatever the storage
    if storage is not None:
        return storage == "python"
    return getattr(dtype, "kind", None) == "O"


def pandas_memory(value: Any) -> str:
    """Memory of a DataFrame/Series: exact (deep) up to the row budget, else shallow, "≥" when
    object columns make the shallow figure a lower bound."""
    small = len(value.index) <= ROW_BUDGET
    usage = value.memory_usage(deep=small)
    total = int(usage.sum()) if hasattr(usage, "sum") else int(usage)
    if small:
        return human_bytes(total)
    dtypes = list(value.dtypes) if is_pandas_frame(value) else [value.dtype]
    lower_bound = any(_python_object_dtype(d) for d in [*dtypes, value.index.dtype])
    return ("≥ " if lower_bound else "") + human_bytes(total)


def _sample_note(rows: int, sample: int) -> str:
    return f"stats from a {count(sample)}-row sample (of {count(rows)} rows)"


def dataframe_summary(name: str, df: Any, budget: Budget) -> str:
    pd = matched_library("pandas")
    rows, cols = df.shape
    lines = [f"{name}: pandas DataFrame, {count(rows)} rows × {cols} columns"]
    columns = df.iloc[:, :MAX_COLUMNS] if cols > MAX_COLUMNS else df
    positions = sample_positions(rows, _sample_size(columns.shape[1]))
    sample = columns if positions is None else columns.take(positions)
    if positions is not None:
        lines.append(_sample_note(rows, len(positions)) + "; memory " + pandas_memory(df))
    nulls = sample.isna().sum() if budget.allows("null counts") else None
    lines.append("columns (dtype, nulls):" if positions is None else "columns (dtype, nulls in sample):")
    for index, col in enumerate(columns.columns):
        null_text = f", {int(nulls.iloc[index])} null" if nulls is not None else ""
        lines.append(f"  {col!s}: {columns.dtypes.iloc[index]}{null_text}")
    if cols > MAX_COLUMNS:
        lines.append(f"  … {cols - MAX_COLUMNS} more columns")
    numeric = sample.select_dtypes(include="number")
    if numeric.shape[1] and budget.allows("describe()"):
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            lines.append("describe() of numeric columns" + (" (sample):" if positions is not None else ":"))
            lines.append(bounded_repr(numeric.describe().round(4), 3000))
    if budget.allows("sample rows"):
        with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 40):
            lines.append(f"first {min(SAMPLE_ROWS, rows)} rows:")
            lines.append(bounded_repr(columns.head(SAMPLE_ROWS), 3000))
    return "\n".join(lines)


def series_summary(name: str, series: Any, budget: Budget) -> str:
    rows = len(series.index)
    positions = sample_positions(rows, ROW_BUDGET)
    sample = series if positions is None else series.take(positions)
    head = f"{name}: pandas Series {series.name!r}, length {count(rows)}, dtype {series.dtype}"
    if budget.allows("null count"):
        head += f", {int(sample.isna().sum())} null" + ("" if positions is None else " in sample")
    lines = [head]
    if positions is not None:
        lines.append(_sample_note(rows, len(positions)) + "; memory " + pandas_memory(series))
    try:
        if series.dtype.kind in "iufb" and budget.allows("describe()"):
            lines.append("describe():" if positions is None else "describe() (sample):")
            lines.append(bounded_repr(sample.describe().round(4), 1500))
    except Exception:  # describe() of a user's column may raise anything: the sample is still shown
        pass
    lines.append("first values:")
    lines.append(bounded_repr(series.head(SAMPLE_ROWS), 1500))
    return "\n".join(lines)


def array_summary(name: str, array: Any, budget: Budget) -> str:
    np = matched_library("numpy")
    lines = [f"{name}: numpy ndarray, shape {array.shape}, dtype {array.dtype}, {human_bytes(array.nbytes)}"]
    positions = sample_positions(array.size, ROW_BUDGET)
    if array.size and array.dtype.kind in "iuf" and budget.allows("statistics"):
        values = array if positions is None else array.flat[positions]
        with np.errstate(all="ignore"):
            nan = int(np.isnan(values).sum()) if array.dtype.kind == "f" else 0
            lines.append(
                f"min {np.nanmin(values):.6g}, max {np.nanmax(values):.6g}, "
                f"mean {np.nanmean(values):.6g}, std {np.nanstd(values):.6g}, nan {nan}"
                + ("" if positions is None else f" (from a {count(len(positions))}-element sample)")
            )
    lines.append(bounded_repr(array, 800))  # numpy elides large arrays itself
    return "\n".join(lines)
