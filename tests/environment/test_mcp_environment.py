"""Scenario 97: MCP tools through the real Environment (framing, unknown names, permissions,
per-server limits, interruption, broken servers), with the SDK-built stdio fixture server."""

from __future__ import annotations

import asyncio
import os

from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig
from penguin_jupyter.interfaces import AbortSignal, MCPServerConfig, ToolExecutionRequest
from penguin_jupyter.omni import OmniMessage, tool_call
from tests.support.mcp import FIXTURE_TOOLS, fixture_children, fixture_entry
from tests.support.processes import wait_until


def make_env(workspace, *entries: MCPServerConfig, vault: dict[str, str] | None = None) -> Environment:
    config = EnvironmentConfig(
        workspace_dir=str(workspace),
        tool_config=ToolConfig(builtin=[], mcp_servers=list(entries)),
        vault=vault,
    )
    return Environment(config)


async def run_tool(
    env: Environment, name: str, args: dict, signal: AbortSignal | None = None
) -> list[OmniMessage]:
    request = ToolExecutionRequest(tool_call=tool_call(name, args, "mcp-call-1"), signal=signal)
    return [msg async for msg in env.execute_tool(request)]


def streamed(messages: list[OmniMessage]) -> str:
    return "".join(
        m.payload.output
        for m in messages
        if m.payload.type == "partial_tool_call_output" and m.payload.event_type == "delta"
    )


def framing(messages: list[OmniMessage]) -> list[str]:
    return [
        f"{m.payload.type}:{m.payload.event_type}"
        if m.payload.type == "partial_tool_call_output"
        else m.payload.type
        for m in messages
    ]


async def test_mcp_over_stdio_through_the_environment(tmp_path):
    workspace = os.path.realpath(tmp_path)
    env = make_env(workspace, fixture_entry(), vault={"FIXTURE_SECRET": "from-vault"})
    try:
        tools = await env.list_tools()
        assert [t.name for t in tools] == FIXTURE_TOOLS
        echo = tools[0]
        assert echo.description == "Echoes back the input text."
        assert echo.parameters["type"] == "object" and "text" in echo.parameters["properties"]

        messages = await run_tool(env, "mcp__fx__echo", {"text": "hi"})
        assert framing(messages) == [
            "partial_tool_call_output:start",
            "partial_tool_call_output:delta",
            "partial_tool_call_output:stop",
            "tool_call_output",
        ]
        final = messages[-1].payload
        assert (final.output, final.stop_reason, final.tool_call_id) == (
            "echo: hi",
            "completed",
            "mcp-call-1",
        )
        assert streamed(messages) == final.output

        final = (await run_tool(env, "mcp__fx__fail", {}))[-1].payload
        assert (final.output, final.stop_reason) == ("boom", "failed")

        pic = await run_tool(env, "mcp__fx__pic", {})
        final = pic[-1].payload
        assert (final.output, final.stop_reason) == ("a tiny image", "completed")
        assert len(final.images) == 1 and final.images[0].startswith("data:image/png;base64,")
        image_deltas = [
            m.payload for m in pic if m.payload.type == "partial_tool_call_output" and m.payload.images
        ]
        assert (
            len(image_deltas) == 1 and image_deltas[0].output == "" and image_deltas[0].images == final.images
        )

        # no vault in the server process, and it runs in the Workspace
        assert (await run_tool(env, "mcp__fx__probe", {}))[-1].payload.output == f"|{workspace}"

        assert env.tool_permission("mcp__fx__echo") == "r"
        assert env.tool_permission("mcp__fx__fail") == "rw"
        assert env.tool_permission("mcp__fx__missing") is None

        unknown = await run_tool(env, "mcp__fx__nope", {})
        assert (unknown[-1].payload.output, unknown[-1].payload.stop_reason) == (
            "Unknown tool: mcp__fx__nope",
            "failed",
        )
        assert streamed(unknown) == "Unknown tool: mcp__fx__nope"
    finally:
        await env.aclose()
    assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 15)


