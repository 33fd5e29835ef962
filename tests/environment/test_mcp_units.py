"""MCP unit behaviour without servers: result rendering (scenario 96), entry validation
(docs/mcp.md "Configuration"), naming and permission rules (docs/mcp.md "Naming, permission, results")."""

from __future__ import annotations

import mcp_types
import pytest

from penguin_jupyter.environment.mcp import (
    DEFAULT_CONNECT_TIMEOUT_MS,
    InvalidServerConfig,
    McpManager,
    mcp_tool_name,
    render_call_tool_result,
    resolve_server,
)
from penguin_jupyter.environment.mcp.config import ResolvedServer
from penguin_jupyter.environment.mcp.tools import tool_description, tool_permission_for
from penguin_jupyter.interfaces import MCPServerConfig

# --- scenario 96: result rendering -----------------------------------------------------------


def test_render_maps_block_types_in_order_and_ignores_structured_content_when_text_exists():
    rendered = render_call_tool_result(
        {
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "audio", "data": "BBBB", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///x", "name": "x", "description": "a file"},
                {"type": "resource", "resource": {"uri": "mem://t", "text": "embedded"}},
                {"type": "resource", "resource": {"uri": "mem://b", "blob": "CCCC"}},
            ],
            "structuredContent": {"ignored": True},
        }
    )
    assert (
        rendered.text
        == "hello\n[audio content: audio/wav]\n[resource: file:///x] a file\nembedded\n[resource: mem://b (binary)]"
    )
    assert rendered.images == ["data:image/png;base64,AAAA"]
    assert rendered.is_error is False


def test_render_structured_content_only_when_there_is_no_text():
    assert render_call_tool_result({"content": [], "structuredContent": {"a": 1}}).text == '{\n  "a": 1\n}'


def test_render_accepts_sdk_models_and_unknown_blocks():
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.TextContent(type="text", text="t"),
            mcp_types.ResourceLink(type="resource_link", uri="file:///y", name="y"),
            mcp_types.ImageContent(type="image", data="QQ==", mime_type="image/gif"),
        ],
        is_error=True,
    )
    rendered = render_call_tool_result(result)
    assert rendered.text == "t\n[resource: file:///y]"
    assert rendered.images == ["data:image/gif;base64,QQ=="]
    assert rendered.is_error is True
    assert (
        render_call_tool_result({"content": [{"type": "hologram"}]}).text
        == "[unsupported content type: hologram]"
    )


# --- docs/mcp.md "Configuration": entry validation -----------------------------------------------------------------


