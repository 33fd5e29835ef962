"""McpManager: the configured MCP servers of one Environment (docs/mcp.md "Lifecycle").

Owns the lazy, single-flight connect of every server in parallel, per-server outcomes
(`McpServerResult`), tool registration in config order, permissions, abort mid-connect and
closing. It never raises for a server's problem: bad entries and failed servers are warned
about on stderr and skipped. Dispatching calls and the close-out belong to the Environment;
the session streams `mcp_connect_begin`/`mcp_connect_end` from `server_names` and the results.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from ...interfaces import AbortSignal, MCPServerConfig, Permission, unless_aborted
from ...omni import McpServerResult, McpStatus
from ..sandbox import CommandSandbox
from .config import (
    InvalidServerConfig,
    ResolvedServer,
    TransportKind,
    entry_label,
    guess_transport,
    resolve_server,
)
from .connection import ConnectCancelled, McpConnection, describe_error
from .tools import MCP_TOOL_PREFIX, TOOL_NAME_PATTERN, McpTool

log = logging.getLogger(__name__)

WarnFn = Callable[[str], None]


def log_warning(message: str) -> None:
    """The default WarnFn: one `[penguin] …` warning line through this module's logger."""
    log.warning("[penguin] %s", message)


@dataclass
class _Rejected:
    label: str
    transport: TransportKind
    reason: str


