"""Finding and killing every process a command started, by a marker it cannot shed by accident.

Owns the owner marker: every command child gets `PENGUIN_OWNER=<process token>-<manager
token>` in its environment, and everything it starts inherits it (including what `setsid`s,
double-forks or daemonizes). `marked_pids` finds those processes by scanning
`/proc/<pid>/environ` (Linux; elsewhere it finds nothing and only process-group kills apply),
`reap_marked` kills them (SIGTERM, a grace, then SIGKILL, rescanning for late forks), and
`ensure_watchdog` starts, once per owner process and lazily at its first command, the
`watchdog.py` process that reaps them all when the owner dies however it dies. The command
registry (`manager.py`) decides when to call these. Design notes: docs/concurrency.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

OWNER_ENV_VAR = "PENGUIN_OWNER"
PROCESS_TOKEN = secrets.token_hex(8)  # this owner process; every manager's token starts with it
REAP_GRACE_S = 1.0
_PROC = Path("/proc")
_WATCHDOG_SCRIPT = Path(__file__).with_name("watchdog.py")

_watchdog_lock = threading.Lock()
_watchdog: subprocess.Popen[bytes] | None = None


def new_owner_token() -> str:
    """A marker value for one command registry, under this process's prefix."""
    return f"{PROCESS_TOKEN}-{secrets.token_hex(4)}"


def process_prefix() -> str:
    """What every marker of this process starts with (the watchdog's target)."""
    return f"{PROCESS_TOKEN}-"


def can_scan() -> bool:
    return _PROC.is_dir() and (_PROC / "self" / "environ").exists()


def marked_pids(token: str, *, prefix: bool = False) -> list[int]:
    """Pids (never this process) whose environment carries `PENGUIN_OWNER=<token>` (or a value
    starting with `token` when `prefix`)."""
    if not can_scan():
        return []
    needle = f"{OWNER_ENV_VAR}={token}".encode()
    own = os.getpid()
    found: list[int] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if not entry.name.isdigit() or int(entry.name) == own:
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as fh:
                    environ = fh.read()
            except OSError:  # gone, or not ours to read
                continue
            if needle not in environ:
                continue
            for item in environ.split(b"\0"):
                if item == needle or (prefix and item.startswith(needle)):
                    found.append(int(entry.name))
                    break
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def reap_marked(token: str, *, prefix: bool = False, grace_s: float = REAP_GRACE_S) -> int:
    """Kill every process carrying the marker: SIGTERM, up to `grace_s` to exit, then SIGKILL,
    rescanning until none is left (a process forked meanwhile is found on the next scan).
    Returns how many distinct processes were signalled. Blocking; callers run it off the loop."""
    signalled: set[int] = set()
    pids = marked_pids(token, prefix=prefix)
    if not pids:
        return 0
    signalled.update(pids)
    _signal_all(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = marked_pids(token, prefix=prefix)
        fresh = [p for p in pids if p not in signalled]
        signalled.update(fresh)
        _signal_all(fresh, signal.SIGTERM)
    for _ in range(20):
        pids = marked_pids(token, prefix=prefix)
        if not pids:
            break
        signalled.update(pids)
        _signal_all(pids, signal.SIGKILL)
        time.sleep(0.02)
    return len(signalled)


def ensure_watchdog() -> None:
    """Start this process's watchdog once (at the first command): it holds the read end of a
    pipe whose write end only this process has, and reaps every marked process on EOF."""
    global _watchdog
    if _watchdog is not None or not can_scan():
        return
    with _watchdog_lock:
        if _watchdog is not None:
            return
        env = {k: v for k, v in os.environ.items() if k != OWNER_ENV_VAR}
        try:
            _watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_WATCHDOG_SCRIPT), process_prefix(), str(REAP_GRACE_S)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # outside the owner's group: a group kill spares it
                close_fds=True,
            )
        except OSError as exc:  # still usable without it: dispose and exit hooks reap
            log.warning("[penguin] process watchdog not started: %s", exc)


def _forget_watchdog_in_child() -> None:
    """A fork of the owner must not keep the watchdog's pipe open (its EOF means owner death), and
    is an owner of its own: a new process token, so that its watchdog and its exit reap only what
    it started, never the parent's commands (which carry the parent's token)."""
    global _watchdog, PROCESS_TOKEN
    PROCESS_TOKEN = secrets.token_hex(8)
    watchdog = _watchdog
    if watchdog is not None and watchdog.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            watchdog.stdin.close()  # through the file object, so no later close hits a reused fd
    _watchdog = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watchdog_in_child)
