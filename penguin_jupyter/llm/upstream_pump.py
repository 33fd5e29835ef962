"""UpstreamPump: reads one request's upstream event stream in its own Task into a buffer.

The consumer (`GenerativeModel.stream_generate`) never awaits the upstream itself, so an
upstream that ignores cancellation cannot hang a run, and it pays for a wait only when the
buffer is empty: a network chunk carrying many events costs one wake-up, not one Task and one
`asyncio.wait` per event. Owns the buffer, the reader Task, the bounded run-ahead and the wait
raced against the request's abort waiter and idle timer; what a stop means (abort, timeout,
error classification) is left to the model.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Generic, TypeVar

Event = TypeVar("Event")

# Events read ahead of the consumer before the reader pauses (a consumer held by an approval
# prompt does not make the whole response pile up in memory).
RUN_AHEAD_LIMIT = 4096


class UpstreamPump(Generic[Event]):
    def __init__(self, stream: AsyncIterator[Event], run_ahead: int = RUN_AHEAD_LIMIT) -> None:
        self._stream = stream
        self._buffer: deque[Event] = deque()
        self._run_ahead = run_ahead
        self._ended = False
        self._error: BaseException | None = None
        self._arrived: asyncio.Future[None] | None = None  # set while the consumer waits
        self._drained: asyncio.Future[None] | None = None  # set while the reader is paused
        self.task: asyncio.Task[None] = asyncio.ensure_future(self._read())

    @property
    def ready(self) -> bool:
        """An event, the end or an error is there to take without waiting."""
        return bool(self._buffer) or self._ended

    async def _read(self) -> None:
        try:
            async for event in self._stream:
                self._buffer.append(event)
                _settle(self._arrived)
                if len(self._buffer) >= self._run_ahead:
                    self._drained = asyncio.get_running_loop().create_future()
                    await self._drained
        except BaseException as exc:  # CancelledError included: the consumer sees it as the error
            self._error = exc
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._ended = True
            _settle(self._arrived)

    async def wait(self, abort_waiter: asyncio.Future[None] | None, timeout_s: float | None) -> bool:
        """Wait until `ready`, the abort waiter fires or `timeout_s` passes; True when ready (an
        arrived event wins over a simultaneous abort or timeout)."""
        if self.ready:
            return True
        arrived = self._arrived = asyncio.get_running_loop().create_future()
        try:
            if abort_waiter is None and timeout_s is None:
                await arrived
            else:
                waiters = {arrived} if abort_waiter is None else {arrived, abort_waiter}
                await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._arrived = None
            arrived.cancel()
        return self.ready

    def take(self) -> Event:
        """The next event; raises StopAsyncIteration at the end or the upstream's error.
        Call only when `ready`."""
        if self._buffer:
            event = self._buffer.popleft()
            if self._drained is not None and len(self._buffer) < self._run_ahead // 2:
                _settle(self._drained)
                self._drained = None
            return event
        if self._error is not None:
            raise self._error
        raise StopAsyncIteration


def _settle(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)
