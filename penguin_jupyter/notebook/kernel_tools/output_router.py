"""Per-thread capture of stdout/stderr and display() while `run_python` code runs in a worker.

Owns the sys.stdout/sys.stderr proxy: writes from a registered worker thread go to that
worker's sink; every other thread (the kernel's own output) passes through untouched. Owns the
same routing for the shell's display publisher: a registered worker's `display(...)` mimebundle
is also handed to its display sink (the publish itself still happens, so the user sees it, made
fetch-free by display_no_fetch and with configured secrets redacted when the worker registered a
`Redactor`), and for the display formatter, whose sink sees the object being displayed.
Threads a worker starts (and the threads they start) are remembered through a wrapper of
`threading.Thread.start`: their displays (data and metadata) are made fetch-free and redacted
too, though not captured, and so are their prints: such a thread may outlive the Task's cell,
when the kernel-wide filter of runtime/task_sink.py no longer knows its output as the Task's.
All are installed once and left in place; they cost one dict lookup per
write/publish/format/thread start. `kernel_stream` unwraps the proxy (the kernel's OutStream).
"""

from __future__ import annotations

import logging
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any, TextIO

from ...redaction import Redactor
from .display_no_fetch import no_fetch_bundle
from .kernel_shell import KernelShell

logger = logging.getLogger(__name__)
Sink = Callable[[str], None]
DisplaySink = Callable[[dict[str, object]], None]
FormatSink = Callable[[object], None]


class _RoutingStream:
    def __init__(self, fallback: TextIO, sinks: dict[int, Sink]) -> None:
        self._fallback = fallback
        self._sinks = sinks

    def write(self, text: str) -> int:
        sink = self._sinks.get(threading.get_ident())
        if sink is None:
            redactor = _spawned.get(threading.current_thread()) if _spawned else None
            if redactor is not None:  # a thread the code started: its prints outlive the Task's cell
                self._fallback.write(redactor.text(text))
                return len(text)
            return self._fallback.write(text)
        sink(text)
        return len(text)

    def flush(self) -> None:
        if threading.get_ident() not in self._sinks:
            self._fallback.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fallback, name)


def kernel_stream(stream: Any) -> Any:
    """The stream under the routing proxy (the kernel's own OutStream), or `stream` itself."""
    return stream._fallback if isinstance(stream, _RoutingStream) else stream


_sinks: dict[int, Sink] = {}
_display_sinks: dict[int, DisplaySink] = {}
_format_sinks: dict[int, FormatSink] = {}
_redactors: dict[int, Redactor] = {}
# Threads started (directly or not) by a registered worker → that worker's Redactor.
_spawned: weakref.WeakKeyDictionary[threading.Thread, Redactor | None] = (
    weakref.WeakKeyDictionary()
)
_NOT_SPAWNED: Any = object()
_lock = threading.Lock()
_ROUTED = "_penguin_display_routed"


def _ensure_installed() -> None:
    with _lock:
        for name in ("stdout", "stderr"):
            current = getattr(sys, name)
            if not isinstance(current, _RoutingStream):
                setattr(sys, name, _RoutingStream(current, _sinks))


def _route_publisher(publisher: Any) -> None:
    """Wrap `publisher.publish` (an instance attribute) so registered threads also feed their sink."""
    with _lock:
        if getattr(publisher, _ROUTED, False):
            return
        original = publisher.publish

        def publish(*args: Any, **kwargs: Any) -> Any:
            ident = threading.get_ident()
            sink = _display_sinks.get(ident)
            if sink is None:
                spawned_by = _spawned.get(threading.current_thread(), _NOT_SPAWNED)
                if spawned_by is _NOT_SPAWNED:
                    return original(*args, **kwargs)
                data = kwargs.get("data", args[0] if args else None)
                if isinstance(data, dict):  # a thread the code started: rewritten, not captured
                    args, kwargs = _rewritten(args, kwargs, data, spawned_by)
                return original(*args, **kwargs)
            data = kwargs.get("data", args[0] if args else None)
            if isinstance(data, dict) and not kwargs.get("update"):  # updates redraw a live display
                try:
                    sink(data)
                except Exception as exc:  # the user's display must still happen
                    logger.warning("display capture failed: %s", exc)
            if isinstance(data, dict):  # updates too: they redraw what the user sees
                args, kwargs = _rewritten(args, kwargs, data, _redactors.get(ident))
            # A publisher that prints (terminal IPython) prints to the user only: the sink has it.
            stream_sink = _sinks.pop(ident, None)
            try:
                return original(*args, **kwargs)
            finally:
                if stream_sink is not None:
                    _sinks[ident] = stream_sink

        publisher.publish = publish
        setattr(publisher, _ROUTED, True)


