"""Validation of `tools.mcpServers[]` entries (docs/mcp.md "Configuration").

Owns turning one open `MCPServerConfig{name, config}` into a typed `ResolvedServer`, or a
one-line reason why the entry is unusable. Connecting is left to `connection.py`; warning
and result bookkeeping to `manager.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args
from urllib.parse import urlparse

from ...interfaces import MCPServerConfig, Permission
from ..sandbox import BadHost, parse_hosts

DEFAULT_CONNECT_TIMEOUT_MS = 10_000
SERVER_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")

TransportKind = Literal["stdio", "http", "sse"]
TRANSPORTS: tuple[TransportKind, ...] = get_args(TransportKind)


class InvalidServerConfig(ValueError):
    """An entry that cannot be used; the message is the one-line reason shown to the user."""


@dataclass(frozen=True)
class ResolvedServer:
    """One usable MCP server. `permission` None means "auto" (each tool's readOnlyHint decides)."""

    name: str
    transport: TransportKind
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] | None = None
    connect_timeout_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    timeout_ms: int | None = None
    max_output_length: int | None = None
    permission: Permission | None = None
    sandbox: bool = False  # stdio: run the server in the sandbox (docs/security.md "Sandbox")
    allowed_hosts: tuple[str, ...] = ()  # stdio in the sandbox: hosts it may reach besides the project's


def guess_transport(config: Any) -> TransportKind:
    """Best-effort transport label for an entry that failed validation (results need one)."""
    if isinstance(config, dict):
        explicit = config.get("transport")
        if explicit in TRANSPORTS:
            return explicit
        if isinstance(config.get("command"), str):
            return "stdio"
        if isinstance(config.get("url"), str):
            return "http"
    return "stdio"


def resolve_server(entry: MCPServerConfig | dict[str, Any]) -> ResolvedServer:
    """Validate one entry; raises InvalidServerConfig with a one-line reason."""
    name, config = _entry_parts(entry)
    if not isinstance(name, str) or not SERVER_NAME_PATTERN.fullmatch(name):
        raise InvalidServerConfig(
            f"invalid server name {_show(name)}: use letters, digits, '_' and '-', starting with a letter or digit"
        )
    if not isinstance(config, dict):
        raise InvalidServerConfig('"config" must be a mapping')
    transport = _transport(config)
    shared = _shared_fields(config)
    if transport == "stdio":
        return ResolvedServer(name=name, transport=transport, **_stdio_fields(config), **shared)
    return ResolvedServer(name=name, transport=transport, **_remote_fields(config, transport), **shared)


def _entry_parts(entry: MCPServerConfig | dict[str, Any]) -> tuple[Any, Any]:
    if isinstance(entry, MCPServerConfig):
        return entry.name, entry.config
    if isinstance(entry, dict):
        return entry.get("name"), entry.get("config")
    return getattr(entry, "name", None), getattr(entry, "config", None)


def entry_label(entry: MCPServerConfig | dict[str, Any]) -> str:
    """The name to show in a warning about this entry, even when the name itself is bad."""
    name, _ = _entry_parts(entry)
    return name if isinstance(name, str) and name.isprintable() else _show(name)


def _show(value: Any) -> str:
    """A value in a one-line reason: a string quoted (escaped when it holds a newline or another
    unprintable character), anything else as its repr."""
    if isinstance(value, str) and value.isprintable():
        return f'"{value}"'
    return repr(value)


def _transport(config: dict[str, Any]) -> TransportKind:
    explicit = config.get("transport")
    if explicit is not None:
        if explicit not in TRANSPORTS:
            raise InvalidServerConfig(
                f'unknown transport {_show(explicit)}: expected "stdio", "http" or "sse"'
            )
        return explicit
    if isinstance(config.get("command"), str):
        return "stdio"
    if isinstance(config.get("url"), str):
        return "http"
    raise InvalidServerConfig('no transport: set "command" (stdio), "url" (http), or "transport"')


def _stdio_fields(config: dict[str, Any]) -> dict[str, Any]:
    command = config.get("command")
    if not isinstance(command, str) or not command.strip():
        raise InvalidServerConfig('the stdio transport needs a non-empty "command" string')
    args = config.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InvalidServerConfig('"args" must be a list of strings')
    cwd = config.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise InvalidServerConfig('"cwd" must be a string')
    sandbox = config.get("sandbox", False)
    if not isinstance(sandbox, bool):
        raise InvalidServerConfig('"sandbox" must be true or false')
    hosts = config.get("allowedHosts", [])
    if not isinstance(hosts, list):
        raise InvalidServerConfig('"allowedHosts" must be a list of host names')
    try:
        allowed = tuple(rule.text() for rule in parse_hosts(hosts))
    except BadHost as exc:
        raise InvalidServerConfig(f'"allowedHosts": {exc}') from None
    return {
        "command": command,
        "args": list(args),
        "env": _string_map(config, "env"),
        "cwd": cwd,
        "sandbox": sandbox,
        "allowed_hosts": allowed,
    }


def _remote_fields(config: dict[str, Any], transport: TransportKind) -> dict[str, Any]:
    url = config.get("url")
    if not isinstance(url, str) or not url:
        raise InvalidServerConfig(f'the {transport} transport needs a "url" string')
    try:
        parsed = urlparse(url)
    except ValueError as exc:
        raise InvalidServerConfig(f'"url" is not a valid URL ({exc})') from None
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise InvalidServerConfig(f'"url" must be an http:// or https:// URL, got {_show(url)}')
    return {"url": url, "headers": _string_map(config, "headers")}


def _shared_fields(config: dict[str, Any]) -> dict[str, Any]:
    connect_timeout = _positive_int(config, "connectTimeoutMs", "a positive number of milliseconds")
    permission = config.get("permission", "auto")
    if permission not in ("auto", "r", "rw"):
        raise InvalidServerConfig(f'"permission" must be "auto", "r" or "rw", got {_show(permission)}')
    return {
        "connect_timeout_ms": connect_timeout if connect_timeout is not None else DEFAULT_CONNECT_TIMEOUT_MS,
        "timeout_ms": _positive_int(config, "timeoutMs", "a positive number of milliseconds"),
        "max_output_length": _positive_int(config, "maxOutputLength", "a positive number of characters"),
        "permission": None if permission == "auto" else permission,
    }


def _string_map(config: dict[str, Any], key: str) -> dict[str, str] | None:
    value = config.get(key)
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InvalidServerConfig(f'"{key}" must be a mapping of strings to strings')
    return dict(value)


def _positive_int(config: dict[str, Any], key: str, what: str) -> int | None:
    value = config.get(key)
    if value is None:
        return None
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if bad or not (1 <= value < float("inf")):
        raise InvalidServerConfig(f'"{key}" must be {what}, got {_show(value)}')
    return int(value)
