"""Summaries of xarray DataArrays and Datasets, loading nothing.

Owns what `inspect_variables` says about xarray objects: dims, shape, dtype, coordinates and
data variables through xarray's own repr (which never loads lazily-backed or Dask-backed data),
cut to size, and for Dask-backed objects what was not computed. xarray is used only if the user
already imported it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .summary_text import Budget, Family, bounded_repr, human_bytes, loaded


def _is(value: object, attribute: str) -> bool:
    xr = loaded("xarray")
    return xr is not None and isinstance(value, getattr(xr, attribute))


def _chunked(value: Any) -> bool:
    try:
        return bool(value.chunksizes)
    except Exception:  # inconsistent chunks across variables still means Dask-backed
        return True


def _dims_text(sizes: Mapping[object, object]) -> str:
    return "×".join(f"{dim}={size}" for dim, size in sizes.items()) or "scalar"


def _listing(value: Any) -> tuple[str, str, str]:
    lazy = _chunked(value)
    memory = human_bytes(int(value.nbytes)) + (" when computed" if lazy else "")
    return f"xarray.{type(value).__name__}", _dims_text(value.sizes), memory


def _summary(name: str, value: Any, budget: Budget) -> str:
    lazy = _chunked(value)
    kind = "DataArray" if _is(value, "DataArray") else "Dataset"
    header = f"{name}: xarray {kind}, dims {_dims_text(value.sizes)}, {human_bytes(int(value.nbytes))}"
    lines = [header + (" when computed (Dask-backed, lazy; nothing was computed)" if lazy else "")]
    lines.append(bounded_repr(value, 3000))
    if lazy:
        lines.append(
            f"Not computed: values and statistics. To get them (this runs the graph): "
            f"`{name}.isel({{...: slice(0, 5)}}).compute()`, `{name}.mean().compute()`."
        )
    return "\n".join(lines)


FAMILIES = [
    Family(lambda v: _is(v, "DataArray"), _listing, _summary),
    Family(lambda v: _is(v, "Dataset"), _listing, _summary),
]