async def test_execute_before_list_connects_lazily(tmp_path):
    env = make_env(tmp_path, fixture_entry())
    try:
        final = (await run_tool(env, "mcp__fx__echo", {"text": "lazy"}))[-1].payload
        assert (final.output, final.stop_reason) == ("echo: lazy", "completed")
        assert [r.status for r in await env.connect_mcp()] == ["completed"]
    finally:
        await env.aclose()


async def test_per_server_limits_apply_the_standard_markers(tmp_path):
    env = make_env(tmp_path, fixture_entry(maxOutputLength=100, timeoutMs=1500))
    try:
        spam = await run_tool(env, "mcp__fx__spam", {})
        final = spam[-1].payload
        assert final.stop_reason == "completed"
        assert final.output == "x" * 100 + "\n[output truncated: exceeded 100 chars]"
        assert streamed(spam) == final.output

        slow = (await asyncio.wait_for(run_tool(env, "mcp__fx__slow", {"ms": 60_000}), 30))[-1].payload
        assert slow.stop_reason == "failed"
        assert slow.output == "[tool timeout: exceeded 1500ms]"
    finally:
        await env.aclose()


async def test_user_interruption_finalizes_as_aborted(tmp_path):
    env = make_env(tmp_path, fixture_entry())
    try:
        await env.list_tools()
        signal = AbortSignal()
        asyncio.get_running_loop().call_later(0.3, signal.abort, "user")
        final = (await asyncio.wait_for(run_tool(env, "mcp__fx__slow", {"ms": 60_000}, signal), 30))[
            -1
        ].payload
        assert final.stop_reason == "aborted"
        assert final.output == "[interrupted: tool aborted by user]"
    finally:
        await env.aclose()


async def test_permission_override_and_invalid_permission(tmp_path):
    env = make_env(tmp_path, fixture_entry(permission="rw"), fixture_entry("ro", permission="r"))
    try:
        await env.list_tools()
        assert env.tool_permission("mcp__fx__echo") == "rw"
        assert env.tool_permission("mcp__fx__fail") == "rw"
        assert env.tool_permission("mcp__ro__echo") == "r"
        assert env.tool_permission("mcp__ro__fail") == "r"
    finally:
        await env.aclose()

    env = make_env(tmp_path, fixture_entry(permission="readonly"))
    try:
        assert await env.list_tools() == []
        results = await env.connect_mcp()
        assert results == []  # an invalid entry is warned about on stderr and skipped (docs/mcp.md "Configuration")
        assert fixture_children() == []
    finally:
        await env.aclose()


async def test_a_broken_second_server_is_reported_and_the_first_works(tmp_path):
    env = make_env(
        tmp_path,
        fixture_entry(),
        MCPServerConfig(name="broken", config={"command": "definitely-not-a-real-command-xyz"}),
    )
    try:
        assert [t.name for t in await env.list_tools()] == FIXTURE_TOOLS
        results = await env.connect_mcp()
        assert [(r.server, r.transport, r.status, r.tools) for r in results] == [
            ("fx", "stdio", "completed", 6),
            ("broken", "stdio", "failed", None),
        ]
        assert results[1].error and results[1].duration_ms >= 0
        final = (await run_tool(env, "mcp__broken__anything", {}))[-1].payload
        assert final.output == "Unknown tool: mcp__broken__anything"
        assert (await run_tool(env, "mcp__fx__echo", {"text": "ok"}))[-1].payload.output == "echo: ok"
    finally:
        await env.aclose()


async def test_sync_dispose_closes_the_server_process(tmp_path):
    env = make_env(tmp_path, fixture_entry())
    await env.list_tools()
    assert len(fixture_children()) == 1
    env.dispose()
    assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 15)
    final = (await run_tool(env, "mcp__fx__echo", {"text": "late"}))[-1].payload
    assert (final.output, final.stop_reason) == ("Unknown tool: mcp__fx__echo", "failed")
