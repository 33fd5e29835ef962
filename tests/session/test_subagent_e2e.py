"""Issue 7 end to end: a real Agent and Sessions over the scripted model server (real HTTP).
The parent's model calls run_subagent, the child's model calls exec_command, the parent's
approve function sees the child's call origin-tagged, and both Traces are written (the parent
keeps only the `subagent` pointer; the child has its own session_meta with source "subagent")."""

from __future__ import annotations

import asyncio

from penguin_jupyter import create_agent
from penguin_jupyter.omni import OmniMessage, user_text
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import find_latest_trace_file, read_trace
from tests.support.session import (
    MODEL_ID,
    PROVIDER,
    collect,
    configure_child_model,
    configure_model,
    request_messages,
)
from tests.support.subagent import wait_for

TASK = "Caller agent: default_agent. Write c.txt with the word child."


def run_subagent_call(call_id: str = "p1", **extra) -> dict:
    args = {"description": "Delegate the file write.", "prompt": TASK, **extra}
    return {"tool_calls": [{"name": "run_subagent", "arguments": args, "id": call_id}]}


def exec_call(cmd: str, call_id: str = "k1") -> dict:
    return {
        "tool_calls": [
            {"name": "exec_command", "arguments": {"description": "Write it.", "cmd": cmd}, "id": call_id}
        ]
    }


def child_trace(agent, session_id: str) -> list[OmniMessage]:
    found = find_latest_trace_file(agent.traces_dir, session_id)
    assert found is not None, session_id
    return read_trace(found.path)


def kinds(records: list[OmniMessage]) -> list[str]:
    return [r.type if r.type == "session_meta" else r.payload.type for r in records]


class Approver:
    def __init__(self) -> None:
        self.calls: list[OmniMessage] = []

    async def __call__(self, call: OmniMessage) -> str:
        self.calls.append(call)
        return "allow"


async def test_foreground_subagent_end_to_end_on_one_shared_server(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        run_subagent_call(),  # parent, request 1
        exec_call("echo child > c.txt"),  # child, request 1
        {"text": "I wrote c.txt."},  # child, request 2
        {"text": "The subagent wrote c.txt."},  # parent, request 2
    ]
    approve = Approver()
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        parent = await agent.create_session(workspace_dir=workspace)
        out = await collect(parent.run([user_text("Delegate writing c.txt")], approve=approve))
        assert len(server.requests) == 4

    assert (workspace / "c.txt").read_text() == "child\n"
    child_metas = [m for m in out if m.type == "session_meta"]
    assert len(child_metas) == 1
    child_id = child_metas[0].payload.session_id
    assert child_metas[0].origin == [child_id] and child_metas[0].payload.source == "subagent"

    # approval inheritance: the parent's approve saw its own call, then the child's, origin-tagged
    assert [(c.payload.name, c.origin) for c in approve.calls] == [
        ("run_subagent", None),
        ("exec_command", [child_id]),
    ]
    # the run_subagent output mirrors the child's answer; the parent's next request carries it
    outputs = [
        m.payload
        for m in out
        if not m.origin and m.type == "model_msg" and m.payload.type == "tool_call_output"
    ]
    assert [(o.tool_call_id, o.stop_reason, o.output) for o in outputs] == [
        ("p1", "completed", "I wrote c.txt.")
    ]
    assert ("tool", "I wrote c.txt.") in request_messages(server.requests[3])
    child_tools = [t["function"]["name"] for t in server.requests[1]["tools"]]
    assert "exec_command" in child_tools and "run_subagent" not in child_tools
    parent_tools = [t["function"]["name"] for t in server.requests[0]["tools"]]
    assert {"run_subagent", "input_subagent", "kill_subagent"} <= set(parent_tools)
    # the child's stream reached the parent's stream, every message tagged
    child_kinds = [m.payload.type for m in out if m.origin and m.type != "session_meta"]
    assert {"tool_call", "approval_decision", "tool_call_output", "text"} <= set(child_kinds)

    parent_records = read_trace(parent.trace_path)
    assert not any(r.origin for r in parent_records)
    pointers = [
        r.payload.session_id for r in parent_records if r.type == "event_msg" and r.payload.type == "subagent"
    ]
    assert pointers == [child_id]
    recorded = kinds(parent_records)
    assert recorded.count("session_meta") == 1
    assert recorded.index("subagent") < recorded.index("tool_call_output")

    records = child_trace(agent, child_id)
    assert records[0].type == "session_meta" and records[0].payload.source == "subagent"
    assert records[0].payload.session_id == child_id
    assert records[0].payload.workspace == parent.meta.payload.workspace
    assert (records[0].payload.provider, records[0].payload.model_id) == (PROVIDER, MODEL_ID)
    assert not any(r.origin for r in records)
    texts = [
        (r.payload.sender, r.payload.text)
        for r in records
        if r.type == "model_msg" and r.payload.type == "text" and r.payload.role == "user"
    ]
    assert texts[0] == ("parent_agent", TASK)
    child_kinds = kinds(records)
    assert (
        child_kinds.index("tool_call")
        < child_kinds.index("approval_decision")
        < child_kinds.index("tool_call_output")
    )
    parent.dispose()


