"""Inside a session's warm sandbox: start each command the kernel sends, and let nothing it
started outlive it.

Run by bwrap as `python -I -S warm_host.py <socket fd>` (`warm.py` is the kernel's side). The
socket is a `SOCK_SEQPACKET` pair end: each message is one command — JSON `{"argv", "env",
"cwd"}` with five file descriptors (stdin, stdout, stderr, a control pipe the kernel writes
`signal N` lines to, a status pipe this side writes `pid N` and `exit N` lines to).

The host process keeps two spare *keepers* forked ahead (so no fork is on a command's path, even
for commands sent back to back): a spare waits on the socket (already a child subreaper), takes
one command, tells the host (which forks a replacement while the command runs) and spawns it (`posix_spawn`: a new session, the given
environment, folder and descriptors, default signal handling). When the command's first process
ends, the keeper kills everything left that descends from it — a `setsid` or double-forked
daemon is reparented to the keeper, not to anything older — then writes `exit N`. The host is a
subreaper too: what a killed keeper leaves behind comes to it, and it kills that. Host and
keepers are not dumpable (a command cannot ptrace them). The host exits when the kernel's end of
the socket closes, and the whole sandbox with it (bwrap's init ends the PID namespace).

Standalone on purpose (stdlib only, no package import): it starts fast inside the sandbox with a
read-only view of this file. The seccomp filter is bwrap's (`--seccomp`), inherited by all.
"""

import array
import errno
import json
import os
import select
import signal
import socket
import sys

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
MAX_REQUEST = 256 * 1024
FDS_PER_REQUEST = 5
SOCKET_CLOSED_EXIT = 3
SPARES = 2


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)  # once per process: off the command's path


def _children_of(parent: int) -> list[int]:
    """Processes (in this PID namespace) whose parent is `parent`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(name))
    return found


def _kill_descendants(skip: frozenset[int] = frozenset()) -> None:
    """SIGKILL every child of this process but `skip`, and what their deaths reparent here,
    until none is left (a subreaper inherits the orphans of what it kills)."""
    me = os.getpid()
    while True:
        if not skip and not _has_children():  # the common case: the command left nothing
            return
        victims = [pid for pid in _children_of(me) if pid not in skip]
        if not victims:
            return
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in victims:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _has_children() -> bool:
    """Whether any child is left (ended ones are reaped on the way)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _write(fd: int, text: str) -> None:
    try:
        os.write(fd, text.encode())
    except OSError:
        pass


# --- the keeper: one command ------------------------------------------------------------------


def _spawn(request: dict, fds: list[int], status: int) -> int:
    argv, env, cwd = request["argv"], request["env"], request["cwd"]
    if cwd:
        os.chdir(cwd)
    default = set(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}
    return os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[(os.POSIX_SPAWN_DUP2, fds[0], 0), (os.POSIX_SPAWN_DUP2, fds[1], 1), (os.POSIX_SPAWN_DUP2, fds[2], 2)],
        setsid=True,
        setsigdef=default,
        setsigmask=(),
    )


def _keep(request: dict, fds: list[int]) -> None:
    """Run one command to its end and clean up after it; never returns."""
    control, status = fds[3], fds[4]
    try:
        pid = _spawn(request, fds, status)
    except (OSError, KeyError, TypeError, ValueError) as exc:
        _write(fds[2], f"penguin sandbox: cannot run the command ({exc})\n")
        _write(status, "exit 127\n")
        os._exit(0)
    for fd in fds[:3]:
        os.close(fd)
    _write(status, f"pid {pid}\n")
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(control, select.POLLIN)
    buffered = b""
    control_open = True
    while True:
        ready = {fd for fd, _ in poller.poll()}
        if pidfd in ready:
            break
        if control in ready and control_open:
            chunk = os.read(control, 4096)
            if not chunk:  # the kernel let go of the command: end it
                control_open = False
                poller.unregister(control)
                _signal_group(pid, signal.SIGKILL)
                continue
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            for line in lines:
                word, _, number = line.partition(b" ")
                if word == b"signal" and number.isdigit():
                    _signal_group(pid, int(number))
    _, wait_status = os.waitpid(pid, 0)
    _kill_descendants()
    _write(status, f"exit {os.waitstatus_to_exitcode(wait_status)}\n")
    os._exit(0)


