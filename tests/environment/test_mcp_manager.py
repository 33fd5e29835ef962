"""McpManager against real MCP servers: the SDK-built fixture over stdio (a real child
process), Streamable HTTP and SSE on 127.0.0.1; failures, timeouts, abort and closing."""

from __future__ import annotations

import asyncio
import os

from penguin_jupyter.environment.mcp import McpManager
from penguin_jupyter.environment.types import (
    DEFAULT_MAX_OUTPUT_LENGTH,
    DEFAULT_TIMEOUT_MS,
    ToolExecutionContext,
    ToolResult,
)
from penguin_jupyter.interfaces import AbortSignal, MCPServerConfig
from penguin_jupyter.omni import OmniMessage
from tests.support.mcp import FIXTURE_TOOLS, fixture_children, fixture_entry, remote_fixture
from tests.support.processes import wait_until


async def run_tool(manager: McpManager, name: str, args: dict, signal: AbortSignal | None = None):
    tool = manager.get_tool(name)
    assert tool is not None, name
    ctx = ToolExecutionContext(workspace_dir="/", tool_call_id="mcp-call-1", signal=signal)
    deltas: list[str] = []
    results: list[ToolResult] = []
    async for item in tool.execute(args, ctx):
        if isinstance(item, ToolResult):
            results.append(item)
        else:
            assert isinstance(item, OmniMessage)
            assert item.payload.type == "partial_tool_call_output" and item.payload.event_type == "delta"
            assert item.payload.tool_call_id == "mcp-call-1"
            deltas.append(item.payload.output)
    assert len(results) == 1
    return "".join(deltas), results[0]


async def test_stdio_fixture_connects_lists_executes_and_closes(tmp_path):
    warnings: list[str] = []
    workspace = os.path.realpath(tmp_path)
    manager = McpManager(
        [fixture_entry()],
        workspace_dir=workspace,
        vault={"FIXTURE_SECRET": "from-vault"},
        warn=warnings.append,
    )
    try:
        assert manager.tools == [] and manager.tool_permission("mcp__fx__echo") is None
        results = await manager.connect()
        assert [(r.server, r.transport, r.status, r.tools, r.error) for r in results] == [
            ("fx", "stdio", "completed", 6, None)
        ]
        assert results[0].duration_ms >= 0
        assert [t.name for t in manager.tools] == FIXTURE_TOOLS
        # the unusable "dot.name" tool is skipped with a warning, the count excludes it
        assert any('"dot.name"' in w and "skipped" in w for w in warnings)
        echo = manager.get_tool("mcp__fx__echo")
        assert echo.definition.description == "Echoes back the input text."
        assert echo.definition.parameters["type"] == "object"
        assert "text" in echo.definition.parameters["properties"]
        assert (echo.definition.timeout_ms, echo.definition.max_output_length) == (
            DEFAULT_TIMEOUT_MS,
            DEFAULT_MAX_OUTPUT_LENGTH,
        )
        assert manager.tool_permission("mcp__fx__echo") == "r"
        assert manager.tool_permission("mcp__fx__fail") == "rw"
        assert manager.tool_permission("mcp__fx__nope") is None
        assert manager.tool_permission("read_file") is None

        assert await run_tool(manager, "mcp__fx__echo", {"text": "hi"}) == (
            "echo: hi",
            ToolResult("completed"),
        )
        assert await run_tool(manager, "mcp__fx__fail", {}) == ("boom", ToolResult("failed"))
        text, result = await run_tool(manager, "mcp__fx__pic", {})
        assert text == "a tiny image" and result.stop_reason == "completed"
        assert len(result.images) == 1 and result.images[0].startswith("data:image/png;base64,iVBOR")
        # the vault never reaches the server process; it runs in the Workspace
        assert await run_tool(manager, "mcp__fx__probe", {}) == (f"|{workspace}", ToolResult("completed"))

        # idempotent: a second connect neither reconnects nor re-registers
        children = fixture_children()
        assert len(children) == 1
        assert await manager.connect() == results
        assert fixture_children() == children
    finally:
        await manager.aclose()
    assert wait_until(lambda: fixture_children() == [], 10)
    assert manager.tools == []
    await manager.aclose()  # idempotent


async def test_slow_call_is_cancelled_by_the_signal_and_reports_aborted(tmp_path):
    manager = McpManager([fixture_entry()], workspace_dir=str(tmp_path))
    try:
        await manager.connect()
        signal = AbortSignal()
        asyncio.get_running_loop().call_later(0.3, signal.abort, "user")
        text, result = await asyncio.wait_for(run_tool(manager, "mcp__fx__slow", {"ms": 60_000}, signal), 30)
        assert (text, result) == ("", ToolResult("aborted"))
        # the connection survives a cancelled call
        assert await run_tool(manager, "mcp__fx__echo", {"text": "again"}) == (
            "echo: again",
            ToolResult("completed"),
        )
    finally:
        await manager.aclose()


