"""Private files and directories: everything penguin creates under the data root is owner-only,
and anything there it did not make safely is refused; see
docs/security.md "A data root is private or refused".

Owns the two modes (files 0600, directories 0700), the check of what already exists
(`check_private`: not a symlink, owned by you, not writable by group or others — else
`UnsafePathError`, one line naming the path) and the helpers that create, open and read with
them: `private_dir` (every directory it creates, parents included, is 0700; an existing leaf is
checked, then tightened), `open_private` / `open_private_append` (O_NOFOLLOW, checked after
opening), `read_private_text` and `write_private_bytes`. It imports nothing
from the package, so the trace writer, the environment and `state/` share it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafePathError(PermissionError):
    """Something under the data root that penguin will not use; `str()` is the one line to show."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        super().__init__(errno.EPERM, f"refusing {os.fspath(path)}: {why}")
        self.path = os.fspath(path)

    def __str__(self) -> str:
        return str(self.strerror)


def _judge(path: str | os.PathLike[str], info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(path, "it is a symlink (nothing under the data root is followed)")
    if info.st_uid != os.getuid():
        raise UnsafePathError(path, f"owned by uid {info.st_uid}, not by you (uid {os.getuid()})")
    if info.st_mode & 0o022:
        raise UnsafePathError(path, f"writable by group or others (run: chmod go-w {os.fspath(path)})")


def check_private(path: str | os.PathLike[str], *, follow: bool = False) -> os.stat_result | None:
    """None when `path` does not exist; else its stat, after refusing (`UnsafePathError`) a
    symlink (unless `follow`), another owner, or write access for group or others."""
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        return None
    _judge(path, info)
    return info


def private_dir(path: str | os.PathLike[str]) -> Path:
    """Create `path` and its missing parents with mode 0700; an existing leaf is checked
    (`check_private`: never a symlink, yours, not writable by others) and tightened to 0700."""
    target = Path(path)
    check_private(target)
    missing: list[Path] = []
    probe = target
    while not os.path.lexists(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR_MODE)
        except FileExistsError:
            check_private(directory)  # made by someone else meanwhile: only if it is safe
            continue
        os.chmod(directory, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
    if not stat.S_ISDIR(os.lstat(target).st_mode):
        raise NotADirectoryError(errno.ENOTDIR, f"not a directory: {target}")
    tighten(target, PRIVATE_DIR_MODE)
    return target


def tighten(path: str | os.PathLike[str], mode: int) -> None:
    """chmod `path` to `mode` when it is ours and looser; silently skipped otherwise."""
    with contextlib.suppress(OSError):
        info = os.stat(path)
        if info.st_uid == os.getuid() and info.st_mode & 0o777 & ~mode:
            os.chmod(path, mode)


def open_private(path: str | os.PathLike[str], flags: int, *, mode: int = PRIVATE_FILE_MODE) -> int:
    """`os.open(path, flags | O_NOFOLLOW)`, then the open file is checked like `check_private`
    (a symlink is refused, never followed; another owner or group/other write refused) and an
    older, looser file of yours tightened to 0600."""
    truncate = bool(flags & os.O_TRUNC)  # only once the file has passed the check
    try:
        fd = os.open(path, (flags & ~os.O_TRUNC) | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(path, "it is a symlink (nothing under the data root is followed)") from None
        raise
    try:
        info = os.fstat(fd)
        _judge(path, info)
        if info.st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE_MODE)
        if truncate:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_private_append(path: str | os.PathLike[str]) -> int:
    """An O_APPEND descriptor on `path` (created 0600 in a 0700 directory; never through a symlink)."""
    private_dir(Path(path).parent)
    return open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)


def read_private_text(path: str | os.PathLike[str]) -> str:
    """The UTF-8 text of a file under the data root, read only if it passes `check_private`
    (FileNotFoundError when it does not exist)."""
    fd = open_private(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode("utf-8")


def write_private_bytes(path: str | os.PathLike[str], data: bytes, *, exclusive: bool = False) -> None:
    """Write `data` to `path` with mode 0600 (its directory made 0700); with `exclusive` the file
    must not exist yet."""
    target = Path(path)
    private_dir(target.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    _write_fd(open_private(target, flags), data)


def _write_fd(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)
