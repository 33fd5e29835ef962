"""The process behind one command session, and how to signal it.

Owns `CommandChild` (what `session.py` reads of a started command: its pipes, its exit, how to
interrupt it and how to end everything it started) and `PopenChild`, a command started here with
`subprocess.Popen` in its own session — as it is, or under a per-command bwrap (`launch`, whose
init's process group is the command's). A command in a session's warm sandbox is
`sandbox/warm.py`'s `WarmChild`, the same shape. What to start and where is the registry's
(`manager.py`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import IO, Protocol

from ..sandbox.launch import ProcessLaunch
from .owner_marker import OWNER_ENV_VAR, marked_pids

# How long after a reap a process number surely still names our group (the kernel hands numbers
# out in order, and the range goes round in minutes at the busiest).
NUMBER_KEPT_S = 5.0


class CommandChild(Protocol):
    pid: int
    stdin: IO[bytes] | None
    stdout: IO[bytes] | None
    stderr: IO[bytes] | None

    def wait(self) -> int:
        """Block until the command ended: its exit code, or minus the signal that ended it."""
        ...

    def signal_command(self, sig: int, wait: bool, ended: bool) -> None:
        """`sig` to the command's own process group (an interrupt, a kill's first SIGTERM);
        `wait`: a moment for a just-started sandbox to say where that group is; `ended`: the
        command's first process is gone (what it left in its group may still get it)."""
        ...

    def kill_everything(self) -> None:
        """SIGKILL the command and everything it started."""
        ...

    def close(self) -> list[str]:
        """Once it ended: release what it held; the sandbox's notes for its output."""
        ...


class PopenChild:
    def __init__(self, argv: Sequence[str], cwd: str, env: dict[str, str], launch: ProcessLaunch | None) -> None:
        self.launch = launch
        self._marker = env.get(OWNER_ENV_VAR)
        self._reaped_at: float | None = None
        try:
            self._proc = subprocess.Popen(
                launch.argv if launch is not None else list(argv),
                cwd=cwd,
                env=launch.env if launch is not None else env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                bufsize=0,
                pass_fds=launch.pass_fds if launch is not None else (),
            )
        except BaseException:
            if launch is not None:
                launch.started()
                launch.close()
            raise
        if launch is not None:
            launch.started()
        self.pid = self._proc.pid
        self.stdin = self._proc.stdin
        self.stdout = self._proc.stdout
        self.stderr = self._proc.stderr

    def wait(self) -> int:
        code = self._proc.wait()
        self._reaped_at = time.monotonic()
        return code

    def signal_command(self, sig: int, wait: bool, ended: bool) -> None:
        if ended and self.launch is not None:
            return  # bwrap ended, and everything in its sandbox with it
        group = self.launch.inner_group(wait) if self.launch is not None else None
        self._signal(group if group is not None else self.pid, sig)

    def kill_everything(self) -> None:
        """The child's group: under bwrap, bwrap's — whose end ends the whole sandbox."""
        self._signal(self.pid, signal.SIGKILL)

    def _signal(self, group: int, sig: int) -> None:
        """`sig` to `group`. Once our child is reaped its number is free again: while the group
        has members (a shell's background children) nobody can take it, but once they are gone a
        new process may — and a kernel or another sandbox leads its own group. Numbers come back
        only after the whole range went round, so right after the reap (a command's own
        clean-up, the kill's grace) the group is still ours; later, only this command's own
        processes (its owner marker) still in that group get the signal."""
        reaped = self._reaped_at
        if group != self.pid or reaped is None or time.monotonic() - reaped < NUMBER_KEPT_S:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, sig)
            return
        if self._marker is None:
            return
        for pid in marked_pids(self._marker):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(pid) == group:
                    os.kill(pid, sig)

    def close(self) -> list[str]:
        return self.launch.close() if self.launch is not None else []