async def test_entry_env_limits_and_permission_override_reach_tools(tmp_path):
    workdir = tmp_path / "srv"
    workdir.mkdir()
    manager = McpManager(
        [
            fixture_entry(
                env={"FIXTURE_SECRET": "from-entry"},
                cwd="srv",
                timeoutMs=300,
                maxOutputLength=100,
                permission="rw",
            ),
            fixture_entry("ro", permission="r"),
        ],
        workspace_dir=str(tmp_path),
    )
    try:
        results = await manager.connect()
        assert [(r.server, r.status, r.tools) for r in results] == [
            ("fx", "completed", 6),
            ("ro", "completed", 6),
        ]
        text, _ = await run_tool(manager, "mcp__fx__probe", {})
        assert text == f"from-entry|{os.path.realpath(workdir)}"
        spam = manager.get_tool("mcp__fx__spam").definition
        assert (spam.timeout_ms, spam.max_output_length) == (300, 100)
        assert manager.tool_permission("mcp__fx__echo") == "rw"  # despite readOnlyHint
        assert manager.tool_permission("mcp__ro__fail") == "r"  # despite no hint
        assert [t.name for t in manager.tools][6:] == [n.replace("__fx__", "__ro__") for n in FIXTURE_TOOLS]
    finally:
        await manager.aclose()


async def test_broken_servers_fail_alone_with_details(tmp_path, caplog):
    manager = McpManager(
        [
            fixture_entry(),
            MCPServerConfig(name="broken", config={"command": "definitely-not-a-real-command-xyz"}),
            fixture_entry("crash", "--crash"),
            fixture_entry("hang", "--hang", connectTimeoutMs=1500),
        ],
        workspace_dir=str(tmp_path),
    )
    try:
        results = await asyncio.wait_for(manager.connect(), 60)
        assert [(r.server, r.transport, r.status, r.tools) for r in results] == [
            ("fx", "stdio", "completed", 6),
            ("broken", "stdio", "failed", None),
            ("crash", "stdio", "failed", None),
            ("hang", "stdio", "failed", None),
        ]
        assert "definitely-not-a-real-command-xyz" in results[1].error
        assert results[2].error.endswith("; server stderr: fixture exploding on purpose")
        assert results[3].error == "connect timed out after 1500 ms"
        assert results[3].duration_ms >= 1400
        assert [t.name for t in manager.tools] == FIXTURE_TOOLS
        err = "\n".join(caplog.messages)
        assert f'[penguin] MCP server "broken" unavailable: {results[1].error}' in err
        assert '[penguin] MCP server "crash" unavailable: ' in err
        assert '[penguin] MCP server "hang" unavailable: connect timed out after 1500 ms' in err
    finally:
        await manager.aclose()
    assert wait_until(lambda: fixture_children() == [], 10)


async def test_abort_mid_connect_closes_everything_and_the_next_connect_starts_afresh(tmp_path):
    manager = McpManager(
        [fixture_entry("fx", "--slow-start"), fixture_entry("hang", "--hang")], workspace_dir=str(tmp_path)
    )
    try:
        signal = AbortSignal()
        attempt = asyncio.ensure_future(manager.connect(signal))
        assert await asyncio.to_thread(wait_until, lambda: len(fixture_children()) == 2, 20)
        signal.abort("user")
        results = await asyncio.wait_for(attempt, 5)
        assert [(r.server, r.status, r.tools, r.error) for r in results] == [
            ("fx", "aborted", None, None),
            ("hang", "aborted", None, None),
        ]
        assert manager.tools == [] and not manager.connected
        assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 15)
    finally:
        await manager.aclose()

    again = McpManager([fixture_entry("fx", "--slow-start")], workspace_dir=str(tmp_path))
    try:
        signal = AbortSignal()
        attempt = asyncio.ensure_future(again.connect(signal))
        assert await asyncio.to_thread(wait_until, lambda: len(fixture_children()) == 1, 20)
        signal.abort("user")
        assert [r.status for r in await asyncio.wait_for(attempt, 5)] == ["aborted"]
        results = await again.connect()  # a fresh attempt, from scratch
        assert [(r.server, r.status, r.tools) for r in results] == [("fx", "completed", 6)]
        assert [t.name for t in again.tools] == FIXTURE_TOOLS
        assert await run_tool(again, "mcp__fx__echo", {"text": "x"}) == ("echo: x", ToolResult("completed"))
    finally:
        await again.aclose()
    assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 15)


