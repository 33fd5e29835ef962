"""Live messages of background subagents, routed into the running `%%penguin` cell.

Owns the one listener a Session's background subagents allow (`Session.background_subagents()`)
while a cell runs: attached when the cell is entered (the registry flushes its backlog into it),
detached when the cell exits (the registry buffers again until the next cell). Messages may arrive on any thread; they are queued
and handed to the cell's sink in batches on the kernel's loop (one `call_soon_threadsafe` per
batch, not per message). Rendering them is the view's job; the runner decides what the sink does.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Protocol

from ...omni import OmniMessage

log = logging.getLogger(__name__)

Sink = Callable[[OmniMessage], None]


class BackgroundMessages(Protocol):
    """The registry side (`SubagentSessionManager`, from `Session.background_subagents()`)."""

    def set_message_listener(self, listener: Sink | None) -> None: ...

    def forward(self, message: OmniMessage) -> None: ...


class BackgroundFeed:
    """Background children's live messages → `sink(message)` on `loop`, between attach and detach."""

    def __init__(self, manager: BackgroundMessages, loop: asyncio.AbstractEventLoop, sink: Sink) -> None:
        self.manager = manager
        self.loop = loop
        self.sink = sink
        self.delivered = 0
        self.batches = 0
        self._queue: deque[OmniMessage] = deque()
        self._lock = threading.Lock()
        self._scheduled = False
        self._open = False

    @property
    def attached(self) -> bool:
        return self._open

    def attach(self) -> None:
        """Become the manager's listener; its backlog (earlier messages) is delivered first."""
        with self._lock:
            self._open = True
        self.manager.set_message_listener(self.receive)

    def detach(self) -> None:
        """Stop listening; what is queued is delivered now (call this on the loop)."""
        with self._lock:
            was_open, self._open = self._open, False
        if was_open:
            self.manager.set_message_listener(None)
        self._drain()

    def receive(self, message: OmniMessage) -> None:
        """The manager's listener: may run on any thread."""
        schedule = False
        with self._lock:
            accepted = self._open
            if accepted:
                self._queue.append(message)
                schedule = not self._scheduled
                self._scheduled = True
        if not accepted:
            # Raced with detach: hand it back, so it lands in the backlog for the next cell.
            self.manager.forward(message)
            return
        if schedule:
            try:
                self.loop.call_soon_threadsafe(self._drain)
            except RuntimeError:  # the loop is closed: nothing can render any more
                with self._lock:
                    self._queue.clear()
                    self._scheduled = False

    def _drain(self) -> None:
        with self._lock:
            batch = list(self._queue)
            self._queue.clear()
            self._scheduled = False
        if batch:
            self.batches += 1
        for message in batch:
            self.delivered += 1
            try:
                self.sink(message)
            except Exception as exc:  # one bad message must not lose the rest
                log.warning("[penguin] could not show a background subagent message: %s", exc)
