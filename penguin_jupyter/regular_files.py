"""Reading a file someone else may have prepared: only a regular file, at most a cap, never a hang.

Owns `read_regular_bytes` (and `RefusedFile`, its one-line refusal, and `not_regular`, the words
for what a path is instead): the path is checked with `stat` (`lstat` when a symlink must not be
followed) before it is opened, so a FIFO, a device, a socket or a directory is refused without
being opened — a FIFO cannot hang the kernel, `/dev/zero` cannot fill its memory; then it is
opened with O_NONBLOCK (and O_NOFOLLOW when a symlink must not be followed), checked again with
`fstat` on the open descriptor (the path may have been swapped in between) and read to at most
`cap` bytes, the size checked before anything is read. Which file is read with which cap, and
what to say when it is refused, is the caller's (docs/security.md "Files a folder supplies").
Imports nothing from the package, so state/, environment/ and notebook/ share it.
"""

from __future__ import annotations

import errno
import os
import stat

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class RefusedFile(OSError):
    """A file that is not read: not a regular file, or larger than its cap. `str()` (and
    `strerror`) is the reason, without the path; `filename` is the path."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        super().__init__(errno.EINVAL, why, os.fspath(path))

    def __str__(self) -> str:
        return str(self.strerror)


def not_regular(info: os.stat_result) -> str | None:
    """What a non-regular file is, in words ("a FIFO (named pipe)"…); None for a regular file."""
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return None
    for test, words in (
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return words
    return "not a regular file"


def size_words(cap: int) -> str:
    """`cap` as the refusals say it: "1 MB", "64 MB", "512 KB"."""
    return f"{cap >> 20} MB" if cap >= 1 << 20 else f"{cap >> 10} KB"


def _judge(path: str | os.PathLike[str], info: os.stat_result, cap: int) -> None:
    kind = not_regular(info)
    if kind is not None:
        raise RefusedFile(path, f"it is {kind}, not a regular file")
    if info.st_size > cap:
        raise RefusedFile(path, f"it is larger than {size_words(cap)}")


def read_regular_bytes(path: str | os.PathLike[str], cap: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `cap` of them. Raises `RefusedFile` for
    anything else (a symlink too, unless `follow_symlinks`) and for a file above `cap`; other
    errors (a missing file…) as the `OSError` they are."""
    _judge(path, os.stat(path) if follow_symlinks else os.lstat(path), cap)
    flags = os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise RefusedFile(path, "it is a symlink, not a regular file") from None
        raise
    try:
        _judge(path, os.fstat(fd), cap)
        chunks: list[bytes] = []
        left = cap + 1  # one byte more: a file that grew past the cap since fstat is refused too
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    if left <= 0:
        raise RefusedFile(path, f"it is larger than {size_words(cap)}")
    return b"".join(chunks)
