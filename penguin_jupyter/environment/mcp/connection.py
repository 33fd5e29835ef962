"""One live MCP client connection, kept in a single long-lived asyncio task.

Owns the transport (stdio child process, Streamable HTTP or SSE) and the SDK `ClientSession`
of one server: connect + tool discovery under the per-server budget, tool calls from any
task, cancellation and close. The SDK's transports use anyio task groups, which must be
entered and exited by the same task, so a background task owns an `AsyncExitStack` inside
one anyio `CancelScope`; cancelling that scope (abort, close) unwinds everything in order.
HTTP reads have no client-side timeout: the Environment's per-tool timeout is the only clock.
A stdio server whose entry says `sandbox: true` (or every one, when the administrator's policy
requires the sandbox) runs in the Environment's sandbox (`environment/sandbox/`); one that cannot
start there fails like any other server. Config validation lives in `config.py`; naming and
result mapping in `tools.py`/`render.py`.
"""

from __future__ import annotations

import asyncio
import math
import os
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp_types
from agenthub.abort_signal import run_with_abort
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ...interfaces import AbortSignal
from ..sandbox import CommandSandbox, parse_hosts
from .config import ResolvedServer

STDERR_TAIL_CHARS = 2048
MAX_TOOL_PAGES = 100
CLIENT_INFO = mcp_types.Implementation(name="penguin-jupyter", version="0.1.0")
# Connect, write and pool timeouts of an HTTP or SSE server (the MCP SDK's own default); reads have none.
HTTP_TIMEOUT_S = 30.0


class ConnectCancelled(Exception):
    """The connect attempt was aborted or the connection closed before it was ready."""


class McpConnection:
    """Use: `tools = await conn.open(workspace_dir)`, then `await conn.call_tool(...)`,
    finally `await conn.aclose()` (also valid while `open` is still running)."""

    def __init__(self, server: ResolvedServer, sandbox: CommandSandbox | None = None) -> None:
        self.server = server
        self.sandbox = sandbox  # a stdio server runs in it when its entry or the policy says so
        self._scope: anyio.CancelScope | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[list[mcp_types.Tool]] | None = None
        self._session: ClientSession | None = None
        self._cancel_requested = False
        self._stderr = _StderrTail()

    # --- lifecycle ---------------------------------------------------------------------------

    async def open(self, workspace_dir: str) -> list[mcp_types.Tool]:
        """Connect and list the server's tools within `connect_timeout_ms`.

        Raises ConnectCancelled (cancel()/aclose() during the attempt), or an exception
        whose message is the failure detail (stderr tail appended for stdio servers).
        """
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        # The caller may stop waiting (abort); never leave an exception unretrieved.
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._task = asyncio.create_task(self._run(workspace_dir), name=f"mcp-server-{self.server.name}")
        return await asyncio.shield(self._ready)

    def cancel(self) -> None:
        """Abort a pending connect (`open` raises ConnectCancelled at once) or close a live
        connection; non-blocking: the shutdown finishes in the background (see `aclose`)."""
        self._cancel_requested = True
        self._session = None
        self._fail(ConnectCancelled("MCP connect cancelled"))
        if self._scope is not None:
            self._scope.cancel()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested

    async def aclose(self) -> None:
        """Close the session and the transport (stdio: the child process); idempotent."""
        self.cancel()
        if self._task is not None:
            await asyncio.wait({self._task})

    # --- calls -------------------------------------------------------------------------------

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any], signal: AbortSignal | None
    ) -> mcp_types.CallToolResult:
        """One `tools/call` with no client-side timeout; a raised CancelledError means aborted."""
        session = self._session
        if session is None:
            raise RuntimeError(f'MCP server "{self.server.name}" is not connected')
        call = session.call_tool(tool_name, arguments)
        if signal is None:
            return await call
        return await run_with_abort(call, signal)

    # --- background task ---------------------------------------------------------------------

    async def _run(self, workspace_dir: str) -> None:
        ready = self._ready
        assert ready is not None
        failure: BaseException | None = None
        try:
            deadline = anyio.current_time() + self.server.connect_timeout_ms / 1000
            with anyio.CancelScope(deadline=deadline) as scope:
                self._scope = scope
                if self._cancel_requested:
                    scope.cancel()
                async with AsyncExitStack() as stack:
                    session = await self._connect(stack, workspace_dir)
                    tools = await _list_all_tools(session)
                    scope.deadline = math.inf
                    if not self._cancel_requested:
                        self._session = session
                        ready.set_result(tools)
                        await anyio.sleep_forever()
        except Exception as exc:  # whatever the MCP SDK or the server raises is the connect failure reported
            failure = exc
        except BaseException:  # a native cancellation of this task: unwind, report cancelled
            self._fail(ConnectCancelled("MCP connect cancelled"))
            raise
        finally:
            self._session = None
            if self._cancel_requested or ready.done():
                self._stderr.close()
        if not ready.done():
            if self._cancel_requested:
                self._fail(ConnectCancelled("MCP connect cancelled"))
            else:
                await self._stderr.wait_eof(0.5)
                if failure is None:
                    detail = f"connect timed out after {self.server.connect_timeout_ms} ms"
                else:
                    detail = describe_error(failure)
                self._fail(RuntimeError(self._with_stderr(detail)))
            self._stderr.close()

    def _fail(self, exc: BaseException) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(exc)

    async def _connect(self, stack: AsyncExitStack, workspace_dir: str) -> ClientSession:
        server = self.server
        if server.transport == "stdio":
            streams = await self._open_stdio(stack, workspace_dir)
        elif server.transport == "http":
            # The client the SDK's transports expect (its redirect handling is theirs: following
            # stays off here, as in the SDK's own factory).
            http_client = httpx2.AsyncClient(
                headers=server.headers, timeout=httpx2.Timeout(HTTP_TIMEOUT_S, read=None), follow_redirects=False
            )
            await stack.enter_async_context(http_client)
            streams = await stack.enter_async_context(
                streamable_http_client(server.url, http_client=http_client)
            )
        else:
            sse = sse_client(
                server.url,
                headers=server.headers,
                timeout=HTTP_TIMEOUT_S,
                # No read timeout between events: mcp annotates a float, but hands the value to
                # httpx.Timeout, where None means "wait as long as the stream stays open".
                sse_read_timeout=None,  # type: ignore[arg-type]
            )
            streams = await stack.enter_async_context(sse)
        read_stream, write_stream = streams
        session = await stack.enter_async_context(
            ClientSession(read_stream, write_stream, client_info=CLIENT_INFO)
        )
        await session.initialize()
        return session

    async def _open_stdio(self, stack: AsyncExitStack, workspace_dir: str) -> Any:
        server = self.server
        cwd = os.path.join(workspace_dir, server.cwd) if server.cwd else workspace_dir
        # Only the SDK's safe default variables plus the entry's own `env` reach the child:
        # the vault is deliberately never injected into MCP server processes.
        params = StdioServerParameters(command=server.command, args=server.args, env=server.env, cwd=cwd)
        sandbox = self.sandbox
        if sandbox is not None and (server.sandbox or sandbox.required):
            env = {**get_default_environment(), **(server.env or {})}
            launch = sandbox.server_launch([server.command, *server.args], cwd, env, parse_hosts(server.allowed_hosts))
            stack.callback(launch.close)
            params = StdioServerParameters(command=launch.argv[0], args=launch.argv[1:], env=launch.env, cwd=cwd)
        elif server.sandbox:
            raise RuntimeError("the server asks for the sandbox, and this environment has none")
        errlog = await self._stderr.open_writer()
        try:
            return await stack.enter_async_context(stdio_client(params, errlog=errlog))
        finally:
            errlog.close()  # the child holds its own copy; EOF arrives when it exits

    def _with_stderr(self, detail: str) -> str:
        tail = self._stderr.tail().strip()
        return f"{detail}; server stderr: {tail}" if tail else detail


