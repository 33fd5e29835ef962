"""Compact, LLM-ready summaries of the user's variables (what `inspect_variables` and the
`{var}` cell expansion show). Never dumps unbounded data: every piece is bounded.

Owns variable listing and per-type summaries (pandas DataFrame/Series, numpy arrays, other
objects). pandas and numpy are used only if the user already imported them.
"""

from __future__ import annotations

import sys
import types
from typing import Any

MAX_REPR = 2000
MAX_COLUMNS = 60
SAMPLE_ROWS = 5
_HIDDEN = {"In", "Out", "exit", "quit", "get_ipython", "open"}


def _is_user_variable(name: str, value: Any) -> bool:
    if name.startswith("_") or name in _HIDDEN:
        return False
    return not (isinstance(value, types.ModuleType | type) or callable(value))


def user_variables(namespace: dict[str, Any]) -> dict[str, Any]:
    """The user's data variables: no modules, classes, callables or IPython internals."""
    return {name: value for name, value in namespace.items() if _is_user_variable(name, value)}


def _pandas():
    return sys.modules.get("pandas")


def _numpy():
    return sys.modules.get("numpy")


def is_dataframe(value: Any) -> bool:
    pd = _pandas()
    return pd is not None and isinstance(value, pd.DataFrame)


def bounded_repr(value: Any, limit: int = MAX_REPR) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not break the tool
        text = f"<{type(value).__name__} object; repr failed: {exc}>"
    if len(text) > limit:
        text = text[:limit] + f"… [{len(text) - limit} more chars]"
    return text


def _size_text(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return "×".join(str(n) for n in shape) if shape else "scalar"
    try:
        return f"len {len(value)}"
    except Exception:
        return ""


def _memory_bytes(value: Any) -> int | None:
    try:
        if is_dataframe(value):
            return int(value.memory_usage(deep=True).sum())
        pd = _pandas()
        if pd is not None and isinstance(value, pd.Series):
            return int(value.memory_usage(deep=True))
        nbytes = getattr(value, "nbytes", None)
        if isinstance(nbytes, int):
            return nbytes
        return sys.getsizeof(value)
    except Exception:
        return None


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def variables_table(namespace: dict[str, Any]) -> str:
    """One line per user variable: name, type, shape/len, memory."""
    rows = []
    for name, value in sorted(user_variables(namespace).items()):
        kind = type(value).__name__
        rows.append(f"{name}\t{kind}\t{_size_text(value)}\t{human_bytes(_memory_bytes(value))}")
    if not rows:
        return "No user variables defined yet."
    return "name\ttype\tshape/len\tmemory\n" + "\n".join(rows)


def _dataframe_summary(name: str, df: Any) -> str:
    pd = _pandas()
    lines = [f"{name}: pandas DataFrame, {df.shape[0]} rows × {df.shape[1]} columns"]
    columns = list(df.columns[:MAX_COLUMNS])
    nulls = df[columns].isna().sum()
    lines.append("columns (dtype, nulls):")
    for col in columns:
        lines.append(f"  {col!s}: {df[col].dtype}, {int(nulls[col])} null")
    if df.shape[1] > MAX_COLUMNS:
        lines.append(f"  … {df.shape[1] - MAX_COLUMNS} more columns")
    numeric = df[columns].select_dtypes(include="number")
    if numeric.shape[1]:
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            lines.append("describe() of numeric columns:")
            lines.append(bounded_repr(numeric.describe().round(4), 3000))
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 40):
        lines.append(f"first {min(SAMPLE_ROWS, len(df))} rows:")
        lines.append(bounded_repr(df.head(SAMPLE_ROWS), 3000))
    return "\n".join(lines)


def _series_summary(name: str, series: Any) -> str:
    lines = [
        f"{name}: pandas Series {series.name!r}, length {len(series)}, dtype {series.dtype}, "
        f"{int(series.isna().sum())} null"
    ]
    try:
        if series.dtype.kind in "iufb":
            lines.append("describe():")
            lines.append(bounded_repr(series.describe().round(4), 1500))
    except Exception:
        pass
    lines.append("first values:")
    lines.append(bounded_repr(series.head(SAMPLE_ROWS), 1500))
    return "\n".join(lines)


def _array_summary(name: str, array: Any) -> str:
    np = _numpy()
    lines = [f"{name}: numpy ndarray, shape {array.shape}, dtype {array.dtype}"]
    if array.size and array.dtype.kind in "iuf":
        with np.errstate(all="ignore"):
            lines.append(
                f"min {np.nanmin(array):.6g}, max {np.nanmax(array):.6g}, "
                f"mean {np.nanmean(array):.6g}, std {np.nanstd(array):.6g}, "
                f"nan {int(np.isnan(array).sum()) if array.dtype.kind == 'f' else 0}"
            )
    lines.append(bounded_repr(array, 800))
    return "\n".join(lines)


def summarize_variable(name: str, value: Any) -> str:
    """A compact summary of one variable, bounded whatever the value's size."""
    pd, np = _pandas(), _numpy()
    try:
        if is_dataframe(value):
            return _dataframe_summary(name, value)
        if pd is not None and isinstance(value, pd.Series):
            return _series_summary(name, value)
        if np is not None and isinstance(value, np.ndarray):
            return _array_summary(name, value)
    except Exception as exc:
        return f"{name}: {type(value).__name__} (summary failed: {exc})\n{bounded_repr(value)}"
    size = _size_text(value)
    header = f"{name}: {type(value).__name__}" + (f", {size}" if size else "")
    return f"{header}\n{bounded_repr(value)}"


def dataframe_names(namespace: dict[str, Any]) -> list[str]:
    return sorted(name for name, value in user_variables(namespace).items() if is_dataframe(value))
