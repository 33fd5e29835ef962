"""WakeSignal: the single wake-up point of a managed subagent session.

New child messages, the end of a round, new approval requests and kills all `notify()`; a
collect window `wait()`s for the next notification, a deadline or the call's abort signal.
`notify` may be called from any thread: waiters are resolved on their own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from ....interfaces import AbortSignal, unless_aborted


def resolve_soon(future: asyncio.Future, value: object) -> None:
    """Set `future`'s result (once) from any thread; a closed loop is ignored."""

    def settle() -> None:
        if not future.done():
            future.set_result(value)

    loop = future.get_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        settle()
        return
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)


class WakeSignal:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[asyncio.Future] = set()

    def notify(self) -> None:
        with self._lock:
            waiters, self._waiters = self._waiters, set()
        for waiter in waiters:
            resolve_soon(waiter, None)

    async def wait(self, timeout_s: float, signal: AbortSignal | None = None) -> None:
        """Return at the next `notify()`, after `timeout_s`, or when `signal` aborts."""
        waiter = asyncio.get_running_loop().create_future()
        with self._lock:
            self._waiters.add(waiter)
        try:
            await unless_aborted(waiter, signal, timeout_s=max(timeout_s, 0))
        finally:
            with self._lock:
                self._waiters.discard(waiter)
