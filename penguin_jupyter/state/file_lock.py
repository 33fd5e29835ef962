"""Serializing read-modify-write of data-root files across threads and processes.

Owns `exclusive(path)`: a per-path thread lock plus an `fcntl.flock` on a sibling lock file
(`.<name>.lock`, mode 0600, never opened through a symlink) held for the duration of the block, so two threads, kernels or
processes updating the same config never lose each other's change. Writing the new content
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
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock
