"""Names the running kernel's connection file (it holds the kernel's signing key) as a credential
file, so a `read_file` of it (or of a hard link or symlink to it) is never approved automatically.

Owns finding the file through ipykernel and publishing it as `$PENGUIN_KERNEL_CONNECTION_FILE`
(read by `environment/secret_files.py`, which does the check; an environment variable keeps
`%load_ext` from importing the core).
"""

from __future__ import annotations

import contextlib
import os

KERNEL_CONNECTION_FILE_ENV = "PENGUIN_KERNEL_CONNECTION_FILE"  # = environment.secret_files'


def register_connection_file() -> None:
    """Best effort: outside a kernel nothing is registered."""
    with contextlib.suppress(Exception):
        from ipykernel.connect import get_connection_file

        os.environ[KERNEL_CONNECTION_FILE_ENV] = os.path.abspath(get_connection_file())
