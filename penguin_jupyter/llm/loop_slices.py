"""Work that grows with the whole history runs in short slices, with the event loop running between.

A request after a resume (`set_history` with the saved messages) converts the whole history once:
agenthub's conversion of every message (`history_conversion.py`), google-genai's validation and
conversion of every `Content` (`gemini_request.py`, ≈ 1.2 s at 4,000 messages), the JSON of every
element of the openai body (`body_encoding.py`). Done in one task step, that froze the kernel's
event loop — widgets, the interrupt, other cells' requests — for as long. Every later request
only does the new messages and is short anyway.

`run_in_slices` is the one way those three do per-item work over a list: consecutive slices, each
sized from the time the previous one took to last about `SLICE_S` (never more than `MAX_SLICE`
items), with `await asyncio.sleep(0)` between them and the caller's abort check, if any, before
each. The work stays on the loop's thread (no lock, nothing shared with a worker thread, a
cancelled request stops at the next slice); the results are exactly what one call over the whole list gives, because each
caller's per-item work is independent of the other items or carries its context across slices
itself. Lists shorter than one slice cost no extra step. See docs/model-requests.md ("The first
request after a resume").
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

SLICE_S = 0.004  # CPU time one slice aims at
FIRST_SLICE = 8  # items in the first slice, before anything is measured
MAX_SLICE = 200  # items in any slice


async def run_in_slices(
    items: Sequence[T],
    work: Callable[[Sequence[T]], Awaitable[object] | object],
    check: Callable[[], None] | None = None,
) -> None:
    """Call `work` on consecutive slices of `items` (awaiting it when it returns an awaitable),
    letting the event loop run between two slices; `check` is called before every slice but the
    first (it raises to stop: an abort)."""
    start, size = 0, FIRST_SLICE
    while start < len(items):
        if start:
            await asyncio.sleep(0)
            if check is not None:
                check()
        chunk = items[start : start + size]
        began = time.perf_counter()
        result = work(chunk)
        if inspect.isawaitable(result):
            await result
        elapsed = time.perf_counter() - began
        start += len(chunk)
        size = next_slice_size(len(chunk), elapsed)


def next_slice_size(done: int, elapsed_s: float) -> int:
    """Items for the next slice, `done` items having taken `elapsed_s`."""
    if elapsed_s <= 0:
        return MAX_SLICE
    return max(1, min(MAX_SLICE, int(done * SLICE_S / elapsed_s)))
