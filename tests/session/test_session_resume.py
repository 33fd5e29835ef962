"""Scenario 84 (session resume) and a torn last line before resume."""

from __future__ import annotations

import pytest

from penguin_jupyter import create_agent, omni
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import TraceWriter, read_trace
from tests.support.session import collect, configure_model, crafted_session, kinds, request_messages

U, A = omni.user_text, omni.assistant_text


def usage(r: int, s: int) -> omni.OmniMessage:
    return omni.token_usage({"total": s}, {"total": r})


def turn(prompt: str, answer: str, r: int = 10, s: int = 10) -> list[omni.OmniMessage]:
    return [U(prompt), omni.request_begin(), A(answer), usage(r, s), omni.request_end("completed")]


@pytest.fixture
async def agent(tmp_path):
    agent = await create_agent()
    return agent


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "ws"
    path.mkdir()
    return path


async def test_resume_exposes_render_history_with_aborts(agent, workspace):
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        sid, _ = await crafted_session(
            agent, workspace, [*turn("hello", "hi there"), omni.abort("aborted by user")]
        )
        session = await agent.resume_session(sid)
        assert kinds(session.render_messages) == ["text", "text", "abort"]
        assert [m.payload.text for m in session.render_messages[:2]] == ["hello", "hi there"]
        session.dispose()


async def test_dangling_compaction_closed_once_and_no_summary_injected(agent, workspace):
    with ScriptedModelServer(["fine"]) as server:
        configure_model(agent.root, server)
        records = [
            *turn("hello", "hi"),
            omni.compaction_begin("context", "summarize", 10, 1),
            U("COMPACT NOW"),
            omni.request_begin(),
            A("[summary]half a summ"),
        ]
        sid, path = await crafted_session(agent, workspace, records)
        first = await agent.resume_session(sid)
        first.dispose()
        tail = read_trace(path)[-1]
        assert tail.payload.type == "compaction_end"
        assert (tail.payload.reason, tail.payload.mode, tail.payload.status) == (
            "context",
            "summarize",
            "failed",
        )
        count = len(read_trace(path))
        second = await agent.resume_session(sid)
        assert len(read_trace(path)) == count  # idempotent
        await collect(second.run([U("go on")]))
        sent = request_messages(server.requests[0])
        assert all("[context_summary]" not in text for _, text in sent[1:])
        assert all("COMPACT NOW" not in text for _, text in sent)
        assert sent[1:] == [("user", "hello"), ("assistant", "hi"), ("user", "go on")]
        second.dispose()


async def test_resume_writes_no_placeholders_and_no_second_meta(agent, workspace):
    with ScriptedModelServer(["ok"]) as server:
        configure_model(agent.root, server)
        records = [
            U("run"),
            omni.request_begin(),
            omni.tool_call("exec_command", {"cmd": "sleep 100"}, "c1"),
            usage(10, 10),
            omni.request_end("completed"),
        ]
        sid, path = await crafted_session(agent, workspace, records)
        before = path.read_text()
        for _ in range(2):
            (await agent.resume_session(sid)).dispose()
        assert path.read_text() == before
        session = await agent.resume_session(sid)
        await collect(session.run([U("next")]))
        text = path.read_text()
        assert "process exited before the tool finished" not in text
        assert kinds(read_trace(path)).count("session_meta") == 1
        sent = server.requests[0]["messages"]
        tool_msgs = [m for m in sent if m["role"] == "tool"]
        assert len(tool_msgs) == 1 and "[interrupted: process exited before the tool finished]" in str(
            tool_msgs[0]
        )
        session.dispose()


async def test_highest_index_shard_is_resumed(agent, workspace):
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        sid, path = await crafted_session(agent, workspace, turn("old", "old answer"))
        session = await agent.create_session(workspace_dir=workspace)
        meta = session._setup.meta
        session.dispose()
        newer = path.with_name(f"{sid}_002.jsonl")
        writer = TraceWriter(newer)
        writer.write(meta)
        for record in turn("new", "new answer"):
            writer.write(record)
        resumed = await agent.resume_session(sid)
        assert resumed.trace_path == newer
        assert [m.payload.text for m in resumed.render_messages] == ["new", "new answer"]
        resumed.dispose()


