"""Why a request could not even connect: the host name does not resolve, or the port refuses.

Owns `connect_failure(error, base_url)`: it reads the socket-level error that the SDK and httpx
wrap (httpcore carries the `socket.gaierror` / `ConnectionRefusedError` as an argument, anyio as
a cause or an exception-group member) — by exception type and errno, never by message words —
and says which host it was and whether waiting can fix it (docs/model-requests.md "Failures
waiting cannot fix"). Turning that into an outcome is `classify.py`'s.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

ConnectKind = Literal["dns", "dns_temporary", "refused"]

# getaddrinfo's "try again later": a resolver that did not answer, not a name that does not exist.
_TEMPORARY_DNS = frozenset(
    code for code in (getattr(socket, "EAI_AGAIN", None),) if isinstance(code, int)
)


@dataclass(frozen=True)
class ConnectFailure:
    """A connection that was never made: `kind`, the `host` (and `port`) asked for, the OS's words."""

    kind: ConnectKind
    host: str | None
    port: int | None
    reason: str

    @property
    def where(self) -> str:
        if self.host is None:
            return "the endpoint"
        return f"{self.host}:{self.port}" if self.port is not None else self.host

    @property
    def is_local(self) -> bool:
        """The host is this machine (a loopback address or `localhost`)."""
        host = (self.host or "").strip("[]").lower()
        if host == "localhost" or host.endswith(".localhost"):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    @property
    def permanent(self) -> bool:
        """Waiting cannot fix it: a name that does not exist, or a local port nobody listens on."""
        if self.kind == "dns":
            return True
        return self.kind == "refused" and self.is_local

    def describe(self) -> str:
        if self.kind == "dns":
            return (
                f"the host name {self.host or '?'} does not resolve ({self.reason}); "
                "check the base_url (or the network)"
            )
        if self.kind == "dns_temporary":
            return f"the host name {self.host or '?'} could not be resolved right now ({self.reason})"
        hint = "; is the model server running?" if self.is_local else ""
        return f"connection refused by {self.where} ({self.reason}){hint}"


def _levels(error: BaseException) -> Iterator[BaseException]:
    """`error`, its causes and contexts, exceptions carried as arguments and group members (cycle-safe)."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        level = pending.pop(0)
        if id(level) in seen:
            continue
        seen.add(id(level))
        yield level
        if level.__cause__ is not None:
            pending.append(level.__cause__)
        elif level.__context__ is not None and not level.__suppress_context__:
            pending.append(level.__context__)
        pending.extend(arg for arg in level.args if isinstance(arg, BaseException))
        if isinstance(level, BaseExceptionGroup):
            pending.extend(level.exceptions)


def _request_address(error: BaseException) -> tuple[str | None, int | None]:
    """The host and port of the request an SDK or httpx error carries (`.request.url`)."""
    for level in _levels(error):
        try:
            url = level.request.url  # type: ignore[attr-defined]
        except Exception:  # httpx raises RuntimeError when no request is attached
            continue
        host = getattr(url, "host", None)
        if isinstance(host, str) and host:
            port = getattr(url, "port", None)
            scheme = getattr(url, "scheme", "")
            return host, port if isinstance(port, int) else (443 if scheme == "https" else 80)
    return None, None


def _base_url_address(base_url: str | None) -> tuple[str | None, int | None]:
    if not base_url:
        return None, None
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return None, None
    if parts.hostname is None:
        return None, None
    return parts.hostname, port if port is not None else (443 if parts.scheme == "https" else 80)


def _reason(level: OSError) -> str:
    code = level.errno
    if isinstance(code, int) and code > 0:
        return os.strerror(code)  # "Connection refused", not anyio's "Connect call failed (…)"
    return level.strerror or str(level) or type(level).__name__


def connect_failure(error: BaseException, base_url: str | None = None) -> ConnectFailure | None:
    """The connection-level cause of `error`, or None when the request did connect (or failed otherwise)."""
    for level in _levels(error):
        kind: ConnectKind | None = None
        if isinstance(level, socket.gaierror):
            kind = "dns_temporary" if level.errno in _TEMPORARY_DNS else "dns"
        elif isinstance(level, ConnectionRefusedError) or (
            isinstance(level, OSError) and level.errno == errno.ECONNREFUSED
        ):
            kind = "refused"
        if kind is not None:
            assert isinstance(level, OSError)
            host, port = _request_address(error)
            if host is None:
                host, port = _base_url_address(base_url)
            return ConnectFailure(kind, host, port, _reason(level))
    return None
