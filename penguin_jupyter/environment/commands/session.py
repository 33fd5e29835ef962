"""One command session: a `bash -lc` child in its own process group, read through pipes.

Owns the bounded unread-output buffer (1 MiB chars, oldest dropped with a marker), completion
on the foreground shell's exit (not pipe EOF), the SIGTERM-then-SIGKILL kill, and the async
`collect(yield_ms)` window. Which process that is and how it is signalled is the child's
(`child.py`): started here, as it is or under a per-command bwrap (`launch`), or started
already in the session's warm sandbox (`environment/sandbox/warm.py`). Threads do the blocking
I/O so a session works from any event loop (the notebook may drive successive runs from
different loops).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal as signal_module
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import IO

from ...interfaces import AbortSignal, unless_aborted
from ..sandbox.launch import ProcessLaunch
from .child import CommandChild, PopenChild

OUTPUT_BUFFER_CAP = 1024 * 1024
POST_EXIT_DRAIN_S = 0.05
KILL_GRACE_S = 1.0
# A background child that keeps writing after the shell exited must not hold the call forever.
MAX_TRAILING_DRAIN_S = 2.0
_READ_CHUNK = 65536


def signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"SIG{number}"


class CommandSession:
    def __init__(
        self,
        cmd: str,
        cwd: str,
        env: dict[str, str],
        launch: ProcessLaunch | None = None,
        child: CommandChild | None = None,
    ):
        """`launch`: start it under a per-command bwrap; `child`: it was started already (in a
        session's warm sandbox)."""
        self.cmd = cmd
        self.sandbox_notes: list[str] = []  # what the sandbox reports once the command ended
        self._lock = threading.Lock()
        self._chunks: deque[str] = deque()
        self._buffered = 0
        self._dropped = 0
        self._wakers: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._exited = threading.Event()
        self._open_pipes = 2  # stdout and stderr; at 0 every byte the command wrote is buffered
        self.exit_code: int | None = None
        self.exit_signal: str | None = None
        self._killed = False
        self._kill_timer: threading.Timer | None = None
        self._on_settled: Callable[[CommandSession], None] | None = None
        self.last_output_at = time.monotonic()
        self.last_used = time.monotonic()
        self.child: CommandChild = child if child is not None else PopenChild(["bash", "-lc", cmd], cwd, env, launch)
        self.pid = self.child.pid
        self._readers = [
            threading.Thread(target=self._read_pipe, args=(self.child.stdout,), daemon=True),
            threading.Thread(target=self._read_pipe, args=(self.child.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        threading.Thread(target=self._wait_exit, daemon=True).start()

    # --- state -----------------------------------------------------------------------------

    @property
    def exited(self) -> bool:
        return self._exited.is_set()

    @property
    def pipes_closed(self) -> bool:
        """Both pipes reached EOF: nothing more can arrive (no background child holds them)."""
        with self._lock:
            return self._open_pipes == 0

    def exit_description(self) -> str:
        """`exit code N` or `terminated by signal S` (only meaningful once exited)."""
        if self.exit_signal is not None:
            return f"terminated by signal {self.exit_signal}"
        return f"exit code {self.exit_code}"

    def exit_failed(self) -> bool:
        return self.exit_signal is not None or (self.exit_code or 0) != 0

    def exit_note(self) -> str | None:
        if self.exit_signal is not None:
            return f"[terminated by signal {self.exit_signal}]"
        if self.exit_code:
            return f"[exit code: {self.exit_code}]"
        return None

    # --- threads ---------------------------------------------------------------------------

    def _read_pipe(self, pipe: IO[bytes] | None) -> None:
        if pipe is None:
            return
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        fd = pipe.fileno()
        try:
            while True:
                try:
                    data = os.read(fd, _READ_CHUNK)
                except OSError:
                    break
                if not data:
                    break
                self._push(decoder.decode(data))
            self._push(decoder.decode(b"", final=True))
        finally:
            with contextlib.suppress(OSError):
                pipe.close()
            with self._lock:
                self._open_pipes -= 1
            self._wake()

    def _push(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            self._chunks.append(text)
            self._buffered += len(text)
            overflow = self._buffered - OUTPUT_BUFFER_CAP
            while overflow > 0 and self._chunks:
                first = self._chunks[0]
                if len(first) <= overflow:
                    self._chunks.popleft()
                    cut = len(first)
                else:
                    self._chunks[0] = first[overflow:]
                    cut = overflow
                self._buffered -= cut
                self._dropped += cut
                overflow -= cut
            self.last_output_at = time.monotonic()
        self._wake()

    def _wait_exit(self) -> None:
        code = self.child.wait()
        if code < 0:
            self.exit_signal = signal_name(-code)
        else:
            self.exit_code = code
        self.sandbox_notes = self.child.close()
        self._exited.set()
        self._wake()
        callback = self._on_settled
        if callback is not None:
            self._wait_quiet(max_wait_s=2.0)
            if self._on_settled is not None:
                self._on_settled = None
                callback(self)

    def _wait_quiet(self, max_wait_s: float) -> None:
        """Let trailing output land: wait until no output arrived for the drain window."""
        give_up = time.monotonic() + max_wait_s
        while time.monotonic() < give_up and not self.pipes_closed:
            quiet_for = time.monotonic() - self.last_output_at
            if quiet_for >= POST_EXIT_DRAIN_S:
                return
            time.sleep(POST_EXIT_DRAIN_S - quiet_for)

    def _wake(self) -> None:
        with self._lock:
            wakers = list(self._wakers)
        for loop, event in wakers:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)

    # --- control ---------------------------------------------------------------------------

    def arm_report(self, callback: Callable[[CommandSession], None]) -> None:
        """One-shot: `callback(session)` runs (on a worker thread) once the command settled."""
        self._on_settled = callback
        if self.exited:
            # Exited before arming: the waiter may already be past its check.
            def late() -> None:
                self._wait_quiet(max_wait_s=2.0)
                if self._on_settled is callback:
                    self._on_settled = None
                    callback(self)

            threading.Thread(target=late, daemon=True).start()

    def disarm_report(self) -> None:
        self._on_settled = None

    def take_output(self) -> str:
        with self._lock:
            text = "".join(self._chunks)
            self._chunks.clear()
            self._buffered = 0
            dropped, self._dropped = self._dropped, 0
        if dropped:
            text = f"[... {dropped} chars of earlier output dropped ...]\n" + text
        return text

    def has_output(self) -> bool:
        with self._lock:
            return self._buffered > 0 or self._dropped > 0

    def write(self, chars: str) -> None:
        """Write to stdin on a worker thread; errors (closed stdin) are ignored."""
        stdin = self.child.stdin
        if stdin is None:
            return
        data = chars.encode("utf-8", "replace")

        def write() -> None:
            with contextlib.suppress(OSError, ValueError):
                stdin.write(data)
                stdin.flush()

        threading.Thread(target=write, daemon=True).start()

    def interrupt(self) -> None:
        self.child.signal_command(signal_module.SIGINT, wait=True, ended=self.exited)

    def kill(self) -> None:
        """SIGTERM to the command's group, SIGKILL to everything it started after the grace;
        idempotent."""
        if self._killed:
            return
        self._killed = True
        self.child.signal_command(signal_module.SIGTERM, wait=False, ended=self.exited)
        self._kill_timer = threading.Timer(KILL_GRACE_S, self.child.kill_everything)
        self._kill_timer.daemon = True
        self._kill_timer.start()

    def hard_kill(self) -> None:
        self._killed = True
        self.child.kill_everything()

    # --- async collection --------------------------------------------------------------------

    async def collect(self, yield_ms: float, signal: AbortSignal | None) -> AsyncIterator[str]:
        """Yield buffered output as it arrives until the shell exited (then drain trailing
        output until both pipes closed, or 50 ms of quiet while a background child keeps them
        open), the signal aborted, or `yield_ms` elapsed."""
        self.last_used = time.monotonic()
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        waker = (loop, event)
        with self._lock:
            self._wakers.add(waker)
        deadline = loop.time() + yield_ms / 1000
        try:
            while True:
                event.clear()
                if self.has_output():
                    yield self.take_output()
                    continue
                if signal is not None and signal.aborted:
                    return
                if self.exited:
                    async for text in self._drain_trailing(event, signal):
                        yield text
                    return
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return
                await _wait_any(event, signal, remaining)
        finally:
            with self._lock:
                self._wakers.discard(waker)
            self.last_used = time.monotonic()

    async def _drain_trailing(self, event: asyncio.Event, signal: AbortSignal | None) -> AsyncIterator[str]:
        give_up = asyncio.get_running_loop().time() + MAX_TRAILING_DRAIN_S
        while asyncio.get_running_loop().time() < give_up:
            event.clear()
            closed = self.pipes_closed  # read before the buffer: closed means all of it is there
            if self.has_output():
                yield self.take_output()
                continue
            if closed or (signal is not None and signal.aborted):
                return
            if not await _wait_any(event, signal, POST_EXIT_DRAIN_S) and not self.has_output():
                return


async def _wait_any(event: asyncio.Event, signal: AbortSignal | None, timeout_s: float) -> bool:
    """Wait for `event`, the signal, or the timeout; True when the event fired."""
    await unless_aborted(event.wait(), signal, timeout_s=timeout_s)
    return event.is_set()
