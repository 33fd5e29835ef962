"""One sandboxed process tree: its bwrap argv, environment and file descriptors, and what is
left to do after it ends.

Owns `SandboxLaunch`: the seccomp filter handed over in a pipe, the info pipe read (lazily, once)
for the pid of the sandbox's init — whose process group is the command's, the target of an
interrupt or a graceful kill — the per-launch `HostProxy` when hosts are allowed, and `close()`:
the proxy stopped, the blocked hosts and any `.git/commondir` the command planted (removed)
reported as notes. Spawning and signalling stay with the caller (`commands/session.py`, an MCP
connection); what the view and namespaces are is `mounts.py` / `bwrap.py`'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import time
from collections.abc import Mapping, Sequence
from typing import Protocol

from .bwrap import bwrap_argv, sandbox_environment
from .hosts import HostRule
from .mounts import FilesystemView, remove_planted
from .proxy import HostProxy
from .seccomp import program_for

INFO_WAIT_S = 1.0


class ProcessLaunch(Protocol):
    """How a spawner runs one process in a sandbox: `SandboxLaunch` (under bwrap) or, in a
    sandboxed kernel, `KernelLaunch` (as it is: the kernel's sandbox already holds it)."""

    argv: list[str]
    env: dict[str, str]
    pass_fds: tuple[int, ...]

    def started(self) -> None: ...

    def inner_group(self, wait: bool = True) -> int | None: ...

    def close(self) -> list[str]: ...


class KernelLaunch:
    """A process started by a sandboxed kernel: it runs as it is, inside the kernel's sandbox
    (its own process group is the one to signal)."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        self.argv = list(command)
        self.env = dict(env)
        self.pass_fds: tuple[int, ...] = ()

    def started(self) -> None:
        pass

    def inner_group(self, wait: bool = True) -> int | None:
        return None

    def close(self) -> list[str]:
        return []


class SandboxLaunch:
    """Use: `Popen(launch.argv, env=launch.env, pass_fds=launch.pass_fds, start_new_session=True)`,
    then `launch.started()`; `inner_group()` for signals; `close()` once the process ended."""

    def __init__(
        self,
        *,
        bwrap: str,
        view: FilesystemView,
        command: Sequence[str],
        env: Mapping[str, str],
        cwd: str | None,
        hosts: tuple[HostRule, ...],
        proxy_socket: str | None,
        command_loads_filter: bool = False,
        through_proxy: Sequence[str] = (),
    ) -> None:
        """`command_loads_filter`: the command loads the seccomp filter itself (a sandboxed kernel,
        once its sockets are bound); `through_proxy`: loopback names that must go through the
        proxy (a model endpoint on this machine)."""
        program = program_for()
        if program is None:  # sandbox_support() said so before; never run without the filter
            raise OSError("no seccomp filter for this machine")
        self._filter_read = -1
        if not command_loads_filter:
            self._filter_read, filter_write = os.pipe()
            os.write(filter_write, program)  # a few hundred bytes: fits in the pipe at once
            os.close(filter_write)
        self._info_read, self._info_write = os.pipe()
        self._info: dict[str, object] | None = None
        self._info_buffer = b""
        self.proxy: HostProxy | None = None
        if hosts and proxy_socket is not None:
            self.proxy = HostProxy(hosts, proxy_socket)
            self.proxy.start()
        self.argv = bwrap_argv(
            bwrap,
            view,
            command,
            seccomp_fd=self._filter_read if self._filter_read >= 0 else None,
            info_fd=self._info_write,
            proxy_socket=proxy_socket if self.proxy is not None else None,
            cwd=cwd,
        )
        self.env = sandbox_environment(env, self.proxy is not None, through_proxy)
        self.pass_fds: tuple[int, ...] = tuple(fd for fd in (self._filter_read, self._info_write) if fd >= 0)
        self.hosts = hosts
        self._watch = view.must_not_appear
        self._closed = False

    def started(self) -> None:
        """The child has its copies: close ours of what only it needs."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def inner_group(self, wait: bool = True) -> int | None:
        """The process group of the sandboxed command (bwrap's init leads it), or None when
        bwrap never got that far (waiting up to `INFO_WAIT_S` for it when `wait`)."""
        if self._info is None and self._info_read >= 0:
            deadline = time.monotonic() + (INFO_WAIT_S if wait else 0.0)
            with contextlib.suppress(OSError, ValueError):  # closed meanwhile by close()
                while self._info is None:
                    timeout = max(0.0, deadline - time.monotonic())
                    if not select.select([self._info_read], [], [], timeout)[0]:
                        break
                    chunk = os.read(self._info_read, 4096)
                    if not chunk:
                        break
                    self._info_buffer += chunk
                    with contextlib.suppress(ValueError):
                        self._info = json.loads(self._info_buffer)
        pid = self._info.get("child-pid") if self._info else None
        return pid if isinstance(pid, int) and pid > 0 else None

    def close(self) -> list[str]:
        """Stop the proxy, release the pipes; the notes the command's output should end with."""
        if self._closed:
            return []
        self._closed = True
        notes = []
        if self.proxy is not None:
            self.proxy.close()
            if self.proxy.refused:
                blocked = ", ".join(dict.fromkeys(self.proxy.refused))
                notes.append(
                    f"[sandbox: blocked network access to {blocked} (not an allowed host; "
                    "ask for it with network_hosts)]"
                )
        if self._info_read >= 0:
            with contextlib.suppress(OSError):
                os.close(self._info_read)
            self._info_read = -1
        notes += remove_planted(self._watch)
        return notes
