"""polars: a summary resolves a LazyFrame's schema without running the user's Python functions
(docs/seams.md, docs/data-at-scale.md "Lazy and distributed objects").

Resolving a LazyFrame's schema (and its plan, which `explain` resolves too) calls a Python UDF
(`map_batches` / `map_elements` without `return_dtype`) on dummy data to infer its output type:
user code run by a summary. `udfs_refused()` refuses it on the one thread that resolves — a trace
function (`sys.settrace`, the interpreter's public per-thread hook, chained to any debugger's or
coverage tool's and removed after) raises `UdfRefused` when a Python function outside polars and
the standard library is called — so the resolution fails and the summary says the schema is
unknown past the UDF. Nothing of polars is replaced.

It relies on polars calling the UDF on the thread that asked (polars 1 and 2 do). The seam
`polars.udf_guard` (protection) checks exactly that on the user's machine, once, the first time a
summary needs it: a probe LazyFrame with a probe UDF is resolved under the guard, and the probe
must not have run. Off: LazyFrame summaries do not resolve the schema or the plan at all.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import threading
import warnings
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from . import NotInUse, declare


class UdfRefused(Exception):
    """Raised instead of calling a UDF while a summary resolves a plan."""


class Refusals:
    """How many calls one `udfs_refused` scope refused."""

    def __init__(self) -> None:
        self.count = 0


def _library_code(pl: Any) -> Callable[[str], bool]:
    """Whether a code object's file is polars' own or the standard library's (site-packages aside)."""
    paths = sysconfig.get_paths()
    stdlib = {os.path.abspath(p) + os.sep for p in (paths.get("stdlib"), os.path.dirname(os.__file__)) if p}
    packages = {os.path.abspath(p) + os.sep for p in (paths.get("purelib"), paths.get("platlib")) if p}
    polars_dir = os.path.dirname(os.path.abspath(pl.__file__)) + os.sep
    stdlib_roots, package_roots = tuple(stdlib), tuple(packages)

    def allowed(filename: str) -> bool:
        if filename.startswith("<frozen ") or filename == __file__:  # (this module's own scopes end)
            return True
        path = os.path.abspath(filename)
        return path.startswith(polars_dir) or (path.startswith(stdlib_roots) and not path.startswith(package_roots))

    return allowed


@contextlib.contextmanager
def _refusing(pl: Any) -> Iterator[Refusals]:
    refusals = Refusals()
    allowed = _library_code(pl)
    prior = sys.gettrace()
    thread = threading.current_thread()

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "call" and threading.current_thread() is thread and not allowed(frame.f_code.co_filename):
            refusals.count += 1  # polars reports its own error; this says why it failed
            raise UdfRefused("penguin: a summary does not run user functions")
        return prior(frame, event, arg) if prior is not None else None  # type: ignore[arg-type]

    sys.settrace(trace)
    try:
        yield refusals
    finally:
        sys.settrace(prior)


def _check() -> str | None:
    pl = sys.modules.get("polars")
    if pl is None:
        raise NotInUse("polars not imported")
    ran: list[bool] = []
    # a function as a notebook cell defines one (its code is not polars' nor the standard library's)
    probe = eval(compile("lambda series: (ran.append(True), series)[1]", "<penguin-probe>", "eval"), {"ran": ran})
    frame = pl.LazyFrame({"a": [1]}).with_columns(b=pl.col("a").map_batches(probe))
    with warnings.catch_warnings(), _refusing(pl):
        warnings.simplefilter("ignore")
        try:
            frame.collect_schema()
        except Exception:  # the probe's own failure is expected under the guard; whether it ran is the answer
            pass
    return "polars ran a Python function while resolving a schema under the guard" if ran else None


UDF_GUARD = declare(
    "polars.udf_guard",
    what="polars resolves a LazyFrame's schema on the calling thread: a Python UDF it would call "
    "there is refused by a trace function on that thread",
    kind="protection",
    when_off="LazyFrame summaries do not resolve the schema or the plan",
    check=_check,
)


@contextlib.contextmanager
def udfs_refused() -> Iterator[Refusals | None]:
    """Refuse user functions on this thread while polars resolves a plan; yields None (refuse to
    resolve at all) when the guard is off."""
    pl = sys.modules.get("polars")
    if pl is None or not UDF_GUARD.enabled():
        yield None
        return
    with _refusing(pl) as refusals:
        yield refusals
