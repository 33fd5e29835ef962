"""One writer per session: an OS-level lock held while a session is open for running.

Owns `SessionLock`: an exclusive, non-blocking `fcntl.flock` on `<session dir>/.session.lock`
(mode 0600) with the holder's pid and start time written into it, and `SessionBusyError`, the
one-line refusal a second process gets. The OS drops the lock when the holder's descriptor
closes, so a process that dies (even by SIGKILL) never leaves a stale lock behind. Within one
process the lock is shared and counted: opening the same session twice in one kernel is the
caller's business, as before. When the lock file cannot be created at all (a read-only
data root) the session opens unguarded rather than not at all; a lock file that is a symlink or
someone else's is refused (`UnsafePathError`), never followed. Readers (`read_trace`, session listings) never take it. Where
`fcntl` is missing the lock is a no-op. Design notes: docs/concurrency.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from ..private_files import UnsafePathError, open_private, private_dir

try:  # pragma: no cover - platform dependent
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

LOCK_FILE_NAME = ".session.lock"

_GUARD = threading.Lock()
_HELD: dict[str, tuple[int, int]] = {}  # lock path -> (descriptor, holders in this process)


class SessionBusyError(RuntimeError):
    """The session is open for running in another process; its trace can still be read."""

    def __init__(self, session_id: str, pid: int | None, since: str | None) -> None:
        self.session_id = session_id
        self.pid = pid
        self.since = since
        holder = f"pid {pid}" if pid is not None else "another process"
        when = f", since {since}" if since else ""
        super().__init__(
            f"session {session_id} is open in another process ({holder}{when}); close it there "
            "to run it here (its trace can still be read)"
        )


HOLDER_WAIT_S = 0.5  # a holder that just took the lock writes its pid a moment later


def _holder_info(fd: int) -> tuple[int | None, str | None]:
    deadline = time.monotonic() + HOLDER_WAIT_S
    while True:
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            raw = os.pread(fd, 4096, 0)
            info = json.loads(raw.decode("utf-8"))
            pid = info.get("pid")
            return (pid if isinstance(pid, int) else None, str(info.get("since") or "") or None)
        if time.monotonic() >= deadline:
            return None, None
        time.sleep(0.02)


class SessionLock:
    """Held while a session is open for running; `release()` is idempotent."""

    def __init__(self, path: Path, *, held: bool = True) -> None:
        self.path = path
        self._released = not held

    @property
    def held(self) -> bool:
        """False once released, or when the lock file could not be created at all."""
        return not self._released

    @classmethod
    def acquire(cls, session_dir: Path, session_id: str) -> SessionLock:
        """Take the session's lock or raise `SessionBusyError` naming the holder."""
        path = session_dir / LOCK_FILE_NAME
        key = os.path.abspath(path)
        with _GUARD:
            held = _HELD.get(key)
            if held is not None:
                _HELD[key] = (held[0], held[1] + 1)
                return cls(path)
            try:
                private_dir(session_dir)
                fd = open_private(path, os.O_RDWR | os.O_CREAT)
            except UnsafePathError:
                raise  # a planted symlink or someone else's file: refused, never followed
            except OSError:
                # An unwritable data root: the session still opens (its trace failure is
                # reported by the writer), it just cannot be guarded.
                return cls(path, held=False)
            try:
                if fcntl is not None:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        pid, since = _holder_info(fd)
                        raise SessionBusyError(session_id, pid, since) from None
                since = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
                record = json.dumps({"pid": os.getpid(), "since": since, "session_id": session_id})
                os.ftruncate(fd, 0)
                os.pwrite(fd, record.encode("utf-8"), 0)
            except BaseException:
                os.close(fd)
                raise
            _HELD[key] = (fd, 1)
            return cls(path)

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        key = os.path.abspath(self.path)
        with _GUARD:
            held = _HELD.get(key)
            if held is None:
                return
            fd, count = held
            if count > 1:
                _HELD[key] = (fd, count - 1)
                return
            del _HELD[key]
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the descriptor releases the flock