async def test_model_override_pair_runs_the_child_on_another_server(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    parent_script = [run_subagent_call(provider=PROVIDER, model_id="child-model"), {"text": "done"}]
    child_script = [exec_call("echo other > o.txt"), {"text": "other model wrote o.txt"}]
    approve = Approver()
    with (
        ScriptedModelServer(parent_script) as parent_server,
        ScriptedModelServer(child_script) as child_server,
    ):
        agent = await create_agent()
        configure_model(agent.root, parent_server)
        configure_child_model(agent.root, child_server)
        parent = await agent.create_session(workspace_dir=workspace)
        out = await collect(parent.run([user_text("go")], approve=approve))
        assert (len(parent_server.requests), len(child_server.requests)) == (2, 2)
        assert child_server.requests[0]["model"] == "child-model"
    assert (workspace / "o.txt").read_text() == "other\n"
    child_id = next(m.payload.session_id for m in out if m.type == "session_meta")
    meta = child_trace(agent, child_id)[0].payload
    assert (meta.model_id, meta.source) == ("child-model", "subagent")
    assert [c.origin for c in approve.calls] == [None, [child_id]]
    parent.dispose()


async def test_background_subagent_reports_back_to_the_parent_session(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    parent_script = [
        run_subagent_call(run_in_background=True, provider=PROVIDER, model_id="child-model"),
        {"text": "Started it."},
        {"text": "The background subagent finished."},
    ]
    child_script = [
        {"delay_ms": 300, **exec_call("echo bg > bg.txt")},
        {"text": "Background file written."},
    ]
    approve = Approver()
    with (
        ScriptedModelServer(parent_script) as parent_server,
        ScriptedModelServer(child_script) as child_server,
    ):
        agent = await create_agent()
        configure_model(agent.root, parent_server)
        configure_child_model(agent.root, child_server)
        parent_script[0] = run_subagent_call(
            run_in_background=True, provider=PROVIDER, model_id="child-model"
        )
        parent = await agent.create_session(workspace_dir=workspace)
        signalled = asyncio.Event()
        parent.on_background_notice = signalled.set
        live: list[OmniMessage] = []
        parent.environment.services.subagent_sessions.set_message_listener(live.append)
        out = await collect(parent.run([user_text("start it in the background")], approve=approve))
        launch = next(
            m.payload
            for m in out
            if not m.origin and m.type == "model_msg" and m.payload.type == "tool_call_output"
        )
        assert "its completion will arrive as a user message" in launch.output
        await asyncio.wait_for(signalled.wait(), 60)
        notices = parent.take_background_notices()
        assert len(notices) == 1
        text = notices[0].payload.text
        assert notices[0].payload.sender == "harness"
        assert text.startswith("[background_task_done]\n")
        assert "kind: subagent\n" in text and "status: completed\n" in text
        assert f"Background subagent finished: `{TASK}`" in text
        assert text.endswith("\n\nBackground file written.")
        await collect(parent.run(notices, approve=approve))
        assert len(parent_server.requests) == 3
    assert (workspace / "bg.txt").read_text() == "bg\n"
    child_id = next(m.payload.session_id for m in out if m.type == "session_meta")
    assert [c.origin for c in approve.calls] == [None, [child_id]]
    await wait_for(lambda: any(m.payload.type == "tool_call_output" for m in live))
    assert all(m.origin and m.origin[0] == child_id for m in live)
    pointers = [
        r for r in read_trace(parent.trace_path) if r.type == "event_msg" and r.payload.type == "subagent"
    ]
    assert [p.payload.session_id for p in pointers] == [child_id]
    parent.dispose()


async def test_interrupting_the_parent_kills_the_child_in_its_window(tmp_path):
    from penguin_jupyter.interfaces import AbortSignal

    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        run_subagent_call(),
        {"text": ["thinking ", "slowly ", "forever"], "fault": {"kind": "stall", "after": 2, "seconds": 6}},
    ]
    approve = Approver()
    signal = AbortSignal()
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        parent = await agent.create_session(workspace_dir=workspace)
        run = asyncio.ensure_future(
            collect(parent.run([user_text("delegate")], approve=approve, signal=signal))
        )
        await wait_for(lambda: len(server.requests) == 2, 30)
        await asyncio.sleep(0.3)
        signal.abort("user")
        out = await asyncio.wait_for(run, 30)
        child_id = next(m.payload.session_id for m in out if m.type == "session_meta")
        output = next(
            m.payload
            for m in out
            if not m.origin and m.type == "model_msg" and m.payload.type == "tool_call_output"
        )
        assert output.stop_reason == "aborted"
        assert output.output.endswith("[interrupted: tool aborted by user]")
        assert [m.payload.type for m in out if not m.origin][-1] == "abort"
        records = child_trace(agent, child_id)
        await wait_for(lambda: "abort" in kinds(child_trace(agent, child_id)), 20)
        assert records[0].payload.source == "subagent"
        assert parent.environment.services.subagent_sessions.ids() == []
        parent.dispose()
