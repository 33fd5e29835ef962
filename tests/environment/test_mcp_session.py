"""Scenario 98: the first run of a real Session with an MCP server configured in the agent's
system_config.yaml streams and records the connect pair before `tool_list_ready`; an abort
mid-connect is recorded, carried over, and the next run reconnects."""

from __future__ import annotations

import asyncio

import yaml

from penguin_jupyter import create_agent
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.omni import user_text
from penguin_jupyter.state import paths
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import read_trace
from tests.support.mcp import fixture_children, fixture_entry
from tests.support.policy import policy_named
from tests.support.processes import wait_until
from tests.support.session import collect, configure_model, kinds


def add_mcp_server(agent, entry) -> None:
    path = paths.system_config_path(agent.root, agent.project_id, agent.agent_id)
    doc = yaml.safe_load(path.read_text())
    doc.setdefault("tools", {})["mcpServers"] = [{"name": entry.name, "config": entry.config}]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


async def close(session) -> None:
    await session.aclose()
    assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 15)


async def test_first_run_streams_and_records_the_connect_pair_then_tool_list_ready(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([{"text": "first"}, {"text": "second"}]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        add_mcp_server(agent, fixture_entry())
        session = await agent.create_session(workspace_dir=workspace)
        try:
            out = await collect(session.run([user_text("go")]))
            assert kinds(out)[:3] == ["mcp_connect_begin", "mcp_connect_end", "tool_list_ready"]
            assert out[0].payload.servers == ["fx"]
            end = out[1].payload
            assert end.status == "completed"
            assert [(r.server, r.transport, r.status, r.tools) for r in end.results] == [
                ("fx", "stdio", "completed", 6)
            ]
            listed = [t.name for t in out[2].payload.tools]
            assert "mcp__fx__echo" in listed and "mcp__fx__dot.name" not in listed
            assert "text" in kinds(out)

            records = read_trace(session.trace_path)
            assert kinds(records)[:5] == [
                "session_meta",
                "text",
                "mcp_connect_begin",
                "mcp_connect_end",
                "tool_list_ready",
            ]

            second = await collect(session.run([user_text("again")]))
            assert not {"mcp_connect_begin", "mcp_connect_end", "tool_list_ready"} & set(kinds(second))
            request_tools = [t["function"]["name"] for t in server.requests[0].get("tools", [])]
            assert "mcp__fx__echo" in request_tools
        finally:
            await close(session)


async def test_abort_mid_connect_is_recorded_carried_and_the_next_run_reconnects(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([{"text": "done"}]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        add_mcp_server(agent, fixture_entry("fx", "--slow-start"))
        session = await agent.create_session(workspace_dir=workspace)
        try:
            signal = AbortSignal()
            first: list = []

            async def consume() -> None:
                async for msg in session.run([user_text("go")], signal=signal):
                    first.append(msg)

            run = asyncio.ensure_future(consume())
            # abort once the server process exists, i.e. while it is still connecting
            assert await asyncio.to_thread(wait_until, lambda: len(fixture_children()) == 1, 20)
            signal.abort("user")
            await asyncio.wait_for(run, 15)
            assert kinds(first) == ["mcp_connect_begin", "mcp_connect_end", "abort"]
            assert first[1].payload.status == "aborted" and first[1].payload.results == []
            assert kinds(read_trace(session.trace_path)) == [
                "session_meta",
                "text",
                "mcp_connect_begin",
                "mcp_connect_end",
                "abort",
            ]
            assert await asyncio.to_thread(wait_until, lambda: fixture_children() == [], 15)

            second = await collect(session.run([user_text("again")]))
            assert kinds(second)[:3] == ["mcp_connect_begin", "mcp_connect_end", "tool_list_ready"]
            assert second[1].payload.status == "completed"
            assert [r.tools for r in second[1].payload.results] == [6]
            user_texts = [
                m.payload.text
                for m in read_trace(session.trace_path)
                if m.type == "model_msg" and m.payload.type == "text"
            ]
            assert [t for t in user_texts if t in ("go", "again")] == ["go", "again"]
            user_parts = [
                part["text"] if isinstance(part, dict) else part
                for message in server.requests[-1]["messages"]
                if message["role"] == "user"
                for part in (
                    message["content"] if isinstance(message["content"], list) else [message["content"]]
                )
            ]
            assert user_parts == ["go", "again"]
        finally:
            await close(session)


async def test_a_tool_the_policy_disables_is_never_offered_mcp_tools_included(tmp_path, monkeypatch):
    """The administrator's `disabled_tools` is applied where the toolset is built: the model's
    request carries neither the disabled builtin nor the disabled MCP tool (the server's other
    tools still are, and the connect summary counts only those), and a call the model makes to one
    anyway never reaches the server."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    policy = tmp_path / "policy.toml"
    policy.write_text('disabled_tools = ["exec_command", "mcp__fx__echo"]\n')
    policy_named(monkeypatch, str(policy))
    script = [{"tool_calls": [{"name": "mcp__fx__echo", "arguments": {"text": "leaked"}, "id": "e1"}]}, "done"]
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        add_mcp_server(agent, fixture_entry())
        session = await agent.create_session(workspace_dir=workspace)
        try:

            async def approve(_call):
                return "allow"

            out = await collect(session.run([user_text("go")], approve=approve))
            listed = [t.name for m in out if m.payload.type == "tool_list_ready" for t in m.payload.tools]
            offered = [t["function"]["name"] for t in server.requests[0].get("tools", [])]
            ends = [m.payload for m in out if m.payload.type == "mcp_connect_end"]
            mcp_offered = [name for name in offered if name.startswith("mcp__fx__")]
            # the connect summary counts the tools offered (5), not the server's whole list (6)
            assert [r.tools for r in ends[0].results] == [len(mcp_offered)] == [5]
            for names in (listed, offered):
                assert "mcp__fx__pic" in names and "read_file" in names
                assert "mcp__fx__echo" not in names and "exec_command" not in names
            outputs = [m.payload for m in out if m.payload.type == "tool_call_output"]
            assert len(outputs) == 1 and outputs[0].stop_reason == "failed"
            assert "echo: leaked" not in str(outputs[0])
            assert session.tool_permission("mcp__fx__echo") is None
        finally:
            await close(session)
