"""Text is valid Unicode where it enters (issue 42, defect 2): a lone surrogate from the provider
(`"\\ud800"` is valid JSON), from a tool or in a resumed trace becomes U+FFFD, so the session
records it and its next Task's request can be encoded. On 3758335 the model's lone surrogate
turned recording off and failed every later request with `utf-8 codec can't encode…`."""

from __future__ import annotations

from penguin_jupyter import create_agent
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import read_trace
from tests.support.session import allow, collect, configure_model


def _texts(messages) -> list[str]:
    return [m.payload.text for m in messages if m.type == "model_msg" and m.payload.type == "text"]


async def test_a_lone_surrogate_from_the_model_is_repaired_and_the_next_task_works(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        {"text": "broken \ud800 text"},
        {
            "reasoning": "odd \udfff thought",
            "text": "fine",
            "tool_calls": [{"name": "read_file", "arguments": {"file_path": "x\ud800.csv"}}],
        },
        "done",
    ]
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        first = await collect(session.run([user_text("say something")], approve=allow))
        assert _texts(first)[-1] == "broken \ufffd text"
        second = await collect(session.run([user_text("and now?")], approve=allow))
        assert second[-1].payload.type == "request_end" and second[-1].payload.status == "completed"
        assert _texts(second)[-1] == "done"
        assert [call.status for call in server.calls] == [200, 200, 200]
        assert session.recording_error is None
        # what went back to the provider is the repaired text
        assert "broken \ufffd text" in str(server.requests[1]["messages"])
        assert "x\ufffd.csv" in str(server.requests[2]["messages"])
        path = session.trace_path
        await session.aclose()
    recorded = read_trace(path)
    assert "broken \ufffd text" in [
        m.payload.text for m in recorded if m.type == "model_msg" and m.payload.type == "text"
    ]


async def test_a_lone_surrogate_in_the_users_text_is_repaired_too(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer(["ok"]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        out = await collect(session.run([user_text("pasted \udc80 text")], approve=allow))
        assert out[-1].payload.type == "request_end" and out[-1].payload.status == "completed"
        assert "pasted \ufffd text" in str(server.requests[0]["messages"])
        assert session.recording_error is None
        path = session.trace_path
        await session.aclose()
    assert "pasted \ufffd text" in _texts(read_trace(path))
