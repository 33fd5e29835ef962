"""Per-thread capture of stdout/stderr and display() while `run_python` code runs in a worker,
and redaction of what the threads that code starts print and display.

Owns the sys.stdout/sys.stderr proxy: writes from a registered worker thread go to that worker's
sink; writes from a thread the code started are redacted (such a thread may outlive the Task's
cell, when the kernel-wide filter of output/task_sink.py no longer knows its output as the
Task's); every other thread (the kernel's own output, the user's threads) passes through
untouched. Owns the same routing for the shell's display publisher: a registered worker's
`display(...)` mimebundle is also handed to its display sink (the publish itself still happens,
so the user sees it, made fetch-free by display_no_fetch and with configured secrets redacted
when the worker registered a `Redactor`), a code thread's display is made fetch-free and
redacted too (not captured), and the display formatter's sink sees the object being displayed.

Installed for the Task's code and removed after: the first `capture_current_thread` puts the
proxy on sys.stdout/sys.stderr and wraps `publish` and `format` on the shell's two objects
(instance attributes; IPython's public methods — the seam `seams.kernel.DISPLAY_CAPTURE`,
checked on those objects first: when it fails, `CaptureUnavailable` and the code does not run).
Once no call is running and no thread the code started is alive, the next look takes all three
out again (each only if it is still the one in place). Nothing is patched on a class.

Which threads are the code's: Python 3.11 has no public way to learn which thread started a
thread short of replacing `threading.Thread.start` for the whole process, which this module does
not do. It looks instead (`_Threads.look`: when a call starts and ends, when a thread it does not
know yet writes or displays, and at most once a second otherwise): a thread that appeared while a
call ran, or while a thread already taken for the code's was alive, is the code's — unless it is
penguin's own (`penguin-…`) or the event loop's executor (`asyncio_…`). So a thread of the user's
own started while the code's threads still run is taken for the code's too: its output is then
redacted as well, the safe side. The proxy's `wrapped` is the kernel's own OutStream.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import ClassVar, TextIO

from ...redaction import Redactor
from ...seams.kernel import DISPLAY_CAPTURE, publish_problem
from ..kernel_shapes import DisplayFormatter, DisplayPublisher
from .display_no_fetch import no_fetch_bundle

logger = logging.getLogger(__name__)
Sink = Callable[[str], None]
DisplaySink = Callable[[dict[str, object]], None]
FormatSink = Callable[[object], None]
# Threads never taken for the code's: penguin's own and the event loop's default executor.
OWN_THREAD_PREFIXES = ("penguin-", "asyncio_")
LOOK_INTERVAL_S = 1.0


class CaptureUnavailable(RuntimeError):
    """The shell's display publisher or formatter cannot be wrapped: run_python must not run code."""


class _Threads:
    """Which threads are the code's (see the module docstring), and the redactor of each."""

    def __init__(self) -> None:
        self.code: weakref.WeakKeyDictionary[threading.Thread, Redactor | None] = weakref.WeakKeyDictionary()
        self.others: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
        self.redactor: Redactor | None = None  # the latest call's
        self.calls = 0
        self._code_at_last_look = False
        self._last_look = 0.0

    def started(self, redactor: Redactor | None) -> None:
        """A call starts: what appears from now on is the code's until a look finds none alive."""
        self.calls += 1
        self.redactor = redactor
        self._code_at_last_look = True

    def of(self, thread: threading.Thread) -> tuple[bool, Redactor | None]:
        """(whether `thread` is the code's, its redactor); looks first when it is not known yet."""
        if thread in self.code:
            return True, self.code.get(thread)
        if thread not in self.others:
            self.look()
            return (True, self.code.get(thread)) if thread in self.code else (False, None)
        if time.monotonic() - self._last_look > LOOK_INTERVAL_S:
            self.look()
        return False, None

    def look(self) -> None:
        """Classify every thread not known yet; take the router out when nothing is the code's."""
        with _lock:
            self._last_look = time.monotonic()
            alive = self.calls > 0 or any(t.is_alive() for t in list(self.code.keys()))
            presume = alive or self._code_at_last_look
            for thread in threading.enumerate():
                if thread in self.code or thread in self.others or thread.ident in _sinks:
                    continue
                if presume and not thread.name.startswith(OWN_THREAD_PREFIXES):
                    self.code[thread] = self.redactor
                else:
                    self.others.add(thread)
            self._code_at_last_look = self.calls > 0 or any(t.is_alive() for t in list(self.code.keys()))
            if not self._code_at_last_look:
                _Installed.remove()


_threads = _Threads()


class _RoutingStream:
    def __init__(self, fallback: TextIO, sinks: dict[int, Sink]) -> None:
        self._fallback = fallback
        self._sinks = sinks

    @property
    def wrapped(self) -> TextIO:
        return self._fallback

    def write(self, text: str) -> int:
        sink = self._sinks.get(threading.get_ident())
        if sink is None:
            is_code, redactor = _threads.of(threading.current_thread())
            if is_code and redactor is not None:  # a thread the code started: it may outlive the cell
                self._fallback.write(redactor.text(text))
                return len(text)
            return self._fallback.write(text)
        sink(text)
        return len(text)

    def flush(self) -> None:
        if threading.get_ident() not in self._sinks:
            self._fallback.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self._fallback, name)


_sinks: dict[int, Sink] = {}
_display_sinks: dict[int, DisplaySink] = {}
_format_sinks: dict[int, FormatSink] = {}
_redactors: dict[int, Redactor] = {}
_lock = threading.RLock()


