"""Interrupt-friendly waiting inside a kernel cell (docs/notebook-runtime.md, "Event loop and threads").

A kernel interrupt reaches an awaiting cell only when the event loop wakes, so every wait here
is sliced into steps of at most `SLICE_S` seconds: the bridge's replies, an approval click, the
Task itself. Owns nothing else (it sits with the bridge, the lowest of its users).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (typing only: `%load_ext` imports this module and must stay light)
    from ...interfaces import AbortSignal

SLICE_S = 0.25


async def wait_sliced(
    future: asyncio.Future, signal: AbortSignal | None = None, timeout_s: float | None = None
) -> bool:
    """Wait for `future` in ≤0.25 s slices; False when the signal fired or the timeout passed first.

    The future is never cancelled here; a CancelledError from the cell propagates to the caller.
    """
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while not future.done():
        if signal is not None and signal.aborted:
            return False
        step = SLICE_S
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            step = min(step, left)
        await asyncio.wait({future}, timeout=step)
    return True