def _track_spawned_threads() -> None:
    """Wrap `threading.Thread.start` (once) so a thread started by a registered worker, or by a
    thread it started, is remembered with the worker's Redactor: what it displays is
    rewritten too, even after the worker is gone."""
    with _lock:
        if getattr(threading.Thread.start, _ROUTED, False):
            return
        original = threading.Thread.start

        def start(self: threading.Thread) -> None:
            ident = threading.get_ident()
            if ident in _display_sinks:
                _spawned[self] = _redactors.get(ident)
            else:
                parent = _spawned.get(threading.current_thread(), _NOT_SPAWNED)
                if parent is not _NOT_SPAWNED:
                    _spawned[self] = parent
            original(self)

        setattr(start, _ROUTED, True)
        threading.Thread.start = start  # type: ignore[method-assign]


def _rewritten(
    args: tuple[Any, ...], kwargs: dict[str, Any], data: dict[str, Any], redactor: Redactor | None
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`publish`'s arguments with its bundle made fetch-free (display_no_fetch), then redacted."""
    in_kwargs = "metadata" in kwargs or len(args) < 2
    metadata = kwargs.get("metadata") if in_kwargs else args[1]
    try:
        data, metadata = no_fetch_bundle(data, metadata if isinstance(metadata, dict) else None)
    except Exception as exc:  # never the original bundle: one line instead
        data, metadata = {"text/plain": f"penguin: a run_python display was not shown ({exc!r})"}, {}
    if redactor is not None:
        data = redact_mimebundle(data, redactor)
        if isinstance(metadata, dict):
            metadata = redact_mimebundle(metadata, redactor)
    positional = list(args)
    if "data" in kwargs:
        kwargs["data"] = data
    else:
        positional[0] = data
    if metadata is not None:
        if in_kwargs:
            kwargs["metadata"] = metadata
        else:
            positional[1] = metadata
    return tuple(positional), kwargs


def redact_mimebundle(data: dict[str, object], redactor: Redactor) -> dict[str, object]:
    """`data` with `redactor.text` applied to every string of its text representations (binary images,
    base64-encoded, are left as they are)."""

    def walk(value: object) -> object:
        if isinstance(value, str):
            return redactor.text(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return {
        mime: value if mime.startswith("image/") and mime != "image/svg+xml" else walk(value)
        for mime, value in data.items()
    }


def _route_formatter(formatter: Any) -> None:
    """Wrap `formatter.format` so a registered thread's format sink sees each displayed object."""
    with _lock:
        if getattr(formatter, _ROUTED, False):
            return
        original = formatter.format

        def routed_format(obj: Any, *args: Any, **kwargs: Any) -> Any:
            sink = _format_sinks.get(threading.get_ident())
            if sink is not None:
                try:
                    sink(obj)
                except Exception as exc:
                    logger.warning("display capture failed: %s", exc)
            return original(obj, *args, **kwargs)

        formatter.format = routed_format
        setattr(formatter, _ROUTED, True)


def capture_current_thread(
    sink: Sink,
    shell: KernelShell | None = None,
    display_sink: DisplaySink | None = None,
    format_sink: FormatSink | None = None,
    *,
    redactor: Redactor | None = None,
) -> None:
    """Route this thread's stdout/stderr writes to `sink`; with an IPython `shell`, also hand its
    `display()` mimebundles to `display_sink` and the displayed objects to `format_sink`, and
    publish them with `redactor` applied, until `release_current_thread`."""
    _ensure_installed()
    ident = threading.get_ident()
    _sinks[ident] = sink
    publisher = getattr(shell, "display_pub", None)
    if publisher is not None and display_sink is not None:
        _route_publisher(publisher)
        _track_spawned_threads()
        _display_sinks[ident] = display_sink
        if redactor:
            _redactors[ident] = redactor
    formatter = getattr(shell, "display_formatter", None)
    if formatter is not None and format_sink is not None:
        _route_formatter(formatter)
        _format_sinks[ident] = format_sink


def release_current_thread() -> None:
    ident = threading.get_ident()
    for sinks in (_sinks, _display_sinks, _format_sinks, _redactors):
        sinks.pop(ident, None)
