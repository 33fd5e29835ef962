"""Inside a sandbox that may reach allowed hosts: bridge 127.0.0.1:3128 to the proxy, then run.

Run by bwrap as `python -I -S inner.py <proxy socket> <filter fd> <command…>` when a sandboxed
command has network hosts (`-` for the filter fd: the command loads the filter itself, as a
sandboxed kernel does once its sockets are bound) (without them no bridge is needed and bwrap loads the filter itself).
It listens on 127.0.0.1:3128 in the sandbox's own network namespace (the only address there),
forks the bridge — which detaches (a double fork: the command is never its ancestor), makes
itself non-dumpable (nothing in the sandbox can ptrace it into opening sockets) and forwards
each connection to the proxy's Unix socket — then loads the seccomp filter (`seccomp.py`: no new
Unix sockets) on itself and execs the command. Standalone on purpose (stdlib only, no package
import): it starts fast, inside the sandbox, with a read-only view of this file. The bridge dies
with the sandbox (bwrap's init is killed when the command's tree ends).
"""

import contextlib
import ctypes
import os
import selectors
import signal
import socket
import sys
import threading

PORT = 3128
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _fail(text: str) -> None:
    os.write(2, f"penguin sandbox: {text}\n".encode("utf-8", "replace"))  # the command's stderr
    sys.exit(126)


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until both sides are done (a half-close is passed on)."""
    open_reads = 2
    with selectors.DefaultSelector() as selector:
        selector.register(a, selectors.EVENT_READ, (a, b))
        selector.register(b, selectors.EVENT_READ, (b, a))
        while open_reads:
            for key, _ in selector.select():
                source, peer = key.data
                try:
                    data = source.recv(65536)
                    if data:
                        peer.sendall(data)
                        continue
                except OSError:
                    return
                selector.unregister(source)
                open_reads -= 1
                with contextlib.suppress(OSError):
                    peer.shutdown(socket.SHUT_WR)


def _forward(client: socket.socket, proxy_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(proxy_path)
        _relay(client, upstream)
    except OSError:
        pass
    finally:
        client.close()
        upstream.close()


def _bridge(listener: socket.socket, proxy_path: str, libc: ctypes.CDLL) -> None:
    if os.fork() != 0:  # the middle process exits: the bridge is reparented to the sandbox's init
        sys.exit(0)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt of the command's group is not for it
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # never hold the command's pipes open
        os.dup2(devnull, fd)
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            sys.exit(0)
        threading.Thread(target=_forward, args=(client, proxy_path), daemon=True).start()


def _load_filter(libc: ctypes.CDLL, program: bytes) -> None:
    if not program or len(program) % 8:
        _fail("no seccomp filter to load")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("cannot set no_new_privs")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        _fail(f"cannot load the seccomp filter ({os.strerror(ctypes.get_errno())})")


def main() -> None:
    if len(sys.argv) < 4:
        _fail("usage: inner.py <proxy socket> <filter fd> <command…>")
    proxy_path, filter_arg, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    program = _read_all(int(filter_arg)) if filter_arg != "-" else b""
    libc = ctypes.CDLL(None, use_errno=True)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", PORT))
        listener.listen(64)
    except OSError as exc:
        _fail(f"cannot listen on 127.0.0.1:{PORT} ({exc})")
    child = os.fork()
    if child == 0:
        _bridge(listener, proxy_path, libc)
    os.waitpid(child, 0)
    listener.close()
    if filter_arg != "-":
        _load_filter(libc, program)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        _fail(f"cannot run {command[0]} ({exc})")


if __name__ == "__main__":
    main()
