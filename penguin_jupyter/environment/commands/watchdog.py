"""The owner watchdog: kills every command an owner process started once that owner is gone.

Run by `owner_marker.ensure_watchdog` as `python -I -S watchdog.py <marker prefix> <grace s>`
in its own session, with stdin the read end of a pipe only the owner holds. It waits for EOF
(the owner exited or was killed, even by SIGKILL), then SIGTERMs every process whose
`PENGUIN_OWNER` starts with the prefix, SIGKILLs what is left after the grace, rescans until
none remain, and exits. Standalone on purpose (stdlib only, no package import) so it starts
fast and cannot fail on the owner's environment. Linux `/proc` only.
"""

import os
import signal
import sys
import time


def marked(needle: bytes) -> list[int]:
    own = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == own:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                environ = fh.read()
        except OSError:
            continue
        if needle in environ and any(item.startswith(needle) for item in environ.split(b"\0")):
            found.append(int(name))
    return found


def send(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def reap(needle: bytes, grace_s: float) -> None:
    pids = marked(needle)
    if not pids:
        return
    send(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while pids and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = marked(needle)
        send(pids, signal.SIGTERM)
    quiet_scans = 0
    while quiet_scans < 2:
        pids = marked(needle)
        if pids:
            quiet_scans = 0
            send(pids, signal.SIGKILL)
        else:
            quiet_scans += 1
        time.sleep(0.05)


def main() -> None:
    prefix, grace_s = sys.argv[1], float(sys.argv[2])
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # a terminal or kernel interrupt is not the owner's death
    stdin = sys.stdin.buffer
    try:
        while stdin.read(4096):
            pass
    except OSError:
        pass
    reap(f"PENGUIN_OWNER={prefix}".encode(), grace_s)


if __name__ == "__main__":
    main()