async def test_abort_after_connect_keeps_the_toolset_and_aclose_mid_connect_cleans_up(tmp_path):
    manager = McpManager([fixture_entry()], workspace_dir=str(tmp_path))
    first, second = await asyncio.gather(manager.connect(), manager.connect())  # single flight
    assert first == second and first[0].status == "completed"
    signal = AbortSignal()
    signal.abort("user")
    assert (await manager.connect(signal))[0].status == "completed"
    assert len(fixture_children()) == 1
    await manager.aclose()
    assert fixture_children() == []
    # closed managers neither connect nor execute
    assert await manager.connect() == first and manager.tools == []

    closing = McpManager([fixture_entry("fx", "--slow-start")], workspace_dir=str(tmp_path))
    attempt = asyncio.ensure_future(closing.connect())
    assert await asyncio.to_thread(wait_until, lambda: len(fixture_children()) == 1, 20)
    await closing.aclose()
    results = await asyncio.wait_for(attempt, 5)
    assert results[0].status == "aborted"
    # The aborted start's server is terminated by the SDK's cleanup; under load its exit can
    # trail aclose() by a moment, so allow a bounded wait (it must not survive).
    assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 5)


async def test_streamable_http_and_sse_send_headers_on_every_request(tmp_path):
    for kind, transport in (("--http", "http"), ("--sse", "sse")):
        with remote_fixture(kind, tmp_path) as (url, header_log):
            config = {"url": url, "headers": {"x-penguin-test": "yes"}, "connectTimeoutMs": 60_000}
            if transport == "sse":
                config["transport"] = "sse"
            manager = McpManager([MCPServerConfig(name="web", config=config)], workspace_dir=str(tmp_path))
            try:
                results = await asyncio.wait_for(manager.connect(), 60)
                assert [(r.server, r.transport, r.status, r.tools) for r in results] == [
                    ("web", transport, "completed", 6)
                ]
                assert await run_tool(manager, "mcp__web__echo", {"text": "net"}) == (
                    "echo: net",
                    ToolResult("completed"),
                )
            finally:
                await manager.aclose()
            seen = header_log.read_text().split()
            assert seen and all(value == "yes" for value in seen), (kind, seen)


async def test_unreachable_http_server_fails_without_blocking(tmp_path):
    from tests.support.mcp import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"
    manager = McpManager(
        [MCPServerConfig(name="gone", config={"url": url, "connectTimeoutMs": 5000})],
        workspace_dir=str(tmp_path),
        warn=lambda _: None,
    )
    try:
        results = await asyncio.wait_for(manager.connect(), 30)
        assert (results[0].server, results[0].transport, results[0].status) == ("gone", "http", "failed")
        assert results[0].error
    finally:
        await manager.aclose()


async def test_more_result_shapes_over_the_wire(tmp_path):
    manager = McpManager([fixture_entry("fx", "--extra")], workspace_dir=str(tmp_path))
    try:
        results = await manager.connect()
        assert (results[0].status, results[0].tools) == ("completed", 10)
        assert await run_tool(manager, "mcp__fx__quiet_fail", {}) == (
            "[tool reported an error with no message]",
            ToolResult("failed"),
        )
        assert await run_tool(manager, "mcp__fx__structured", {}) == (
            '{\n  "a": 1,\n  "b": [\n    "x"\n  ]\n}',
            ToolResult("completed"),
        )
        assert await run_tool(manager, "mcp__fx__mixed", {}) == (
            "[audio content: audio/wav]\n[resource: file:///x] a file\nembedded\n[resource: mem://b (binary)]",
            ToolResult("completed"),
        )
        # a server writing to stderr after connecting is drained, never blocks or leaks
        for i in range(3):
            assert await run_tool(manager, "mcp__fx__noisy", {"text": "z" * 5000 + str(i)}) == (
                "z" * 5000 + str(i),
                ToolResult("completed"),
            )
    finally:
        await manager.aclose()


async def test_cancelled_sole_caller_cancels_the_attempt(tmp_path):
    manager = McpManager([fixture_entry("fx", "--slow-start")], workspace_dir=str(tmp_path))
    try:
        caller = asyncio.ensure_future(manager.connect())
        assert await asyncio.to_thread(wait_until, lambda: len(fixture_children()) == 1, 20)
        caller.cancel()
        try:
            await caller
        except asyncio.CancelledError:
            pass
        assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 15)
        assert not manager.connected
        assert [r.status for r in await manager.connect()] == ["completed"]
    finally:
        await manager.aclose()
