"""A session's warm sandbox: one bwrap that the session's commands start inside, instead of one
bwrap per command (docs/security.md "Sandbox"; the figures: the sandbox's cost in benchmarks/README.md).

Owns `WarmSandbox` — the bwrap process running `warm_host.py` (the same view, namespaces and
seccomp filter a per-command sandbox gets), the socket it takes commands on, whether it still
matches the view a command would get now — and `WarmChild`, one command in it, shaped like
`commands/child.py`'s `CommandChild`: pipes made here and handed in, `pid`/`exit` lines read
back, `signal N` lines to its keeper. A command without network hosts runs here; one with
hosts still gets its own bwrap (its proxy and notes are per command). Which view a command
needs is `mounts.py`'s; when the view changes (a credential file appeared, `git init` made a
`.git`) the owner (`command_sandbox.py`) retires this sandbox — it ends once its last command
has — and starts another.

The bwrap is started from one long-lived thread of this process (`_starter`): bwrap's
`--die-with-parent` follows the thread that started it, and a cell's thread ends long before
the session does.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, TypeVar

from .bwrap import bwrap_argv, sandbox_environment
from .mounts import FilesystemView, remove_planted
from .seccomp import program_for

WARM_HOST = str(Path(__file__).with_name("warm_host.py"))
READY_WAIT_S = 10.0
MAX_REQUEST = 192 * 1024  # below warm_host's read size and the socket's buffer
_T = TypeVar("_T")


class WarmSandboxError(OSError):
    """The warm sandbox could not start or take a command (the caller falls back to a
    per-command bwrap, which reports its own error)."""


class WarmSandbox:
    def __init__(self, bwrap: str, view: FilesystemView, host_env: Mapping[str, str]) -> None:
        """Start the sandbox and wait (up to `READY_WAIT_S`) until it takes commands; raises
        WarmSandboxError with bwrap's own words when it does not."""
        program = program_for()
        if program is None:
            raise WarmSandboxError("no seccomp filter for this machine")
        self.view = view
        self._lock = threading.Lock()
        self._running = 0
        self._retired = False
        self._closed = False
        filter_read, filter_write = os.pipe()
        os.write(filter_write, program)
        os.close(filter_write)
        self._socket, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        host = [sys.executable, "-I", "-S", WARM_HOST, str(inside.fileno())]
        argv = bwrap_argv(bwrap, view, host, seccomp_fd=filter_read)
        try:
            self._process = _on_lasting_thread(
                lambda: subprocess.Popen(
                    argv,
                    env=dict(host_env),
                    pass_fds=(inside.fileno(), filter_read),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                )
            )
        except OSError as exc:
            self._socket.close()
            raise WarmSandboxError(f"bwrap did not start ({exc})") from exc
        finally:
            inside.close()
            os.close(filter_read)
        self._socket.settimeout(READY_WAIT_S)
        try:
            ready = self._socket.recv(256)
        except OSError:
            ready = b""
        self._socket.settimeout(None)
        if b'"ready"' not in ready:
            self.close()
            raise WarmSandboxError(self._startup_error())

    def _startup_error(self) -> str:
        stderr = self._process.stderr
        text = b""
        if stderr is not None:
            with contextlib.suppress(OSError, ValueError):
                os.set_blocking(stderr.fileno(), False)
                text = stderr.read(4096) or b""
        line = text.decode("utf-8", "replace").strip().splitlines()
        return line[-1] if line else "the warm sandbox did not start"

    @property
    def usable(self) -> bool:
        """Takes new commands: not retired, not closed, its process alive."""
        with self._lock:
            return not (self._retired or self._closed) and self._process.poll() is None

    def start(self, argv: Sequence[str], cwd: str | None, env: Mapping[str, str]) -> WarmChild:
        """Start `argv` inside; raises WarmSandboxError when the sandbox cannot take it. What the
        command must not create is its view's (`must_not_appear`): a sandbox runs only commands
        whose view is its own."""
        environment = sandbox_environment(env, has_hosts=False)
        request = json.dumps({"argv": list(argv), "env": environment, "cwd": cwd or ""}).encode()
        if len(request) > MAX_REQUEST:
            raise WarmSandboxError("the command is too large for the warm sandbox")
        if not self.usable:
            raise WarmSandboxError("the warm sandbox is not running")
        with self._lock:
            self._running += 1
        try:
            return WarmChild(self, request)
        except BaseException:
            self.release()
            raise

    def send(self, request: bytes, fds: Sequence[int]) -> None:
        try:
            self._socket.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        except OSError as exc:
            raise WarmSandboxError(f"the warm sandbox is gone ({exc})") from exc

    def release(self) -> None:
        """One command ended; a retired sandbox closes with its last."""
        with self._lock:
            self._running -= 1
            last = self._retired and self._running <= 0
        if last:
            self.close()

    def retire(self) -> None:
        """No new commands; end once the running ones have."""
        with self._lock:
            self._retired = True
            idle = self._running <= 0
        if idle:
            self.close()

    def close(self) -> None:
        """End the sandbox and everything in it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError):
                self._socket.close()
            if self._process.poll() is None:  # not reaped: the number is still bwrap's
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self._process.pid, signal.SIGKILL)
        threading.Thread(target=self._reap, daemon=True).start()

    def _reap(self) -> None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self._process.wait(timeout=10)
        if self._process.stderr is not None:
            with contextlib.suppress(OSError):
                self._process.stderr.close()


class WarmChild:
    """One command in a warm sandbox. Its keeper (inside) holds the other ends of the pipes."""

    def __init__(self, sandbox: WarmSandbox, request: bytes) -> None:
        self._sandbox = sandbox
        self._returncode: int | None = None
        self._released = False
        self._control_lock = threading.Lock()
        pipes = [os.pipe() for _ in range(5)]  # stdin, stdout, stderr, control, status
        (stdin_r, stdin_w), (out_r, out_w), (err_r, err_w), (ctl_r, ctl_w), (st_r, st_w) = pipes
        inside = (stdin_r, out_w, err_w, ctl_r, st_w)
        try:
            sandbox.send(request, inside)
        except BaseException:
            for fd in (*inside, stdin_w, out_r, err_r, ctl_w, st_r):
                os.close(fd)
            raise
        for fd in inside:
            os.close(fd)
        self.pid = -1  # inside the sandbox's PID namespace, once its keeper says
        self.stdin: IO[bytes] | None = open(stdin_w, "wb", buffering=0)  # noqa: SIM115 (the session closes it)
        self.stdout: IO[bytes] | None = open(out_r, "rb", buffering=0)  # noqa: SIM115
        self.stderr: IO[bytes] | None = open(err_r, "rb", buffering=0)  # noqa: SIM115
        self._control = ctl_w
        self._status = st_r

    def wait(self) -> int:
        """Read the keeper's lines until `exit N`; a keeper that ended without one was killed:
        the command ended by SIGKILL."""
        if self._returncode is not None:
            return self._returncode
        buffered = b""
        code = -signal.SIGKILL
        while True:
            try:
                chunk = os.read(self._status, 4096)
            except OSError:
                break
            if not chunk:
                break
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            for line in lines:
                word, _, number = line.partition(b" ")
                value = number.decode("ascii", "replace")
                if word == b"pid" and value.isdigit():
                    self.pid = int(value)
                elif word == b"exit" and value.lstrip("-").isdigit():
                    code = int(value)
                    self._returncode = code
                    return code
        self._returncode = code
        return code

    def signal_command(self, sig: int, wait: bool, ended: bool) -> None:
        """`sig` to the command's process group, by its keeper (which also ends everything left
        once the command's first process ended: nothing to do then). Never after `close()`: the
        control pipe's number may be another file's by then (a kill's timer fires a second later)."""
        if ended or self._returncode is not None:
            return
        with self._control_lock:
            if self._control >= 0:
                with contextlib.suppress(OSError):
                    os.write(self._control, f"signal {int(sig)}\n".encode())

    def kill_everything(self) -> None:
        self.signal_command(signal.SIGKILL, wait=False, ended=False)

    def close(self) -> list[str]:
        with self._control_lock:
            if self._released:
                return []
            self._released = True
            control, self._control = self._control, -1
        for fd in (control, self._status):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._sandbox.release()
        return remove_planted(self._sandbox.view.must_not_appear)


# --- one long-lived thread starts every warm sandbox ---------------------------------------

_starter_lock = threading.Lock()
_starter_jobs: queue.SimpleQueue[tuple[Callable[[], object], Future[object]]] | None = None


def _forget_starter() -> None:
    """A forked child has none of its parent's threads (and maybe a lock one of them held): it
    starts its own starter."""
    global _starter_jobs, _starter_lock
    _starter_jobs = None
    _starter_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_starter)


def _on_lasting_thread(job: Callable[[], _T]) -> _T:
    """Run `job` on this process's starter thread (started once, lives as long as the process)."""
    global _starter_jobs
    with _starter_lock:
        if _starter_jobs is None:
            _starter_jobs = queue.SimpleQueue()
            threading.Thread(target=_starter, args=(_starter_jobs,), name="penguin-sandbox-starter", daemon=True).start()
        jobs = _starter_jobs
    done: Future[object] = Future()
    jobs.put((job, done))
    return done.result()  # type: ignore[return-value]


def _starter(jobs: queue.SimpleQueue[tuple[Callable[[], object], Future[object]]]) -> None:
    while True:
        job, done = jobs.get()
        try:
            done.set_result(job())
        except BaseException as exc:  # handed to the caller, which raises it
            done.set_exception(exc)
