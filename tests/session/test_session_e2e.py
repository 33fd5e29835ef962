"""End to end: an Agent in a tmp data root, a model entry pointing at the scripted model
server, a real Environment running an approved `exec_command`, the Trace on disk, and a new
process resuming the session (its model receives the replayed history)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from penguin_jupyter import create_agent
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import read_trace
from tests.support.session import allow, collect, configure_model, kinds, request_messages

RESUME_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from penguin_jupyter import create_agent
    from penguin_jupyter.omni import user_text

    async def main(session_id):
        agent = await create_agent()
        session = await agent.resume_session(session_id)
        async for msg in session.run([user_text("and now?")]):
            if msg.type == "model_msg" and msg.payload.type == "text":
                print("REPLY:" + msg.payload.text)
        session.dispose()

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_run_writes_file_then_new_process_resumes(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        {
            "tool_calls": [
                {"name": "exec_command", "arguments": {"cmd": "echo hello > out.txt"}, "id": "call_1"}
            ]
        },
        {"text": "I wrote out.txt."},
        {"text": "Still here."},
    ]
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        assert session.provider == "openai" and session.model_id == "scripted-model"
        assert session.trace_path.name == f"{session.session_id}_001.jsonl"
        assert "sk-test-secret" in session.redactor.values

        out = await collect(session.run([user_text("make a file")], approve=allow))
        assert (workspace / "out.txt").read_text() == "hello\n"
        assert kinds(out)[0] == "tool_list_ready"
        assert out[-1].payload.type == "request_end"
        texts = [m.payload.text for m in out if m.type == "model_msg" and m.payload.type == "text"]
        assert texts == ["I wrote out.txt."]

        records = read_trace(session.trace_path)
        recorded = kinds(records)
        assert recorded[:3] == ["session_meta", "text", "tool_list_ready"]
        assert recorded.count("session_meta") == 1
        assert recorded[3] == "request_begin"
        # The tool runs while the stream is still read, so its output may land before or after
        # the first request_end; either way it is recorded before the second request starts.
        second_request = recorded.index("request_begin", recorded.index("request_end"))
        assert (
            recorded.index("tool_call")
            < recorded.index("approval_decision")
            < recorded.index("tool_call_output")
            < second_request
        )
        assert recorded[-4:] == ["request_begin", "text", "token_usage", "request_end"]
        assert not any(m.payload.type.startswith("partial_") for m in records if m.type != "session_meta")
        meta = records[0].payload
        assert meta.session_id == session.session_id and meta.workspace == str(workspace.resolve())
        assert meta.model_context_window == 32768 and "scripted-model" in meta.system_prompt
        session.dispose()

        result = subprocess.run(
            [sys.executable, "-c", RESUME_SCRIPT, session.session_id],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert "REPLY:Still here." in result.stdout

        assert len(server.requests) == 3
        resumed = request_messages(server.requests[2])
        assert resumed[0][0] == "system"
        assert resumed[1:] == [
            ("user", "make a file"),
            ("assistant", '["exec_command"]'),
            ("tool", resumed[3][1]),
            ("assistant", "I wrote out.txt."),
            ("user", "and now?"),
        ]
        assert (
            server.requests[2]["messages"][0] == server.requests[0]["messages"][0]
        )  # recorded prompt reused

    records = read_trace(session.trace_path)
    assert kinds(records).count("session_meta") == 1
    assert kinds(records)[-6:] == [
        "text",
        "tool_list_ready",
        "request_begin",
        "text",
        "token_usage",
        "request_end",
    ]