class McpManager:
    """`await connect(signal)` once (idempotent), then read `tools`; `await aclose()` at the end."""

    def __init__(
        self,
        servers: Sequence[MCPServerConfig | dict[str, Any]],
        *,
        workspace_dir: str,
        vault: dict[str, str] | None = None,
        warn: WarnFn | None = None,
        disabled: frozenset[str] = frozenset(),
        sandbox: CommandSandbox | None = None,
    ) -> None:
        # `vault` is accepted so callers can pass their Environment config through, and is
        # deliberately never used: MCP server processes do not receive vault variables.
        del vault
        self._workspace_dir = workspace_dir
        self._sandbox = sandbox  # stdio servers run in it when their entry (or the policy) says so
        self._warn = warn or log_warning
        self._disabled = disabled  # the administrator's `disabled_tools`: registered, never counted as offered
        self._entries: list[ResolvedServer | _Rejected] = []
        seen: set[str] = set()
        for entry in servers:
            try:
                resolved = resolve_server(entry)
            except InvalidServerConfig as exc:
                self._entries.append(_Rejected(entry_label(entry), _guess(entry), str(exc)))
                continue
            if resolved.name in seen:
                self._entries.append(_Rejected(resolved.name, resolved.transport, "duplicate server name"))
                continue
            seen.add(resolved.name)
            self._entries.append(resolved)
        self._attempt: asyncio.Task[list[McpServerResult]] | None = None
        self._attempt_connections: list[McpConnection] = []
        self._waiters = 0
        self._connections: list[McpConnection] = []
        self._results: list[McpServerResult] = []
        self._tools: dict[str, McpTool] = {}
        self._connected = False
        self._closed = False
        self._warned_config = False

    # --- what the Environment and the session read ------------------------------------------

    @property
    def server_names(self) -> list[str]:
        """Names of the validly configured servers, in config order (`mcp_connect_begin`)."""
        return [e.name for e in self._entries if isinstance(e, ResolvedServer)]

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def results(self) -> list[McpServerResult]:
        """Per-entry outcomes of the last finished connect attempt (empty before one)."""
        return list(self._results)

    @property
    def tools(self) -> list[McpTool]:
        """Registered MCP tools in config order (empty before connect)."""
        return list(self._tools.values())

    def get_tool(self, name: str) -> McpTool | None:
        return self._tools.get(name) if name.startswith(MCP_TOOL_PREFIX) else None

    def tool_permission(self, name: str) -> Permission | None:
        tool = self.get_tool(name)
        return tool.definition.permission if tool is not None else None

    # --- lifecycle ---------------------------------------------------------------------------

    async def connect(self, signal: AbortSignal | None = None) -> list[McpServerResult]:
        """Connect every server in parallel (first call only) and return the outcomes.

        Concurrent callers share one attempt. If `signal` aborts first, every connection of
        the attempt is closed, nothing is registered, the outcomes read "aborted", and the
        next call starts afresh.
        """
        if self._connected or self._closed:
            return list(self._results)
        if self._attempt is None:
            if signal is not None and signal.aborted:
                return self._aborted_results()
            self._warn_config_once()
            self._attempt = asyncio.create_task(self._connect_all(), name="mcp-connect")
        attempt = self._attempt
        self._waiters += 1
        try:
            if signal is None:
                return list(await asyncio.shield(attempt))
            # the attempt is shared: only the shield is cancelled if the signal wins
            with suppress(Exception):
                await unless_aborted(asyncio.shield(attempt), signal)
            if not attempt.done():
                self._cancel_attempt()
            return list(await asyncio.shield(attempt))
        except asyncio.CancelledError:
            # The last caller gave up (e.g. a kernel interrupt): nobody wants this attempt.
            if self._waiters == 1 and not attempt.done():
                self._cancel_attempt()
            raise
        finally:
            self._waiters -= 1

    async def aclose(self) -> None:
        """Close every client session and stdio child process; idempotent."""
        self._closed = True
        attempt = self._attempt
        if attempt is not None and not attempt.done():
            self._cancel_attempt()
            with suppress(Exception):
                await asyncio.shield(attempt)
        connections = self._connections + self._attempt_connections
        self._connections = []
        self._attempt_connections = []
        self._tools = {}
        await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)

    # --- internals ---------------------------------------------------------------------------

    def _warn_config_once(self) -> None:
        if self._warned_config:
            return
        self._warned_config = True
        for entry in self._entries:
            if isinstance(entry, _Rejected):
                self._warn(f'MCP server "{entry.label}" skipped: {entry.reason}')

    def _aborted_results(self) -> list[McpServerResult]:
        return [
            _result(e.name, e.transport, "aborted", 0) for e in self._entries if not isinstance(e, _Rejected)
        ]

    def _cancel_attempt(self) -> None:
        """Abort the in-flight attempt; `_connect_all` then reports it as aborted."""
        for connection in self._attempt_connections:
            connection.cancel()

    async def _connect_all(self) -> list[McpServerResult]:
        servers = [e for e in self._entries if isinstance(e, ResolvedServer)]
        connections = [McpConnection(server, self._sandbox) for server in servers]
        self._attempt_connections = connections
        if self._closed:
            outcomes: list[_Outcome] = [_Cancelled(0) for _ in connections]
        else:
            outcomes = list(await asyncio.gather(*(self._connect_one(c) for c in connections)))
        self._attempt_connections = []
        self._connections.extend(connections)  # aclose() closes (or awaits the closing of) each
        aborted = self._closed or any(isinstance(o, _Cancelled) for o in outcomes)
        outcome_of = {c.server.name: (c, o) for c, o in zip(connections, outcomes, strict=True)}
        results: list[McpServerResult] = []
        tools: dict[str, McpTool] = {}
        for entry in self._entries:
            if isinstance(entry, _Rejected):
                continue  # warned about once and skipped (docs/mcp.md "Configuration"): not a server, so no result
            connection, outcome = outcome_of[entry.name]
            if isinstance(outcome, _Failure):
                results.append(
                    _result(entry.name, entry.transport, "failed", outcome.duration_ms, error=outcome.detail)
                )
            elif aborted:
                results.append(_result(entry.name, entry.transport, "aborted", outcome.duration_ms))
            else:
                assert isinstance(outcome, _Success)
                count = self._register(connection, outcome.tools, tools)
                results.append(
                    _result(entry.name, entry.transport, "completed", outcome.duration_ms, tools=count)
                )
        self._results = results
        if aborted:
            for connection in connections:
                connection.cancel()
            self._attempt = None
            return results
        self._tools = tools
        self._connected = True
        return results

    async def _connect_one(self, connection: McpConnection) -> _Outcome:
        started = time.monotonic()
        try:
            tools = await connection.open(self._workspace_dir)
        except ConnectCancelled:
            return _Cancelled(_elapsed_ms(started))
        except Exception as exc:  # one server's failure is its own line; the other servers and the session go on
            if connection.cancel_requested:
                return _Cancelled(_elapsed_ms(started))
            detail = describe_error(exc)
            self._warn(f'MCP server "{connection.server.name}" unavailable: {detail}')
            return _Failure(detail, _elapsed_ms(started))
        return _Success(tools, _elapsed_ms(started))

    def _register(self, connection: McpConnection, listed: list[Any], into: dict[str, McpTool]) -> int:
        server = connection.server.name
        count = 0
        for remote in listed:
            try:
                tool = McpTool(connection, remote)
            except Exception as exc:  # a listing the definition model rejects: skip, never fail
                self._warn(f'MCP server "{server}" tool "{remote.name}" skipped: {describe_error(exc)}')
                continue
            if not TOOL_NAME_PATTERN.match(tool.name):
                self._warn(
                    f'MCP server "{server}" tool "{remote.name}" skipped: "{tool.name}" is not a usable '
                    "tool name (letters, digits, '_' and '-' only, at most 128 characters)"
                )
                continue
            if tool.name in into:
                self._warn(f'MCP server "{server}" tool "{remote.name}" skipped: listed more than once')
                continue
            into[tool.name] = tool
            if tool.name not in self._disabled:  # the summary counts the tools the model is offered
                count += 1
        return count


@dataclass
class _Success:
    tools: list[Any]
    duration_ms: int


@dataclass
class _Failure:
    detail: str
    duration_ms: int


@dataclass
class _Cancelled:
    duration_ms: int


_Outcome = _Success | _Failure | _Cancelled


def _guess(entry: MCPServerConfig | dict[str, Any]) -> TransportKind:
    config = entry.get("config") if isinstance(entry, dict) else getattr(entry, "config", None)
    return guess_transport(config)


def _elapsed_ms(started: float) -> int:
    return max(0, round((time.monotonic() - started) * 1000))


def _result(
    server: str,
    transport: TransportKind,
    status: McpStatus,
    duration_ms: int,
    *,
    tools: int | None = None,
    error: str | None = None,
) -> McpServerResult:
    return McpServerResult(
        server=server, transport=transport, status=status, duration_ms=duration_ms, tools=tools, error=error
    )
