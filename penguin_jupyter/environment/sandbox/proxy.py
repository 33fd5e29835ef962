"""The network door of a sandbox: an HTTP proxy outside it that connects only to allowed hosts.

Owns `HostProxy`: it listens on a Unix socket (bound into the sandbox, where `inner.py` bridges
127.0.0.1:3128 to it), reads one request head per connection — `CONNECT host:port` (HTTPS, any
TLS inside the tunnel) or an absolute `http://` URL — and opens the upstream connection only
when the allowlist (`hosts.py`) names the host and port. A name that resolves to a loopback or
link-local address (the machine itself, a cloud metadata endpoint) is refused unless the entry
is that literal address (or `localhost` itself). Everything else gets `403` and is remembered (`refused`), so the tool
can tell the model which host was blocked. One proxy serves one sandboxed process tree and is
closed with it; the threads are daemons. Deciding which hosts a call may reach is the approval
layer's; the sandbox's other walls are bwrap's.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import selectors
import socket
import threading
from collections import deque
from urllib.parse import urlsplit

from .hosts import HostRule, allows, is_ip_literal, normal_host

log = logging.getLogger(__name__)

HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10.0
MAX_REFUSED = 16
_DROPPED_HEADERS = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")


class HostProxy:
    """`start()` binds `socket_path`; `close()` stops accepting and ends every relay."""

    def __init__(self, rules: tuple[HostRule, ...], socket_path: str) -> None:
        self.rules = rules
        self.socket_path = socket_path
        self.refused: deque[str] = deque(maxlen=MAX_REFUSED)  # "host:port", newest last
        self._server: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False

    def start(self) -> None:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(self.socket_path)
            os.chmod(self.socket_path, 0o600)
            server.listen(64)
        except OSError:
            server.close()
            raise
        self._server = server
        threading.Thread(target=self._accept_loop, name="penguin-sandbox-proxy", daemon=True).start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            server, self._server = self._server, None
            open_sockets, self._open = list(self._open), set()
        for sock in [*([server] if server is not None else []), *open_sockets]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)

    # --- connections ---------------------------------------------------------------------------

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._open.add(sock)
            return True

    def _untrack(self, *socks: socket.socket | None) -> None:
        for sock in socks:
            if sock is None:
                continue
            with self._lock:
                self._open.discard(sock)
            with contextlib.suppress(OSError):
                sock.close()

    def _accept_loop(self) -> None:
        while True:
            server = self._server
            if server is None:
                return
            try:
                client, _ = server.accept()
            except OSError:
                return
            if not self._track(client):
                client.close()
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            head, rest = _read_head(client)
            if head is None:
                return
            request = _parse_request(head)
            if request is None:
                client.sendall(_answer(400, "penguin sandbox proxy: not a proxy request"))
                return
            method, host, port, first_bytes = request
            refusal = self._refusal(host, port)
            if refusal is not None:
                self.refused.append(f"{normal_host(host)}:{port}")
                client.sendall(_answer(403, refusal))
                return
            try:
                upstream = _connect_checked(host, port)
            except _ToThisMachine:
                self.refused.append(f"{normal_host(host)}:{port}")
                client.sendall(_answer(403, f"penguin sandbox proxy: {host} resolves to this machine"))
                return
            except OSError as exc:
                client.sendall(_answer(502, f"penguin sandbox proxy: cannot reach {host}:{port} ({exc})"))
                return
            if not self._track(upstream):
                return
            upstream.settimeout(None)
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(first_bytes)
            if rest:
                upstream.sendall(rest)
            relay(client, upstream)
        except OSError:
            pass
        finally:
            self._untrack(client, upstream)

    def _refusal(self, host: str, port: int) -> str | None:
        if allows(self.rules, host, port):
            return None
        allowed = ", ".join(rule.text() for rule in self.rules) or "none"
        return (
            f"penguin sandbox: {normal_host(host)}:{port} is not an allowed host (allowed: {allowed}); "
            "the command must ask for it (exec_command network_hosts)"
        )


class _ToThisMachine(OSError):
    """Every address of the name is a loopback or link-local one."""


def _connect_checked(host: str, port: int) -> socket.socket:
    """Connect to the first address of `host` that is not this machine or link-local (cloud
    metadata) — checked before connecting, so a rebinding name never gets a connection. An IP
    literal, or `localhost` itself, is what the allowlist named literally (a model served on this
    machine): used as it is."""
    if is_ip_literal(host) or normal_host(host) == "localhost":
        return socket.create_connection((normal_host(host), port), timeout=CONNECT_TIMEOUT_S)
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    usable = [info for info in infos if _routable(info[4][0])]
    if not usable:
        raise _ToThisMachine(host)
    error: OSError | None = None
    for family, kind, proto, _, address in usable:
        sock = socket.socket(family, kind, proto)
        sock.settimeout(CONNECT_TIMEOUT_S)
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            error = exc
            continue
        return sock
    raise error or OSError(f"cannot connect to {host}")


def _routable(address: object) -> bool:
    try:
        ip = ipaddress.ip_address(str(address).split("%")[0])
    except ValueError:
        return False
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified)


def _read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    client.settimeout(HEAD_TIMEOUT_S)
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            client.sendall(_answer(431, "penguin sandbox proxy: request head too large"))
            return None, b""
        chunk = client.recv(16384)
        if not chunk:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    client.settimeout(None)
    return head, rest


def _parse_request(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, what to send upstream first) or None for a non-proxy request."""
    try:
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ")
    except ValueError:
        return None
    if method == "CONNECT":
        host, sep, port_text = target.rpartition(":")
        if not sep or not port_text.isdigit():
            return None
        return method, host.strip("[]"), int(port_text), b""
    try:
        url = urlsplit(target)
        port = url.port or 80
    except ValueError:
        return None
    if url.scheme != "http" or not url.hostname:
        return None
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    headers = [line for line in lines[1:] if line.split(":", 1)[0].strip().lower() not in _DROPPED_HEADERS]
    first = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
    return method, url.hostname, port, first.encode("latin-1")


def _answer(status: int, text: str) -> bytes:
    reason = {
        400: "Bad Request",
        403: "Forbidden",
        431: "Request Header Fields Too Large",
        502: "Bad Gateway",
    }
    body = (text + "\n").encode("utf-8", "replace")
    head = (
        f"HTTP/1.1 {status} {reason.get(status, 'Error')}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\n"
    )
    return head.encode("latin-1") + body


def relay(a: socket.socket, b: socket.socket) -> None:
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
