"""Compact, LLM-ready summaries of the user's variables (what `inspect_variables` and the
`{var}` cell expansion show), bounded in time and memory whatever the variable's size.

Owns the variable listing (`variables_table`), the dispatch of one variable to its library
family's summary (`summary_pandas`, `summary_polars`, `summary_dask`, `summary_spark`,
`summary_xarray`, `summary_torch`; generic objects here), the per-summary time budget and the
hard guard that keeps a slow summary from blocking the cell. Libraries are used only if the user
already imported them (they are looked up in sys.modules, never imported). Budgets and what each
family computes are described in docs/data-at-scale.md.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Mapping
from typing import Any

from . import summary_dask, summary_polars, summary_spark, summary_torch, summary_xarray
from .summary_pandas import (
    array_summary,
    dataframe_summary,
    is_numpy_array,
    is_pandas_frame,
    is_pandas_series,
    pandas_memory,
    series_summary,
)
from .summary_text import MAX_REPR, Budget, Family, bounded_repr, builtin_len, human_bytes

__all__ = [
    "MAX_REPR",
    "bounded_repr",
    "dataframe_names",
    "frame_labels",
    "human_bytes",
    "is_dataframe",
    "summarize_variable",
    "user_variables",
    "variables_table",
]

MAX_LISTED = 500  # variables_table rows
# A summary still running after this long is abandoned (its thread finishes on its own) and the
# tool answers with a note instead: a pathological __repr__ must not hold the cell.
HARD_LIMIT_S = 3.0
_HIDDEN = {"In", "Out", "exit", "quit", "get_ipython", "open"}


def _is_user_variable(name: str, value: object) -> bool:
    if name.startswith("_") or name in _HIDDEN:
        return False
    return not (isinstance(value, types.ModuleType | type) or callable(value))


def user_variables(namespace: Mapping[str, object]) -> dict[str, object]:
    """The user's data variables: no modules, classes, callables or IPython internals."""
    return {name: value for name, value in namespace.items() if _is_user_variable(name, value)}


def is_dataframe(value: object) -> bool:
    """A pandas DataFrame (the other libraries' frames are named by `frame_labels`)."""
    return is_pandas_frame(value)


def _pandas_listing(value: Any) -> tuple[str, str, str]:
    shape = "×".join(str(n) for n in value.shape)
    return type(value).__name__, shape, pandas_memory(value)


def _array_listing(value: Any) -> tuple[str, str, str]:
    shape = "×".join(str(n) for n in value.shape) if value.shape else "scalar"
    return "ndarray", shape, human_bytes(int(value.nbytes))


FAMILIES: list[Family] = [
    Family(is_pandas_frame, _pandas_listing, dataframe_summary, True, ""),
    Family(is_pandas_series, _pandas_listing, series_summary),
    Family(is_numpy_array, _array_listing, array_summary),
    *summary_polars.FAMILIES,
    *summary_dask.FAMILIES,
    *summary_spark.FAMILIES,
    *summary_xarray.FAMILIES,
    *summary_torch.FAMILIES,
]


def _family(value: object) -> Family | None:
    for family in FAMILIES:
        try:
            if family.match(value):
                return family
        except Exception:  # a family's match on a user object may raise anything: not that family
            continue
    return None


def _generic_size(value: object) -> str:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return "×".join(str(n) for n in shape) if shape else "scalar"
    size = builtin_len(value)
    return f"len {size}" if size is not None else ""


def _generic_memory(value: object) -> str:
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):
        return human_bytes(nbytes)
    shallow = human_bytes(sys.getsizeof(value))
    # getsizeof counts a container's own slots, not the objects it holds
    return (
        f"≥ {shallow}" if builtin_len(value) and not isinstance(value, str | bytes | bytearray) else shallow
    )


def _listing_row(name: str, value: object) -> str:
    family = _family(value)
    try:
        if family is not None:
            kind, size, memory = family.listing(value)
        else:
            kind, size, memory = type(value).__name__, _generic_size(value), _generic_memory(value)
    except Exception as exc:  # a user object's library may raise anything: the listing says so
        kind, size, memory = type(value).__name__, f"(listing failed: {exc})"[:120], "?"
    return f"{name}\t{kind}\t{size}\t{memory}"


def variables_table(namespace: Mapping[str, object]) -> str:
    """One line per user variable: name, type, shape/len, memory; O(1) per variable (no deep
    memory walk, no len() of lazy collections)."""
    variables = sorted(user_variables(namespace).items())
    if not variables:
        return "No user variables defined yet."
    rows = [_listing_row(name, value) for name, value in variables[:MAX_LISTED]]
    if len(variables) > MAX_LISTED:
        rows.append(f"… {len(variables) - MAX_LISTED} more variables (ask for them by name)")
    return "name\ttype\tshape/len\tmemory\n" + "\n".join(rows)


def _summary_unguarded(name: str, value: object) -> str:
    budget = Budget()
    family = _family(value)
    try:
        if family is not None:
            text = family.summary(name, value, budget)
            note = budget.note()
            return text + ("\n" + note if note else "")
    except Exception as exc:  # a user object's library may raise anything: the summary says so
        reason = " ".join(str(exc).split())[:300]  # one line, whatever the library raised
        return f"{name}: {type(value).__name__} (summary failed: {reason})\n{bounded_repr(value)}"
    size = _generic_size(value)
    header = f"{name}: {type(value).__name__}" + (f", {size}" if size else "")
    return f"{header}\n{bounded_repr(value)}"


def summarize_variable(name: str, value: object, hard_limit_s: float = HARD_LIMIT_S) -> str:
    """A compact summary of one variable within a fixed budget, whatever the value's size: optional
    parts are cut once `summary_text.TIME_BUDGET_S` is spent, and a summary still running after
    `hard_limit_s` is left to finish in the background while this returns a note."""
    result: list[str] = []
    worker = threading.Thread(
        target=lambda: result.append(_summary_unguarded(name, value)),
        name="penguin-summary",
        daemon=True,
    )
    worker.start()
    worker.join(hard_limit_s)
    if result:
        return result[0]
    return (
        f"{name}: {type(value).__name__} (summary cut: still running after {hard_limit_s:g} s, e.g. "
        f"a slow __repr__; inspect it with run_python instead)"
    )


def frame_labels(namespace: Mapping[str, object]) -> list[str]:
    """The user's DataFrame-like variables for the system prompt: pandas ones by name, others
    with their library ("events (Dask, lazy)"). Nothing is computed. Only names that are Python
    identifiers (code can bind any string in the namespace; the prompt gets no line breaks or
    brackets from one)."""
    labels = []
    for name, value in sorted(user_variables(namespace).items()):
        if not name.isidentifier():
            continue
        family = _family(value)
        if family is not None and family.frame:
            labels.append(f"{name} ({family.frame_label})" if family.frame_label else name)
    return labels


def dataframe_names(namespace: Mapping[str, object]) -> list[str]:
    """Names of the user's pandas DataFrames."""
    return sorted(name for name, value in user_variables(namespace).items() if is_pandas_frame(value))
