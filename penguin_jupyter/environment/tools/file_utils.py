"""Atomic file writes shared by edit_file and write_file: a temp file
`.<basename>.tmp-<pid>-<6 random>` in the same directory, then rename; the original
permission bits are preserved and the temp file is removed on failure."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat


def atomic_write(path: str, data: bytes) -> None:
    directory = os.path.dirname(path) or "."
    previous_mode: int | None = None
    with contextlib.suppress(FileNotFoundError):
        previous_mode = stat.S_IMODE(os.stat(path).st_mode)
    temp = os.path.join(directory, f".{os.path.basename(path)}.tmp-{os.getpid()}-{secrets.token_hex(3)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if previous_mode is None else 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        if previous_mode is not None:
            os.chmod(temp, previous_mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def os_error_text(exc: OSError) -> str:
    return exc.strerror or str(exc)
