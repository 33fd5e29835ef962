"""Serializing read-modify-write of data-root files across threads and processes.

Owns `exclusive(path)`: a per-path thread lock plus an `fcntl.flock` on a sibling lock file
(`.<name>.lock`, mode 0600, never opened through a symlink) held for the duration of the block, so two threads, kernels or
processes updating the same config never lose each other's change; a child forked while a lock
is held does not keep it. Writing the new content
atomically is `toml_writer.write_private_file`'s job. Where `fcntl` is missing (Windows) only
the thread lock applies.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from ..private_files import open_private, private_dir

try:  # pragma: no cover - platform dependent
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

_GUARD = threading.Lock()
_THREAD_LOCKS: dict[str, threading.Lock] = {}
_HELD: set[int] = set()  # the lock files this process holds open right now


def _forget_in_child() -> None:
    """A child forked while a lock is held (code in `run_python` calling `os.fork` for a daemon)
    closes its copies: an flock belongs to the open file, which the child would otherwise keep
    locked after the parent let go, and the next `exclusive` of the parent would wait forever."""
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def lock_file_for(path: Path) -> Path:
    """The sibling lock file of `path`: `.<name>.lock` in the same directory."""
    return path.with_name(f".{path.name}.lock")


def _thread_lock(path: Path) -> threading.Lock:
    key = os.path.abspath(path)
    with _GUARD:
        lock = _THREAD_LOCKS.get(key)
        if lock is None:
            lock = _THREAD_LOCKS[key] = threading.Lock()
        return lock


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold `path`'s update lock (threads of this process, then other processes) for the block."""
    private_dir(path.parent)
    with _thread_lock(path):
        if fcntl is None:  # pragma: no cover
            yield
            return
        fd = open_private(lock_file_for(path), os.O_RDWR | os.O_CREAT)
        _HELD.add(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            _HELD.discard(fd)
            os.close(fd)  # closing releases the flock
