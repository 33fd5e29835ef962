"""The environment this process was started with, which code running in it cannot change.

Owns `start_environment_value(name)`: on Linux read from `/proc/self/environ` (what the process
was started with; `os.environ` changes never reach it), None where that cannot be read (the
caller then falls back to `os.environ`, read as early as it can). Settings a kernel's own code
must not redirect — where the administrator's policy is (`state/admin_policy.py`), which
bubblewrap the sandbox runs (`environment/sandbox/support.py`) — are read through it. A leaf:
it imports nothing of the package.
"""

from __future__ import annotations

import os


def start_environment_value(name: str) -> str | None:
    """`name` in the environment this process was started with ("" when it was not set), or None
    when that environment cannot be read."""
    try:
        with open("/proc/self/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    prefix = os.fsencode(name) + b"="
    for entry in raw.split(b"\0"):
        if entry.startswith(prefix):
            return os.fsdecode(entry[len(prefix) :])
    return ""