def test_transport_inference_and_defaults():
    stdio = resolve_server(
        MCPServerConfig(name="a", config={"command": "srv", "args": ["-v"], "env": {"K": "v"}})
    )
    assert (stdio.transport, stdio.command, stdio.args, stdio.env, stdio.cwd) == (
        "stdio",
        "srv",
        ["-v"],
        {"K": "v"},
        None,
    )
    assert stdio.connect_timeout_ms == DEFAULT_CONNECT_TIMEOUT_MS == 10_000
    assert (stdio.timeout_ms, stdio.max_output_length, stdio.permission) == (None, None, None)
    http = resolve_server(
        {"name": "b-1", "config": {"url": "https://example.test/mcp", "headers": {"A": "b"}}}
    )
    assert (http.transport, http.url, http.headers) == ("http", "https://example.test/mcp", {"A": "b"})
    sse = resolve_server({"name": "c_2", "config": {"transport": "sse", "url": "http://127.0.0.1:1/sse"}})
    assert sse.transport == "sse"
    limits = resolve_server(
        {
            "name": "d",
            "config": {
                "command": "x",
                "connectTimeoutMs": 2500,
                "timeoutMs": 300,
                "maxOutputLength": 100,
                "permission": "rw",
            },
        }
    )
    assert (limits.connect_timeout_ms, limits.timeout_ms, limits.max_output_length, limits.permission) == (
        2500,
        300,
        100,
        "rw",
    )
    assert resolve_server({"name": "e", "config": {"command": "x", "permission": "auto"}}).permission is None


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"name": "bad name", "config": {"command": "x"}}, 'invalid server name "bad name"'),
        ({"name": "_x", "config": {"command": "x"}}, "invalid server name"),
        ({"name": "a", "config": "nope"}, '"config" must be a mapping'),
        ({"name": "a", "config": {}}, 'no transport: set "command" (stdio), "url" (http), or "transport"'),
        ({"name": "a", "config": {"url": "http://h", "transport": "ws"}}, 'unknown transport "ws"'),
        ({"name": "a", "config": {"transport": "stdio", "command": "  "}}, 'non-empty "command"'),
        ({"name": "a", "config": {"command": "x", "args": "-v"}}, '"args" must be a list of strings'),
        (
            {"name": "a", "config": {"command": "x", "env": {"K": 1}}},
            '"env" must be a mapping of strings to strings',
        ),
        ({"name": "a", "config": {"transport": "sse"}}, 'the sse transport needs a "url" string'),
        ({"name": "a", "config": {"url": "ftp://h/x"}}, '"url" must be an http:// or https:// URL'),
        ({"name": "a", "config": {"url": "http://h", "headers": ["x"]}}, '"headers" must be a mapping'),
        ({"name": "a", "config": {"command": "x", "timeoutMs": 0}}, '"timeoutMs" must be a positive number'),
        (
            {"name": "a", "config": {"command": "x", "connectTimeoutMs": "5"}},
            '"connectTimeoutMs" must be a positive',
        ),
        (
            {"name": "a", "config": {"command": "x", "maxOutputLength": True}},
            '"maxOutputLength" must be a positive',
        ),
        (
            {"name": "a", "config": {"command": "x", "permission": "readonly"}},
            '"permission" must be "auto", "r" or "rw"',
        ),
    ],
)
def test_invalid_entries_have_a_one_line_reason(entry, reason):
    with pytest.raises(InvalidServerConfig) as info:
        resolve_server(entry)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


async def test_invalid_and_duplicate_entries_are_warned_and_skipped_without_a_result(tmp_path):
    warnings: list[str] = []
    manager = McpManager(
        [
            {"name": "bad", "config": {"command": "x", "permission": "readonly"}},
            {"name": "dup", "config": {"url": "http://127.0.0.1:9/mcp"}},
            {"name": "dup", "config": {"command": "y"}},
        ],
        workspace_dir=str(tmp_path),
        warn=warnings.append,
    )
    assert manager.server_names == ["dup"]
    # A pre-aborted signal starts nothing: the valid server reads "aborted".
    from penguin_jupyter.interfaces import AbortSignal

    signal = AbortSignal()
    signal.abort("user")
    results = await manager.connect(signal)
    assert [(r.server, r.transport, r.status) for r in results] == [("dup", "http", "aborted")]
    assert warnings == []  # nothing was attempted yet
    results = await manager.connect()  # port 9 refuses at once
    assert [(r.server, r.transport, r.status) for r in results] == [("dup", "http", "failed")]
    assert warnings[:2] == [
        'MCP server "bad" skipped: "permission" must be "auto", "r" or "rw", got "readonly"',
        'MCP server "dup" skipped: duplicate server name',
    ]
    assert manager.tools == []
    await manager.aclose()


# --- docs/mcp.md "Naming, permission, results": naming, description, permission ---------------------------------------------------


def test_naming_description_and_permission_rules():
    assert mcp_tool_name("fx", "echo") == "mcp__fx__echo"
    auto = ResolvedServer(name="fx", transport="stdio", command="x")
    forced = ResolvedServer(name="fx", transport="stdio", command="x", permission="r")
    hinted = mcp_types.Tool(
        name="t", input_schema={"type": "object"}, annotations=mcp_types.ToolAnnotations(read_only_hint=True)
    )
    plain = mcp_types.Tool(name="u", input_schema={"type": "object"}, title="Title U")
    bare = mcp_types.Tool(name="v", input_schema={"type": "object"})
    assert tool_permission_for(auto, hinted) == "r"
    assert tool_permission_for(auto, plain) == "rw"
    assert tool_permission_for(forced, plain) == "r"
    assert tool_description(auto, plain) == "Title U"
    assert tool_description(auto, bare) == 'MCP tool "v" on server "fx".'
