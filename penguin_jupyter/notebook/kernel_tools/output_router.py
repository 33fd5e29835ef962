"""Per-thread capture of stdout/stderr while `run_python` code runs in a worker thread.

Owns the sys.stdout/sys.stderr proxy: writes from a registered worker thread go to that
worker's sink; every other thread (the kernel's own output) passes through untouched.
Installed once and left in place; it costs one dict lookup per write.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

Sink = Callable[[str], None]


class _RoutingStream:
    def __init__(self, fallback: TextIO, sinks: dict[int, Sink]) -> None:
        self._fallback = fallback
        self._sinks = sinks

    def write(self, text: str) -> int:
        sink = self._sinks.get(threading.get_ident())
        if sink is None:
            return self._fallback.write(text)
        sink(text)
        return len(text)

    def flush(self) -> None:
        if threading.get_ident() not in self._sinks:
            self._fallback.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fallback, name)


_sinks: dict[int, Sink] = {}
_lock = threading.Lock()


def _ensure_installed() -> None:
    with _lock:
        for name in ("stdout", "stderr"):
            current = getattr(sys, name)
            if not isinstance(current, _RoutingStream):
                setattr(sys, name, _RoutingStream(current, _sinks))


def capture_current_thread(sink: Sink) -> None:
    """Route this thread's stdout/stderr writes to `sink` until `release_current_thread`."""
    _ensure_installed()
    _sinks[threading.get_ident()] = sink


def release_current_thread() -> None:
    _sinks.pop(threading.get_ident(), None)
