"""While a Task runs, the objects that existed when it started stay out of garbage collections
(docs/model-requests.md "Garbage collection during a Task").

Owns `TaskHeap` and the process's one instance, `TASK_HEAP`, which `engine/context_engine.py` enters for
every run and every manual compaction. Python's cyclic garbage collector now and then runs a full
collection, which visits every tracked object of the process — in a kernel the libraries' own
objects (≈ 300,000), the user's, and a long session's history — in one pause of 100–400 ms that
holds the GIL and so stalls the event loop, wherever it lands: often in the middle of a model
request, the step that allocates most. `gc.freeze()` moves every tracked object into the
collector's permanent generation, which collections skip; `gc.unfreeze()` puts them back into the
oldest generation.

* A Task freezes the heap when it starts and unfreezes it when it ends; only the outermost of
  nested or concurrent Tasks (subagents, a second session) does either, under a lock.
* Only when a full collection is expensive: the heap is frozen when the last full collection
  observed (timed through `gc.callbacks`, from the first Task on) took at least `freeze_at_pause_s` (20 ms). A process
  whose full collections are cheap is left exactly as it was. Nor is anything done when the
  collector is disabled or when someone else has frozen objects (their freeze is theirs).
* Nothing is lost: objects that become garbage during the Task are freed by reference counting as
  always; only cyclic garbage among the frozen objects waits. When the collector ran a full
  collection while the heap was frozen (one the frozen objects missed), one full collection runs
  right after the unfreeze, when the Task has ended; otherwise the objects are back in the oldest
  generation for the next full collection, as if never frozen.

A seam (docs/seams.md), though every call is public: the collector is the process's, so
freezing it cannot be scoped to a Task's objects — it is the point. So it is a fast path like the
internals: checked before the first Task (`gc.freeze`, `gc.unfreeze`, `gc.get_freeze_count`,
`gc.callbacks`), off with `PENGUIN_SDK_INTERNALS=off`, and the timing callback is added to
`gc.callbacks` by the first Task, never at import.

Leaves to others: what a Task is (`engine/context_engine.py`); what allocates during one (the model
request's own costs are `llm/`'s, docs/model-requests.md "Long sessions").
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import declare

log = logging.getLogger(__name__)

__all__ = ["FREEZE_AT_PAUSE_S", "TASK_HEAP", "TaskHeap"]

# A full collection this long would take a large part of the 50 ms a request may stall the loop.
FREEZE_AT_PAUSE_S = 0.020


def _check_gc() -> str | None:
    for name in ("freeze", "unfreeze", "get_freeze_count", "isenabled"):
        if not callable(getattr(gc, name, None)):
            return f"gc.{name} is not there"
    return None if isinstance(getattr(gc, "callbacks", None), list) else "gc.callbacks is not a list"


HEAP_FREEZE = declare(
    "gc.freeze",
    what="the process's garbage collector: gc.freeze/unfreeze while a Task runs, a gc.callbacks timer",
    kind="fast path",
    when_off="full collections may pause a Task's model requests",
    check=_check_gc,
)


class TaskHeap:
    """The freeze state of this process's heap across the Tasks running in it."""

    def __init__(self, freeze_at_pause_s: float = FREEZE_AT_PAUSE_S) -> None:
        self.freeze_at_pause_s = freeze_at_pause_s
        self.last_full_pause_s: float | None = None  # the last full collection while not frozen
        self.owed_collections = 0  # full collections run after a Task (tests, benchmarks)
        self._lock = threading.Lock()
        self._depth = 0
        self._frozen = False
        self._missed = False  # a full collection ran while the heap was frozen
        self._full_started: float | None = None
        self._callback = self._observe  # one bound method, so it can be found in gc.callbacks

    @property
    def frozen(self) -> bool:
        return self._frozen

    def watch(self) -> None:
        """Time full collections (again, if someone emptied `gc.callbacks`)."""
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def _observe(self, phase: str, info: dict[str, Any]) -> None:
        # runs inside the collector, in whichever thread triggered it: no lock, no allocation-heavy work
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._full_started = time.perf_counter()
            return
        if self._frozen:
            self._missed = True
        elif self._full_started is not None:
            self.last_full_pause_s = time.perf_counter() - self._full_started
        self._full_started = None

    @contextmanager
    def task(self) -> Iterator[None]:
        """The scope of one Task (see the module docstring)."""
        self._enter()
        try:
            yield
        finally:
            self._exit()

    def _enter(self) -> None:
        with self._lock:
            self._depth += 1
            if self._depth > 1 or not HEAP_FREEZE.enabled():
                return
            self.watch()
            pause = self.last_full_pause_s
            if pause is None or pause < self.freeze_at_pause_s or not gc.isenabled():
                return
            if gc.get_freeze_count():  # frozen by someone else: theirs to undo
                return
            gc.collect(1)  # the young generations first: only what survived them is frozen
            gc.freeze()
            self._frozen, self._missed = True, False
            log.debug("heap frozen for the Task (last full collection %.0f ms)", 1000 * pause)

    def _exit(self) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth > 0 or not self._frozen:
                return
            gc.unfreeze()
            self._frozen = False
            # a collection we cannot have seen (callbacks emptied) counts as missed
            missed = self._missed or self._callback not in gc.callbacks
            self._missed = False
            if missed:
                self.owed_collections += 1
                gc.collect()
            log.debug("heap unfrozen after the Task%s", " and collected" if missed else "")


TASK_HEAP = TaskHeap()
