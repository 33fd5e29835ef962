"""Waits the engine performs, each raced against the run's abort signal (docs/engine.md "The turn loop").

Owns the reconnect backoff ladder (`reconnect_delay_ms`), the backoff wait with its
"retry now" hook (`Backoff`) and stream/task clean-up helpers. Racing any other awaitable
against the signal is `interfaces.unless_aborted`; turning an abort into a callback is
`interfaces.SignalWatch`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TypeVar

from ..interfaces import AbortSignal, SignalWatch

__all__ = ["Backoff", "cancel_task", "closing_stream", "reconnect_delay_ms"]

T = TypeVar("T")


def reconnect_delay_ms(base_ms: int, cap_ms: int, attempt: int) -> int:
    """`min(base × 2^(attempt−1), cap)` for the attempt-th reconnect (1-based)."""
    return int(min(base_ms * 2 ** max(attempt - 1, 0), cap_ms))


async def cancel_task(task: asyncio.Future) -> None:
    """Cancel `task` (if still running) and wait until it has settled."""
    if not task.done():
        task.cancel()
    with suppress(asyncio.CancelledError, Exception):
        await task


@asynccontextmanager
async def closing_stream(stream: AsyncIterator[T]) -> AsyncIterator[AsyncIterator[T]]:
    """Like `contextlib.aclosing`, for any async iterator: `aclose()` it on exit when it has one
    (a failure to close is ignored: the stream's owner already reported its outcome)."""
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            with suppress(Exception):
                await aclose()


class Backoff:
    """The reconnect wait shared by turn retries and compaction retries (docs/engine.md "The turn loop").

    `wait(n, signal)` sleeps `delay(n)` and answers True ("proceed"), or False at once if the
    signal is or becomes aborted; `skip()` ends a wait in progress early as "proceed" and
    answers whether one was in progress. The three wake sources settle exactly once.
    """

    def __init__(self, base_ms: int, cap_ms: int) -> None:
        self.base_ms = base_ms
        self.cap_ms = cap_ms
        self._wake: asyncio.Future[bool] | None = None

    def delay_ms(self, attempt: int) -> int:
        return reconnect_delay_ms(self.base_ms, self.cap_ms, attempt)

    def skip(self) -> bool:
        wake = self._wake
        if wake is None or wake.done():
            return False
        loop = wake.get_loop()
        try:
            same_thread = asyncio.get_running_loop() is loop
        except RuntimeError:
            same_thread = False
        if same_thread:
            _settle(wake, True)
        else:
            loop.call_soon_threadsafe(_settle, wake, True)
        return True

    async def wait(self, attempt: int, signal: AbortSignal | None) -> bool:
        if signal is not None and signal.aborted:
            return False
        loop = asyncio.get_running_loop()
        wake: asyncio.Future[bool] = loop.create_future()
        self._wake = wake
        timer = loop.call_later(self.delay_ms(attempt) / 1000, _settle, wake, True)
        watch = SignalWatch(signal, lambda: _settle(wake, False))
        try:
            return await wake
        finally:
            timer.cancel()
            self._wake = None
            await watch.close()


def _settle(future: asyncio.Future[bool], value: bool) -> None:
    if not future.done():
        future.set_result(value)
