"""MCP tools as Environment `BuiltinTool`s (docs/mcp.md "Naming, permission, results").

Owns the exposed name `mcp__<server>__<tool>`, its usability check, the description and
permission rules, and `McpTool.execute` (one `tools/call`, rendered into one delta plus a
ToolResult). Framing, timeout, truncation and abort markers are the Environment's close-out.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any, TypedDict

import mcp_types

from ...interfaces import Permission
from ...omni import OmniMessage, partial_tool_call_output
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from .config import ResolvedServer
from .connection import McpConnection
from .render import EMPTY_ERROR_TEXT, render_call_tool_result

MCP_TOOL_PREFIX = "mcp__"
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def mcp_tool_name(server: str, tool: str) -> str:
    return f"{MCP_TOOL_PREFIX}{server}__{tool}"


def tool_permission_for(server: ResolvedServer, tool: mcp_types.Tool) -> Permission:
    """The entry's explicit level wins; under "auto" only `readOnlyHint is True` earns "r"."""
    if server.permission is not None:
        return server.permission
    annotations = tool.annotations
    return "r" if annotations is not None and annotations.read_only_hint is True else "rw"


def tool_description(server: ResolvedServer, tool: mcp_types.Tool) -> str:
    if tool.description is not None:
        return tool.description
    if tool.title is not None:
        return tool.title
    return f'MCP tool "{tool.name}" on server "{server.name}".'


class _Limits(TypedDict, total=False):
    """The per-server limits a tool definition takes only when configured."""

    timeout_ms: int
    max_output_length: int


class McpTool:
    """One discovered server tool, executable through the Environment."""

    def __init__(self, connection: McpConnection, tool: mcp_types.Tool) -> None:
        server = connection.server
        self.name = mcp_tool_name(server.name, tool.name)
        self.remote_name = tool.name
        self.server_name = server.name
        self._connection = connection
        limits: _Limits = {}
        if server.timeout_ms is not None:
            limits["timeout_ms"] = server.timeout_ms
        if server.max_output_length is not None:
            limits["max_output_length"] = server.max_output_length
        self.definition = ToolDefinitionConfig(
            name=self.name,
            description=tool_description(server, tool),
            parameters=dict(tool.input_schema) if tool.input_schema is not None else None,
            permission=tool_permission_for(server, tool),
            **limits,
        )

    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        try:
            result = await self._connection.call_tool(self.remote_name, args, ctx.signal)
        except asyncio.CancelledError:
            if ctx.signal is not None and ctx.signal.aborted:
                yield ToolResult(stop_reason="aborted")
                return
            raise
        rendered = render_call_tool_result(result)
        text = rendered.text
        if text == "" and rendered.is_error and not rendered.images:
            text = EMPTY_ERROR_TEXT
        if text:
            yield partial_tool_call_output("delta", text, ctx.tool_call_id)
        yield ToolResult(
            stop_reason="failed" if rendered.is_error else "completed",
            images=rendered.images or None,
        )
