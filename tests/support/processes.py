"""Looking at processes from a test: which are alive, by how their command line starts, and
waiting (bounded) for a condition — what the process-reaping, sandbox and MCP tests share."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable


def alive(command: str, *, containing: str = "") -> list[str]:
    """`ps` lines (pid, state, full command line) of the live processes whose command line starts
    with `command` and holds `containing` (zombies left out)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines()[1:]:
        _pid, state, *args = line.split(None, 2)
        text = args[0] if args else ""
        if text.startswith(command) and containing in text and not state.startswith("Z"):
            found.append(line)
    return found


def wait_until(predicate: Callable[[], object], timeout_s: float = 30.0, every_s: float = 0.05) -> bool:
    """Poll `predicate` until it is true or `timeout_s` passed; its last answer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every_s)
    return bool(predicate())