def _signal_group(pid: int, number: int) -> None:
    try:
        os.killpg(pid, number)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _wait_for_command(sock: socket.socket, taken: int) -> None:
    """The spare keeper: take the next command off the socket; never returns."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)  # before the command arrives: nothing but the spawn on its path
    while True:
        try:
            message, ancillary, _, _ = sock.recvmsg(
                MAX_REQUEST, socket.CMSG_SPACE(FDS_PER_REQUEST * 4), socket.MSG_CMSG_CLOEXEC
            )
        except InterruptedError:
            continue
        except OSError:
            os._exit(SOCKET_CLOSED_EXIT)
        fds = array.array("i")
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        if not message:
            os._exit(SOCKET_CLOSED_EXIT)
        try:
            request = json.loads(message)
        except ValueError:
            request = None
        if not isinstance(request, dict) or len(fds) != FDS_PER_REQUEST:
            for fd in fds:
                os.close(fd)
            continue
        _write(taken, f"{os.getpid()}\n")
        os.close(taken)
        sock.close()
        _keep(request, list(fds))


# --- the host ---------------------------------------------------------------------------------


class _Host:
    """The sandbox's first process: `SPARES` keepers waiting for commands (one taken is
    replaced at once, so the next command never waits for a fork), orphans killed."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.taken_read, self.taken_write = os.pipe()
        os.set_blocking(self.taken_read, False)
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_write, warn_on_full_buffer=False)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for a command's group only
        self.busy: set[int] = set()  # keepers running a command
        self.spares: set[int] = set()  # keepers waiting for one

    def fork_spares(self) -> None:
        while len(self.spares) < SPARES:
            pid = os.fork()
            if pid == 0:
                for fd in (self.taken_read, self.wake_read, self.wake_write):
                    os.close(fd)
                _wait_for_command(self.sock, self.taken_write)
            self.spares.add(pid)

    def take(self) -> None:
        """Each spare that took a command said so (its pid) before its command could end: read
        that before reaping, so a keeper that already ended is never taken for a killed spare."""
        said = b""
        while True:
            try:
                chunk = os.read(self.taken_read, 4096)
            except BlockingIOError:
                break
            if not chunk:
                break
            said += chunk
        for word in said.split():
            pid = int(word) if word.isdigit() else 0
            if pid in self.spares:
                self.spares.discard(pid)
                self.busy.add(pid)

    def reap(self) -> None:
        keeper_ended = False
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in self.spares:
                if os.waitstatus_to_exitcode(wait_status) == SOCKET_CLOSED_EXIT:
                    os._exit(0)  # the kernel closed the socket
                self.spares.discard(pid)  # killed while waiting: another one waits instead
            elif pid in self.busy:
                self.busy.discard(pid)
                keeper_ended = True
        if keeper_ended:  # what a killed keeper left behind was reparented here
            _kill_descendants(skip=frozenset(self.busy | self.spares))

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.taken_read, select.POLLIN)
        poller.register(self.wake_read, select.POLLIN)
        poller.register(self.sock, select.POLLRDHUP)
        self.sock.send(b'{"ready": true}')
        self.fork_spares()
        hangup = select.POLLRDHUP | select.POLLHUP | select.POLLERR
        while True:
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            for fd, mask in events:
                if fd == self.sock.fileno() and mask & hangup:
                    os._exit(0)  # the kernel is gone: bwrap's init ends everything with this process
                if fd == self.wake_read:
                    try:
                        os.read(self.wake_read, 4096)
                    except BlockingIOError:
                        pass
            self.take()
            self.reap()
            self.fork_spares()


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    sock.set_inheritable(False)
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _Host(sock).run()

if __name__ == "__main__":
    try:
        main()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            os.write(2, f"penguin sandbox: the warm sandbox failed ({exc})\n".encode("utf-8", "replace"))
        sys.exit(1)
