"""Names the running kernel's connection file (it holds the kernel's signing key) as a credential
file, so a `read_file` of it (or of a hard link or symlink to it) is never approved automatically.

Owns finding the file through ipykernel and adding it to `$PENGUIN_SECRET_FILES` (read by
`environment/secret_files.py`, which does the check; an environment variable keeps `%load_ext`
from importing the core).
"""

from __future__ import annotations

import contextlib
import os

SECRET_FILES_ENV = "PENGUIN_SECRET_FILES"  # = environment.secret_files.SECRET_FILES_ENV


def register_connection_file() -> None:
    """Best effort: outside a kernel nothing is registered."""
    with contextlib.suppress(Exception):
        from ipykernel.connect import get_connection_file

        path = os.path.abspath(get_connection_file())
        listed = [p for p in os.environ.get(SECRET_FILES_ENV, "").split(os.pathsep) if p]
        if path not in listed:
            os.environ[SECRET_FILES_ENV] = os.pathsep.join([*listed, path])