async def _list_all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    listed = await session.list_tools()
    tools = list(listed.tools)
    for _ in range(MAX_TOOL_PAGES):
        if not listed.next_cursor:
            break
        listed = await session.list_tools(params=mcp_types.PaginatedRequestParams(cursor=listed.next_cursor))
        tools.extend(listed.tools)
    return tools


def describe_error(exc: BaseException) -> str:
    """A one-line detail for an exception, unwrapping anyio/asyncio exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    message = str(exc).strip() or type(exc).__name__
    return " ".join(message.split())


class _StderrTail:
    """A pipe the stdio child writes its stderr into, drained into a rolling tail."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._transport: asyncio.BaseTransport | None = None
        self._eof = asyncio.Event()
        self._eof.set()  # nothing to wait for until a pipe is opened

    async def open_writer(self) -> Any:
        """A writable file for the child's stderr; our copy must be closed after the spawn."""
        read_fd, write_fd = os.pipe()
        tail = self

        class _Drain(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                tail._data.extend(data)
                if len(tail._data) > STDERR_TAIL_CHARS * 8:
                    del tail._data[: -STDERR_TAIL_CHARS * 4]

            def connection_lost(self, exc: Exception | None) -> None:
                tail._eof.set()

        self._eof.clear()
        loop = asyncio.get_running_loop()
        self._transport, _ = await loop.connect_read_pipe(_Drain, os.fdopen(read_fd, "rb", buffering=0))
        return os.fdopen(write_fd, "w")

    async def wait_eof(self, timeout_s: float) -> None:
        with anyio.move_on_after(timeout_s):
            await self._eof.wait()

    def tail(self) -> str:
        return self._data.decode("utf-8", errors="replace")[-STDERR_TAIL_CHARS:]

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None
