"""Private files and directories: everything penguin creates under the data root is owner-only.

Owns the two modes (files 0600, directories 0700) and the helpers that create with them:
`private_dir` (every directory it creates, parents included, is 0700; the leaf is tightened if it
already existed), `open_private_append` and `write_private_bytes`. It
imports nothing from the package, so the trace writer, the environment and `state/` share it.
See docs/security.md.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create `path` and its missing parents with mode 0700; an existing leaf is tightened to 0700."""
    target = Path(path)
    missing: list[Path] = []
    probe = target
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
    tighten(target, PRIVATE_DIR_MODE)
    return target


def tighten(path: str | os.PathLike[str], mode: int) -> None:
    """chmod `path` to `mode` when it is ours and looser; silently skipped otherwise."""
    with contextlib.suppress(OSError):
        info = os.stat(path)
        if info.st_uid == os.getuid() and info.st_mode & 0o777 & ~mode:
            os.chmod(path, mode)


def open_private_append(path: str | os.PathLike[str]) -> int:
    """An O_APPEND descriptor on `path` (created 0600 in a 0700 directory; an older, looser file
    is tightened)."""
    private_dir(Path(path).parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    return fd


def write_private_bytes(path: str | os.PathLike[str], data: bytes, *, exclusive: bool = False) -> None:
    """Write `data` to `path` with mode 0600 (its directory made 0700); with `exclusive` the file
    must not exist yet."""
    target = Path(path)
    private_dir(target.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(target, flags, PRIVATE_FILE_MODE)
    with contextlib.suppress(OSError):
        os.fchmod(fd, PRIVATE_FILE_MODE)
    _write_fd(fd, data)


def _write_fd(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)
