"""The Agent's SubagentRunner: child sessions, origin tagging, approval inheritance, depth cap."""

from __future__ import annotations

import pytest

from penguin_jupyter import create_agent, omni
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import read_trace
from tests.support.session import collect, configure_model


async def test_child_session_stream_is_origin_tagged_and_recorded_separately(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    agent = await create_agent()
    seen: list[omni.OmniMessage] = []

    async def approve(call):
        seen.append(call)
        return "allow"

    script = [
        {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "echo child > c.txt"}, "id": "k1"}]},
        "child done",
        "again done",
    ]
    with ScriptedModelServer(script) as server:
        configure_model(agent.root, server)
        parent = await agent.create_session(workspace_dir=workspace)
        runner = parent.environment.services.subagent_runner
        assert runner is not None
        handle = await runner.spawn()
        child = handle.session
        assert child.workspace_dir == parent.workspace_dir
        assert (child.provider, child.model_id) == (parent.provider, parent.model_id)
        out = await collect(handle.run("Caller agent: default_agent. Write c.txt", approve=approve))
        hop = handle.session_id
        assert all(m.origin and m.origin[0] == hop for m in out)
        assert out[0].type == "session_meta" and out[0].payload.source == "subagent"
        assert out[1].payload.text.startswith("Caller agent:") and out[1].payload.sender == "parent_agent"
        assert (workspace / "c.txt").read_text() == "child\n"
        assert [c.origin for c in seen] == [[hop]]
        records = read_trace(child.trace_path)
        assert records[0].payload.source == "subagent"
        assert records[1].payload.sender == "parent_agent"
        assert all(not r.origin for r in records)
        tools = [t["function"]["name"] for t in server.requests[0]["tools"]]
        assert not {"run_subagent", "input_subagent", "kill_subagent"} & set(tools)
        again = await collect(handle.run("follow-up"))  # no second session_meta
        assert again[0].type != "session_meta"

        grandchild_runner = child.environment.services.subagent_runner
        assert grandchild_runner is None
        from penguin_jupyter.subagent_runner import AgentSubagentRunner, ParentContext

        leaf = AgentSubagentRunner(ParentContext(agent, "openai", "scripted-model", str(workspace), None, 1))
        with pytest.raises(
            RuntimeError, match=r"^subagent depth limit 1 reached; not spawning another subagent$"
        ):
            await leaf.spawn()
        with pytest.raises(
            ValueError, match=r'^subagent error: agent "ghost" does not exist or is not accessible$'
        ):
            await runner.spawn(agent_id="ghost")
        with pytest.raises(ValueError, match="must be given together"):
            await runner.spawn(provider="openai")
        handle.dispose()
        parent.dispose()


async def test_run_subagent_through_the_parent_session(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    agent = await create_agent()
    script = [
        {
            "tool_calls": [
                {
                    "name": "run_subagent",
                    "arguments": {"prompt": "Caller agent: default_agent. Say hi."},
                    "id": "s1",
                }
            ]
        },
        "hi from child",
        "the child said hi",
    ]

    async def allow(_call):
        return "allow"

    with ScriptedModelServer(script) as server:
        configure_model(agent.root, server)
        parent = await agent.create_session(workspace_dir=workspace)
        out = await collect(parent.run([omni.user_text("delegate")], approve=allow))
        tagged = [m for m in out if m.origin]
        assert tagged and tagged[0].type == "session_meta"
        child_id = tagged[0].origin[0]
        final = [
            m.payload.text for m in out if not m.origin and m.type == "model_msg" and m.payload.type == "text"
        ]
        assert final == ["the child said hi"]
        records = read_trace(parent.trace_path)
        assert all(not r.origin for r in records)
        pointers = [
            r.payload.session_id for r in records if r.type == "event_msg" and r.payload.type == "subagent"
        ]
        assert pointers == [child_id]
        outputs = [
            r.payload.output
            for r in records
            if r.type == "model_msg" and r.payload.type == "tool_call_output"
        ]
        assert len(outputs) == 1 and "hi from child" in outputs[0]
        child_info = next(i for i in agent.list_sessions() if i.session_id == child_id)
        child_records = read_trace(child_info.trace_path)
        assert child_records[0].payload.source == "subagent"
        assert child_records[1].payload.text == "Caller agent: default_agent. Say hi."
        assert len(server.requests) == 3
        parent.dispose()