class _Installed:
    """What the router put in place, to take out again: (owner, attribute, ours, what was there)."""

    items: ClassVar[list[tuple[object, str, object, object]]] = []

    @classmethod
    def put(cls, owner: object, name: str, ours: object) -> None:
        missing = object()
        before = vars(owner).get(name, missing) if owner is not sys else getattr(sys, name)
        setattr(owner, name, ours)
        cls.items.append((owner, name, ours, before if before is not missing else None))

    @classmethod
    def has(cls, owner: object, name: str) -> bool:
        return any(o is owner and n == name for o, n, _, _ in cls.items)

    @classmethod
    def remove(cls) -> None:
        """Take out what is still on top; what someone else has since wrapped stays in place (their
        wrapper calls ours, which passes everything through while nothing is registered)."""
        if not cls.items or _sinks or _display_sinks or _format_sinks:
            return
        kept = []
        for owner, name, ours, before in reversed(cls.items):
            if owner is sys:
                if getattr(sys, name, None) is ours:
                    setattr(sys, name, before)
                    continue
            elif vars(owner).get(name) is ours:
                if before is None:
                    delattr(owner, name)
                else:
                    setattr(owner, name, before)
                continue
            kept.append((owner, name, ours, before))
        cls.items = kept[::-1]


# One proxy per stream for the process's life: `print` holds sys.stdout as a borrowed reference
# while it writes, so a proxy taken out during a write (a look) must not be freed under it.
_PROXIES: dict[str, _RoutingStream] = {}


def _install_streams() -> None:
    for name in ("stdout", "stderr"):
        if not _Installed.has(sys, name):
            proxy = _PROXIES.setdefault(name, _RoutingStream(getattr(sys, name), _sinks))
            proxy._fallback = getattr(sys, name)
            _Installed.put(sys, name, proxy)


def _route_publisher(publisher: DisplayPublisher) -> None:
    """Wrap `publisher.publish` (an instance attribute) so registered threads also feed their sink."""
    if _Installed.has(publisher, "publish"):
        return
    original = publisher.publish

    @functools.wraps(original)  # (its signature is the original's: checked as such again)
    def publish(*args: object, **kwargs: object) -> object:
        ident = threading.get_ident()
        sink = _display_sinks.get(ident)
        data = kwargs.get("data", args[0] if args else None)
        if sink is None:
            is_code, redactor = _threads.of(threading.current_thread())
            if is_code and isinstance(data, dict):  # a thread the code started: rewritten, not captured
                args, kwargs = _rewritten(args, kwargs, data, redactor)
            return original(*args, **kwargs)
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

    _Installed.put(publisher, "publish", publish)


def _rewritten(
    args: tuple[object, ...], kwargs: dict[str, object], data: dict[str, object], redactor: Redactor | None
) -> tuple[tuple[object, ...], dict[str, object]]:
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


def _route_formatter(formatter: DisplayFormatter) -> None:
    """Wrap `formatter.format` so a registered thread's format sink sees each displayed object."""
    if _Installed.has(formatter, "format"):
        return
    original = formatter.format

    @functools.wraps(original)
    def routed_format(obj: object, *args: object, **kwargs: object) -> object:
        sink = _format_sinks.get(threading.get_ident())
        if sink is not None:
            try:
                sink(obj)
            except Exception as exc:  # the capture is extra: the user's display still happens
                logger.warning("display capture failed: %s", exc)
        return original(obj, *args, **kwargs)

    _Installed.put(formatter, "format", routed_format)


def capture_refusal(shell: object | None) -> str | None:
    """The line saying why code must not run (the shell's display publisher or formatter cannot
    be wrapped: what it displays would reach the page unrewritten), or None."""
    publisher = getattr(shell, "display_pub", None)
    if publisher is None:
        return None
    problem = publish_problem(publisher, getattr(shell, "display_formatter", None))
    return None if DISPLAY_CAPTURE.verify(problem) else DISPLAY_CAPTURE.off_line()


def capture_current_thread(
    sink: Sink,
    shell: object | None = None,
    display_sink: DisplaySink | None = None,
    format_sink: FormatSink | None = None,
    *,
    redactor: Redactor | None = None,
) -> None:
    """Route this thread's stdout/stderr writes to `sink`; with an IPython `shell`, also hand its
    `display()` mimebundles to `display_sink` and the displayed objects to `format_sink`, and
    publish them with `redactor` applied, until `release_current_thread`. Raises
    `CaptureUnavailable` (nothing routed) when the shell's publisher cannot be wrapped."""
    publisher = getattr(shell, "display_pub", None) if display_sink is not None else None
    formatter = getattr(shell, "display_formatter", None) if format_sink is not None else None
    refused = capture_refusal(shell) if publisher is not None else None
    if refused is not None:
        raise CaptureUnavailable(refused)
    ident = threading.get_ident()
    with _lock:
        if _threads.calls == 0:
            _threads.look()  # what exists before the code runs is not the code's
        _threads.started(redactor)
        _install_streams()
        _sinks[ident] = sink
        if publisher is not None and display_sink is not None:
            _route_publisher(publisher)
            _display_sinks[ident] = display_sink
            if redactor:
                _redactors[ident] = redactor
        if formatter is not None and format_sink is not None:
            _route_formatter(formatter)
            _format_sinks[ident] = format_sink


def release_current_thread() -> None:
    ident = threading.get_ident()
    with _lock:
        for sinks in (_sinks, _display_sinks, _format_sinks, _redactors):
            sinks.pop(ident, None)
        _threads.calls = max(0, _threads.calls - 1)
        if _threads.calls == 0:
            _threads.look()  # what the code started is known now; with nothing alive, all goes
