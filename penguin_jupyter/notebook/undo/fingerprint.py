"""Bounded-cost fingerprints of mutable namespace objects, and the copies undo may restore from.

Owns two questions about an object a Task's code could change in place: "did it change?" — a
fingerprint whose cost does not grow with the data (pandas / numpy / polars: type, shape, dtypes,
columns and a fixed sample of `SAMPLE_POSITIONS` rows / elements; list, dict, set, bytearray:
length and the identities of a bounded sample of items) — and "can it be put back?" — a copy
taken before the Task when the object is at most `COPY_LIMIT_BYTES` (estimated without walking
it). A change outside the sample of a large object goes unseen; that limit is documented in
docs/undo.md "Changed in place". Libraries are recognised only when already imported, and
read by duck typing (none ships types this package may rely on): only their helpers take `Any`.
"""

from __future__ import annotations

import copy
import hashlib
import sys
from collections.abc import Collection, Sized
from typing import Any

SAMPLE_POSITIONS = 32
MAX_SAMPLED_COLUMNS = 64
MAX_SAMPLED_ITEMS = 256
COPY_LIMIT_BYTES = 1024 * 1024  # per object
COPY_LIMIT_ITEMS = 10_000  # list / dict / set length copied
_ITEM_BYTES = 64  # a container item's estimated size when judging the copy limit


def _positions(length: int, count: int = SAMPLE_POSITIONS) -> list[int]:
    if length <= count:
        return list(range(length))
    step = (length - 1) / (count - 1)
    return sorted({round(i * step) for i in range(count)})


def _digest(*parts: object) -> str:
    return hashlib.blake2b(repr(parts).encode("utf-8", "replace"), digest_size=16).hexdigest()


def _module_type(module: str, name: str) -> type | None:
    loaded = sys.modules.get(module)
    found = getattr(loaded, name, None) if loaded is not None else None
    return found if isinstance(found, type) else None


def _pandas_fingerprint(obj: Any) -> str:
    rows = obj.shape[0]
    positions = _positions(rows)
    if obj.ndim == 2:
        columns = list(obj.columns[:MAX_SAMPLED_COLUMNS])
        sample = obj.iloc[positions, :MAX_SAMPLED_COLUMNS]
        values = [sample.iloc[:, i].tolist() for i in range(sample.shape[1])]
        dtypes = [str(t) for t in obj.dtypes.iloc[:MAX_SAMPLED_COLUMNS]]
        return _digest("pandas", obj.shape, columns, dtypes, obj.index[positions].tolist(), values)
    return _digest("pandas", obj.shape, str(obj.dtype), obj.name, obj.index[positions].tolist(), obj.iloc[positions].tolist())


def _numpy_fingerprint(obj: Any) -> str:
    picked = obj.flat[_positions(obj.size)] if obj.size else None
    if picked is None:
        sample: object = b""
    elif obj.dtype == object:
        sample = [id(item) for item in picked]
    else:
        sample = picked.tobytes()
    return _digest("numpy", obj.shape, obj.dtype.str, sample)


def _polars_fingerprint(obj: Any) -> str:
    positions = _positions(obj.shape[0])
    if len(obj.shape) == 2:
        sample = obj[:, :MAX_SAMPLED_COLUMNS][positions]
        return _digest("polars", obj.shape, str(obj.schema), sample.rows())
    return _digest("polars", obj.shape, str(obj.dtype), obj.name, obj.gather(positions).to_list())


def _container_fingerprint(obj: Collection[object]) -> str:
    if isinstance(obj, list | bytearray):
        positions = _positions(len(obj), MAX_SAMPLED_ITEMS)
        items = [obj[i] for i in positions]
        return _digest(type(obj).__name__, len(obj), items if isinstance(obj, bytearray) else [id(x) for x in items])
    if isinstance(obj, dict):
        head = []
        for i, (key, value) in enumerate(obj.items()):
            if i >= MAX_SAMPLED_ITEMS:
                break
            head.append((id(key), id(value)))
        return _digest("dict", len(obj), head)
    return _digest(type(obj).__name__, len(obj))


def tracked(obj: object) -> bool:
    """Whether `obj` is a kind whose in-place changes undo looks for."""
    if isinstance(obj, list | dict | set | bytearray):
        return True
    return _library_kind(obj) is not None


