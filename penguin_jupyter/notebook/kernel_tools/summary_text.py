"""Bounded text for variable summaries: reprs that never materialize a whole container, byte and
count formatting, the per-summary time budget, and the `Family` record each library module fills.

Owns the generic pieces every library family's summary uses; which library an object belongs to
and what to say about it is left to `summaries.py` and the `summary_<family>.py` modules.
See docs/data-at-scale.md for the budgets.
"""

from __future__ import annotations

import collections
import itertools
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType

MAX_REPR = 2000
# What one summary may spend before its optional parts (statistics, sample rows) are cut.
TIME_BUDGET_S = 0.25
_CONTAINERS = (list, tuple, set, frozenset, dict, collections.deque)
# Builtin sized types whose len() is O(1) and never computes anything.
_SIZED = (*_CONTAINERS, str, bytes, bytearray, range, collections.OrderedDict, collections.Counter)


class Budget:
    """A wall-clock allowance for one summary; parts after it is spent are cut with a note."""

    def __init__(self, seconds: float = TIME_BUDGET_S) -> None:
        self.seconds = seconds
        self._deadline = time.perf_counter() + seconds
        self.cut: list[str] = []

    def spent(self) -> bool:
        return time.perf_counter() >= self._deadline

    def allows(self, part: str) -> bool:
        """True while there is time left; otherwise records `part` as cut."""
        if self.spent():
            self.cut.append(part)
            return False
        return True

    def note(self) -> str | None:
        if not self.cut:
            return None
        return f"[summary cut at its {self.seconds:g} s budget: skipped {', '.join(self.cut)}]"


def count(n: int) -> str:
    """1234567 -> '1,234,567' (small numbers unchanged)."""
    return f"{n:,}"


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def builtin_len(value: object) -> int | None:
    """len() of builtin sized values only: never calls len() on a user or library object, which
    for a lazy or distributed collection could start a whole computation."""
    if isinstance(value, _SIZED):
        return len(value)
    return None


class _Writer:
    """Accumulates repr pieces until `limit` characters, then refuses more."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.full = False

    def add(self, text: str) -> bool:
        if self.full:
            return False
        room = self.limit - self.size
        if len(text) > room:
            self.parts.append(text[:room])
            self.size = self.limit
            self.full = True
            return False
        self.parts.append(text)
        self.size += len(text)
        return True


def _container_repr(value: object, out: _Writer, depth: int) -> None:
    items: Iterable[object]
    if isinstance(value, dict):
        opening, closing = "{", "}"
        items = value.items()
    elif isinstance(value, list | collections.deque):
        opening, closing = "[", "]"
        items = value
    elif isinstance(value, tuple):
        opening, closing = "(", ")"
        items = value
    else:  # set / frozenset (the other `_CONTAINERS`)
        opening, closing = ("{", "}") if value else (f"{type(value).__name__}(", ")")
        items = value if isinstance(value, Iterable) else ()
    if depth > 4:
        out.add(opening + "…" + closing)
        return
    out.add(opening)
    for index, item in enumerate(itertools.islice(items, out.limit)):
        if out.full:
            return
        if index:
            out.add(", ")
        if isinstance(value, dict) and isinstance(item, tuple):
            _value_repr(item[0], out, depth + 1)
            out.add(": ")
            _value_repr(item[1], out, depth + 1)
        else:
            _value_repr(item, out, depth + 1)
    if isinstance(value, tuple) and len(value) == 1:
        out.add(",")
    out.add(closing)


def _value_repr(value: object, out: _Writer, depth: int) -> None:
    if type(value) in _CONTAINERS or isinstance(value, _CONTAINERS):
        _container_repr(value, out, depth)
        return
    if isinstance(value, str | bytes | bytearray) and len(value) > out.limit:
        value = value[: out.limit]  # repr of the head only; the writer cuts it anyway
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not break the tool
        text = f"<{type(value).__name__} object; repr failed: {exc}>"
    out.add(text)


def bounded_repr(value: object, limit: int = MAX_REPR) -> str:
    """repr(value) cut at `limit` characters. Builtin containers and strings are walked only as far
    as the limit needs (a 20M-element list costs the same as a short one)."""
    out = _Writer(limit)
    _value_repr(value, out, 0)
    text = "".join(out.parts)
    if out.full:
        size = builtin_len(value)
        more = f" of {count(size)} items" if size is not None and not isinstance(value, str) else ""
        text += f"… [cut at {limit} chars{more}]"
    return text


def loaded(name: str) -> ModuleType | None:
    """The library `name` if the user's code already imported it (a family never imports one)."""
    return sys.modules.get(name)


def matched_library(name: str) -> ModuleType:
    """The library of a value its family matched (so the user's code imported it)."""
    return sys.modules[name]


@dataclass(frozen=True)
class Family:
    """How one library family is listed and summarized (see `summaries.FAMILIES`)."""

    match: Callable[[object], bool]  # must not import anything: test sys.modules first
    listing: Callable[[object], tuple[str, str, str]]  # (type, shape/len, memory) for variables_table
    summary: Callable[[str, object, Budget], str]
    frame: bool = False  # a DataFrame-like object named in the notebook's system prompt
    frame_label: str = ""  # shown after its name in that list ("" for pandas)