async def test_resume_errors(agent, workspace, tmp_path):
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        with pytest.raises(
            ValueError, match=r"^Session does not exist: session-nope \(no matching Trace file found under "
        ):
            await agent.resume_session("session-nope")
        gone = tmp_path / "gone"
        gone.mkdir()
        sid, _ = await crafted_session(agent, gone, turn("a", "b"))
        gone.rmdir()
        with pytest.raises(ValueError) as info:
            await agent.resume_session(sid)
        assert str(info.value) == f"The original Session's Workspace no longer exists: {gone}; cannot resume."
        sid2, path2 = await crafted_session(agent, workspace, turn("a", "b"))
        text = path2.read_text().replace('"model_id":"scripted-model"', '"model_id":"retired-model"', 1)
        path2.write_text(text)
        with pytest.raises(ValueError, match="is not configured"):
            await agent.resume_session(sid2)
        no_meta = path2.with_name("session-x_001.jsonl")
        no_meta.write_text(omni.to_json(U("hi")) + "\n")
        with pytest.raises(ValueError, match="no session_meta"):
            await agent.resume_session("session-x")


async def test_latest_session_id_ignores_meta_only_files(agent, workspace):
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        sid, _ = await crafted_session(agent, workspace, turn("a", "b"))
        await crafted_session(agent, workspace, [])  # meta only, newer
        assert agent.latest_session_id() == sid
        listed = agent.list_sessions()
        assert sid in [info.session_id for info in listed]
        info = next(i for i in listed if i.session_id == sid)
        assert (info.provider, info.model_id, info.first_prompt) == ("openai", "scripted-model", "a")


async def test_resumed_session_compacts_on_request(agent, workspace):
    with ScriptedModelServer([{"text": "[summary]the gist[/summary]"}, "after"]) as server:
        configure_model(agent.root, server)
        sid, path = await crafted_session(agent, workspace, turn("hello", "hi"))
        session = await agent.resume_session(sid)
        assert session.compactability() == "ok"
        await session.compact()
        assert session.compactability() == "just_compacted"
        assert kinds(read_trace(path))[-1] == "compaction_end"
        assert read_trace(path)[-1].payload.status == "completed"
        await collect(session.run([U("continue")]))
        assert session.trace_path.name.endswith("_002.jsonl")
        rotated = read_trace(session.trace_path)
        assert kinds(rotated)[:3] == ["session_meta", "tool_list_ready", "text"]
        assert rotated[2].payload.text.startswith("[context_summary]\nthe gist\n[/context_summary]")
        session.dispose()


async def test_never_run_session_compact_is_strict_noop(agent, workspace):
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        assert session.compactability() == "empty"
        assert await session.compact() == []
        assert session.engine is None
        assert not session.trace_path.exists()
        assert server.requests == []
        session.dispose()


async def test_torn_last_line_then_resume(agent, workspace):
    with ScriptedModelServer(["welcome back"]) as server:
        configure_model(agent.root, server)
        sid, path = await crafted_session(agent, workspace, turn("hello", "hi"))
        with open(path, "a", encoding="utf-8") as fh:
            fh.write('{"timestamp":"2026-01-01T00:00:00.000Z","type":"model_msg","payload":{"ty')
        session = await agent.resume_session(sid)
        out = await collect(session.run([U("still there?")]))
        assert [m.payload.text for m in out if m.type == "model_msg" and m.payload.type == "text"] == [
            "welcome back"
        ]
        raw = path.read_text()
        assert '"payload":{"ty\n{' in raw  # healed with one newline before the next record
        records = read_trace(path)
        assert kinds(records)[-6:] == [
            "text",
            "tool_list_ready",
            "request_begin",
            "text",
            "token_usage",
            "request_end",
        ]
        assert request_messages(server.requests[0])[1:] == [
            ("user", "hello"),
            ("assistant", "hi"),
            ("user", "still there?"),
        ]
        session.dispose()
