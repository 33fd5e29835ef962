"""MCP servers as Environment tools (docs/mcp.md).

Owns connecting the configured `tools.mcpServers[]` (stdio, Streamable HTTP, SSE) with the
official `mcp` SDK, exposing their tools as `mcp__<server>__<tool>` BuiltinTools, and closing
them. The Environment dispatches and frames the calls; the session streams the connect events.
"""

from .config import DEFAULT_CONNECT_TIMEOUT_MS, InvalidServerConfig, ResolvedServer, resolve_server
from .manager import McpManager, log_warning
from .render import EMPTY_ERROR_TEXT, RenderedResult, render_call_tool_result
from .tools import MCP_TOOL_PREFIX, McpTool, mcp_tool_name

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_MS",
    "EMPTY_ERROR_TEXT",
    "MCP_TOOL_PREFIX",
    "InvalidServerConfig",
    "McpManager",
    "McpTool",
    "RenderedResult",
    "ResolvedServer",
    "log_warning",
    "mcp_tool_name",
    "render_call_tool_result",
    "resolve_server",
]
