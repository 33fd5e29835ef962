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
from collections.abc import Sequence
from typing import IO, Protocol

from ..sandbox.launch import ProcessLaunch


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
        return self._proc.wait()

    def signal_command(self, sig: int, wait: bool, ended: bool) -> None:
        if ended and self.launch is not None:
            return  # bwrap ended, and everything in its sandbox with it
        group = self.launch.inner_group(wait) if self.launch is not None else None
        self._signal(group if group is not None else self.pid, sig)

    def kill_everything(self) -> None:
        """The child's group: under bwrap, bwrap's — whose end ends the whole sandbox."""
        self._signal(self.pid, signal.SIGKILL)

    def _signal(self, group: int, sig: int) -> None:
        """`sig` to `group`, unless the group may be someone else's by now: once our child is
        reaped its number is free, and only members left in the group keep a new process from
        taking it (a shell's background children: they get the signal)."""
        if group == self.pid and self._proc.returncode is not None and not group_has_members(group):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sig)

    def close(self) -> list[str]:
        return self.launch.close() if self.launch is not None else []


def group_has_members(group: int) -> bool:
    """Whether any process is in process group `group` (Linux /proc; elsewhere: assume so)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(group).encode():
            return True
    return False