def _library_kind(obj: object) -> str | None:
    for module, names, kind in (
        ("pandas", ("DataFrame", "Series"), "pandas"),
        ("numpy", ("ndarray",), "numpy"),
        ("polars", ("DataFrame", "Series"), "polars"),
    ):
        for name in names:
            cls = _module_type(module, name)
            if cls is not None and isinstance(obj, cls):
                return kind
    return None


def fingerprint(obj: object) -> str | None:
    """A short digest that changes when `obj` visibly changes (bounded cost); None if untracked or
    the object cannot be sampled."""
    try:
        if isinstance(obj, list | dict | set | bytearray):
            return _container_fingerprint(obj)
        kind = _library_kind(obj)
        if kind == "pandas":
            return _pandas_fingerprint(obj)
        if kind == "numpy":
            return _numpy_fingerprint(obj)
        if kind == "polars":
            return _polars_fingerprint(obj)
    except Exception:  # a user object's library may raise anything: no fingerprint (undo says so)
        return None
    return None


def _estimated_bytes(obj: object) -> int | None:
    """Shallow size estimate without walking the data; None when it cannot be told cheaply."""
    if isinstance(obj, list | dict | set):
        return len(obj) * _ITEM_BYTES if len(obj) <= COPY_LIMIT_ITEMS else None
    if isinstance(obj, bytearray):
        return len(obj)
    return _library_bytes(obj, _library_kind(obj))


def _library_bytes(obj: Any, kind: str | None) -> int | None:
    try:
        if kind == "numpy":
            return int(obj.nbytes) if obj.dtype != object else None
        if kind == "pandas":
            return int(obj.memory_usage(index=True, deep=False).sum()) if obj.ndim == 2 else int(obj.memory_usage(index=True, deep=False))
        if kind == "polars":
            return int(obj.estimated_size())
    except Exception:  # a user object's library may raise anything: size unknown
        return None
    return None


def copy_for_undo(obj: object) -> object | None:
    """A copy `obj` can be restored from, or None when it is above the copy limit (or uncopyable)."""
    size = _estimated_bytes(obj)
    if size is None or size > COPY_LIMIT_BYTES:
        return None
    try:
        if isinstance(obj, list | dict | set | bytearray):
            return copy.copy(obj)  # the items themselves are kept by reference
        return _library_copy(obj, _library_kind(obj))
    except Exception:  # a user object's library may raise anything: no copy (undo says so)
        return None


def _library_copy(obj: Any, kind: str | None) -> object:
    return obj.clone() if kind == "polars" else obj.copy()


def same_content(saved: object, current: object) -> bool:
    """Whether `current` still equals the copy taken before the Task (False when unsure)."""
    try:
        kind = _library_kind(current)
        if kind is not None:
            return _library_same(saved, current, kind)
        if type(saved) is not type(current) or not isinstance(saved, Sized) or not isinstance(current, Sized):
            return False
        if len(saved) != len(current):
            return False
        if isinstance(current, dict) and isinstance(saved, dict):
            return all(k in saved and saved[k] is v for k, v in current.items())
        if isinstance(current, list) and isinstance(saved, list):
            return all(a is b for a, b in zip(saved, current, strict=True))
        return bool(saved == current)
    except Exception:  # a user object's __eq__ may raise anything: not the same
        return False


def _library_same(saved: object, current: Any, kind: str) -> bool:
    if kind == "numpy":
        import numpy

        return isinstance(saved, numpy.ndarray) and bool(numpy.array_equal(saved, current, equal_nan=current.dtype.kind in "fc"))
    return bool(current.equals(saved))


def restore_in_place(saved: object, current: object) -> bool:
    """Put a container's saved contents back into the same object (other references see it);
    False for kinds restored by rebinding the name to the copy instead."""
    if (isinstance(current, list) and isinstance(saved, list)) or (isinstance(current, bytearray) and isinstance(saved, bytearray)):
        current[:] = saved
    elif (isinstance(current, dict) and isinstance(saved, dict)) or (isinstance(current, set) and isinstance(saved, set)):
        current.clear()
        current.update(saved)
    else:
        return False
    return True
