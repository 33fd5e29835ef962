"""Agent and Session behaviour around the engine: model selection errors, workspace checks,
extra tools and prompt text, the command policy, image folding, first-run bootstrap events
(scenario 98) and background completion notices (scenario 62)."""

from __future__ import annotations

import asyncio
import base64
import sys

import pytest
import yaml

from penguin_jupyter import create_agent, omni
from penguin_jupyter.environment.types import ToolDefinitionConfig, ToolResult
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.state import ConfigError, paths
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import read_trace
from tests.support.paths import MCP_FIXTURE_SERVER
from tests.support.session import allow, collect, configure_model, kinds, request_messages

FIXTURE_SERVER = MCP_FIXTURE_SERVER
PNG_1PX = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


@pytest.fixture
def workspace(tmp_path):
    path = tmp_path / "ws"
    path.mkdir()
    return path


def _set_system_config(agent, **changes) -> None:
    file = paths.system_config_path(agent.root, agent.project_id, agent.agent_id)
    doc = yaml.safe_load(file.read_text())
    doc.update(changes)
    file.write_text(yaml.safe_dump(doc, sort_keys=False))


# --- model selection and workspace ---------------------------------------------------------------


async def test_create_agent_seeds_layout_under_penguin_home(tmp_path):
    agent = await create_agent("helper", project_id="proj")
    assert agent.agent_dir == paths.resolve_root() / "proj" / "agents" / "helper"
    assert (agent.agent_state_dir / "system_config.yaml").is_file()
    other = await create_agent(root=tmp_path / "elsewhere")
    assert other.agent_dir == tmp_path / "elsewhere" / "default_project" / "agents" / "default_agent"


async def test_model_selection_errors(workspace):
    agent = await create_agent()
    with pytest.raises(
        ValueError, match=r"^No model is configured for project 'default_project' and no provider key is set"
    ):
        await agent.create_session(workspace_dir=workspace)
    with pytest.raises(ValueError, match="provider and model_id must be given together"):
        await agent.create_session(workspace_dir=workspace, provider="openai")
    with pytest.raises(ValueError, match="provider and model_id must be given together"):
        await agent.create_session(workspace_dir=workspace, model_id="x")
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        with pytest.raises(
            ValueError, match=r"Model \(provider=openai, model_id=other\) is not configured in "
        ):
            await agent.create_session(workspace_dir=workspace, provider="openai", model_id="other")
        with pytest.raises(ValueError, match=r"^Workspace does not exist or is not a directory: "):
            await agent.create_session(workspace_dir=workspace / "missing")
        session = await agent.create_session(
            workspace_dir=workspace, provider="openai", model_id="scripted-model"
        )
        session.dispose()


async def test_broken_system_config_is_a_clear_error(workspace):
    agent = await create_agent()
    _set_system_config(agent, max_turns="lots")
    with pytest.raises(ConfigError, match=r"system_config\.yaml: max_turns: must be an integer, got 'lots'$"):
        await create_agent()


# --- extra tools, prompt text, policy, secrets ---------------------------------------------------


class NoteTool:
    name = "note"
    definition = ToolDefinitionConfig(name="note", description="Store a note.", permission="r")

    async def execute(self, args, ctx):
        yield omni.partial_tool_call_output("delta", f"noted {args.get('text')}", ctx.tool_call_id)
        yield ToolResult()


async def test_extra_tools_and_system_prompt_extra_and_secrets(workspace):
    agent = await create_agent()
    vault_file = paths.vault_path(agent.root, agent.project_id, agent.agent_id)
    vault_file.write_text('TOKEN = "vault-value"\n')
    script = [{"tool_calls": [{"name": "note", "arguments": {"text": "hi"}, "id": "n1"}]}, "ok"]
    with ScriptedModelServer(script) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(
            workspace_dir=workspace,
            extra_tools=[NoteTool()],
            system_prompt_extra="You run inside a notebook.",
        )
        assert session.tool_permission("note") == "r"
        assert session.tool_permission("exec_command") == "rw"
        assert sorted(session.redactor.values) == ["sk-test-secret", "vault-value"]
        out = await collect(session.run([omni.user_text("note it")], approve=allow))
        outputs = [
            m.payload.output for m in out if m.type == "model_msg" and m.payload.type == "tool_call_output"
        ]
        assert outputs == ["noted hi"]
        system = server.requests[0]["messages"][0]["content"]
        assert system.endswith("\n\nYou run inside a notebook.")
        assert "- TOKEN" in system and "vault-value" not in system
        tool_names = [t["function"]["name"] for t in server.requests[0]["tools"]]
        assert "note" in tool_names and "exec_command" in tool_names
        session.dispose()


async def test_command_policy_forbids_without_asking_the_host(workspace):
    agent = await create_agent()
    asked: list[str] = []

    async def approve(call):
        asked.append(call.payload.arguments)
        return "allow"

    script = [{"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "rm -rf /"}, "id": "c1"}]}, "ok"]
    with ScriptedModelServer(script) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        out = await collect(session.run([omni.user_text("clean up")], approve=approve))
        assert asked == []
        decisions = [
            m.payload.decision for m in out if m.type == "event_msg" and m.payload.type == "approval_decision"
        ]
        assert decisions == ["forbidden"]
        session.dispose()


async def test_images_folded_for_text_only_model(workspace):
    agent = await create_agent()
    with ScriptedModelServer(["seen"]) as server:
        configure_model(agent.root, server, vision=False)
        session = await agent.create_session(workspace_dir=workspace)
        prompt = [
            omni.user_text("look"),
            omni.image_url(f"data:image/png;base64,{PNG_1PX}"),
            omni.image_url("https://example.com/cat.png"),
            omni.image_url("data:image/png,notbase64"),
        ]
        await collect(session.run(prompt))
        sent = request_messages(server.requests[0])[-1]
        scratch = paths.session_scratchpad_dir(
            agent.root, agent.project_id, agent.agent_id, session.session_id
        )
        saved = sorted(scratch.glob("upload-*.png"))
        assert len(saved) == 1 and saved[0].read_bytes()[:4] == b"\x89PNG"
        assert sent == (
            "user",
            f"look\n\n[attached image: {saved[0]}]\n[attached image: https://example.com/cat.png]\n"
            "[an attached image could not be saved and was dropped]",
        )
        recorded = [m for m in read_trace(session.trace_path) if m.type == "model_msg"]
        assert recorded[0].payload.type == "text" and "[attached image:" in recorded[0].payload.text
        session.dispose()


# --- first-run bootstrap (98) --------------------------------------------------------------------


async def test_bootstrap_without_mcp_emits_only_tool_list(workspace):
    agent = await create_agent()
    with ScriptedModelServer(["one", "two"]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        first = await collect(session.run([omni.user_text("hi")]))
        assert kinds(first)[0] == "tool_list_ready"
        second = await collect(session.run([omni.user_text("again")]))
        assert "tool_list_ready" not in kinds(second)
        assert kinds(read_trace(session.trace_path))[:3] == ["session_meta", "text", "tool_list_ready"]
        session.dispose()


async def test_bootstrap_with_mcp_server_events(workspace):
    agent = await create_agent()
    _set_system_config(
        agent,
        tools={
            "mcpServers": [{"name": "fx", "config": {"command": sys.executable, "args": [FIXTURE_SERVER]}}]
        },
    )
    with ScriptedModelServer(["reply", "second"]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        out = await collect(session.run([omni.user_text("hi")]))
        assert kinds(out)[:3] == ["mcp_connect_begin", "mcp_connect_end", "tool_list_ready"]
        assert out[0].payload.servers == ["fx"]
        end = out[1].payload
        assert end.status == "completed"
        assert [(r.server, r.status, r.tools) for r in end.results] == [("fx", "completed", 6)]
        recorded = kinds(read_trace(session.trace_path))
        assert recorded[:5] == [
            "session_meta",
            "text",
            "mcp_connect_begin",
            "mcp_connect_end",
            "tool_list_ready",
        ]
        second = await collect(session.run([omni.user_text("more")]))
        assert not {"mcp_connect_begin", "mcp_connect_end", "tool_list_ready"} & set(kinds(second))
        await session.aclose()  # dispose + the MCP child is gone before this loop closes


async def test_abort_mid_connect_then_next_run_bootstraps_afresh(workspace, tmp_path):
    agent = await create_agent()
    marker = tmp_path / "second-start"
    # The first start hangs before the MCP handshake; later starts serve the fixture normally.
    launcher = f'if [ -e "{marker}" ]; then exec "{sys.executable}" "{FIXTURE_SERVER}"; fi; touch "{marker}"; sleep 3600'
    _set_system_config(
        agent, tools={"mcpServers": [{"name": "fx", "config": {"command": "sh", "args": ["-c", launcher]}}]}
    )
    with ScriptedModelServer(["answer"]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        signal = AbortSignal()

        async def abort_once_hanging() -> None:
            while not marker.exists():  # the first server start is now hanging in its handshake
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            signal.abort()

        aborter = asyncio.create_task(abort_once_hanging())
        out = await collect(session.run([omni.user_text("go")], signal=signal))
        await aborter
        assert kinds(out) == ["mcp_connect_begin", "mcp_connect_end", "abort"]
        assert out[1].payload.status == "aborted" and out[1].payload.results == []
        assert out[2].payload.reason == "user"
        assert kinds(read_trace(session.trace_path)) == [
            "session_meta",
            "text",
            "mcp_connect_begin",
            "mcp_connect_end",
            "abort",
        ]
        assert server.requests == []
        again = await collect(session.run([omni.user_text("again")]))
        assert kinds(again)[:3] == ["mcp_connect_begin", "mcp_connect_end", "tool_list_ready"]
        assert again[1].payload.status == "completed"
        sent = server.requests[0]["messages"][1:]
        assert [(m["role"], [p["text"] for p in m["content"]]) for m in sent] == [("user", ["go", "again"])]
        user_texts = [
            m.payload.text
            for m in read_trace(session.trace_path)
            if m.type == "model_msg" and m.payload.type == "text" and m.payload.role == "user"
        ]
        assert user_texts == ["go", "again"]
        # the aborted start shuts down in the background (stdin, 2 s grace, SIGTERM): aclose waits
        # for it, or it outlives this test's loop and shows up in later fixture_children() checks
        await session.aclose()


# --- background notices (62) ----------------------------------------------------------------------


async def test_background_completion_becomes_a_harness_notice(workspace):
    agent = await create_agent()
    script = [
        {
            "tool_calls": [
                {
                    "name": "exec_command",
                    "arguments": {"cmd": "sleep 3; echo done!", "run_in_background": True},
                    "id": "b1",
                }
            ]
        },
        "started it",
        "saw the report",
    ]
    with ScriptedModelServer(script) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        signalled: list[int] = []
        session.on_background_notice = lambda: signalled.append(1)
        await collect(session.run([omni.user_text("start it")], approve=allow))
        for _ in range(1200):  # the command sleeps 3 s so the first run is over when it reports
            if session.pending_background_notices():
                break
            await asyncio.sleep(0.05)
        assert session.pending_background_notices() == 1
        await collect(session.run([omni.user_text("hi")]))
        last = server.requests[-1]["messages"][-1]
        assert last["role"] == "user"
        parts = (
            [p["text"] for p in last["content"]] if isinstance(last["content"], list) else [last["content"]]
        )
        assert parts[0] == "hi"
        assert "[background_task_done]" in parts[-1] and "done!" in parts[-1]
        assert signalled
        session.dispose()


async def test_generate_title_is_out_of_band(workspace):
    agent = await create_agent()
    with ScriptedModelServer(['"Sales summary"\nextra']) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        assert await session.generate_title("summarise sales.csv please") == "Sales summary"
        body = server.requests[0]
        assert "tools" not in body or not body["tools"]
        assert "summarise sales.csv please" in str(body["messages"])
        assert not session.trace_path.exists()
        session.dispose()


async def test_thinking_level_chain_and_vision_service(workspace):
    agent = await create_agent()
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        assert session._setup.model_config.thinking_level == "medium"  # seeded agent config
        assert session.environment.services.vision_describer.model_id is None
        session.dispose()
        _set_system_config(agent, model={"max_tokens": 1000})
        project_file = agent.project_config_path
        project_file.write_text(project_file.read_text() + '\n[default_chat]\nthinking_level = "high"\n')
        from penguin_jupyter.state import add_model

        add_model(
            agent.root,
            agent.project_id,
            provider="openai",
            model_id="eyes",
            base_url=server.url,
            vision_default=True,
        )
        session = await agent.create_session(workspace_dir=workspace)
        assert session._setup.model_config.thinking_level == "high"
        assert session._setup.model_config.max_tokens == 1000
        assert session.environment.services.vision_describer.model_id == "eyes"
        session.dispose()


async def test_resume_keeps_extra_tools(workspace):
    agent = await create_agent()
    with ScriptedModelServer(["first", "second"]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace, extra_tools=[NoteTool()])
        await collect(session.run([omni.user_text("hi")]))
        session.dispose()
        resumed = await agent.resume_session(
            session.session_id, extra_tools=[NoteTool()], system_prompt_extra="x"
        )
        await collect(resumed.run([omni.user_text("again")]))
        assert "note" in [t["function"]["name"] for t in server.requests[1]["tools"]]
        assert server.requests[1]["messages"][0] == server.requests[0]["messages"][0]
        resumed.dispose()


async def test_idle_completion_event_signals_host_and_can_be_taken(workspace):
    from penguin_jupyter.environment.notices import BackgroundEvent

    agent = await create_agent()
    with ScriptedModelServer([]) as server:
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        signalled: list[int] = []
        session.on_background_notice = lambda: signalled.append(1)
        event = BackgroundEvent(
            kind="command",
            id="proc-11aa22bb",
            label="sleep 1",
            status="completed",
            detail="exit code 0",
            output="done!",
        )
        session.environment.notices.emit(event)
        for _ in range(100):
            if signalled:
                break
            await asyncio.sleep(0.01)
        assert signalled == [1]
        taken = session.take_background_notices()
        assert len(taken) == 1
        payload = taken[0].payload
        assert payload.role == "user" and payload.sender == "harness"
        assert payload.text.startswith("[background_task_done]\n")
        assert "kind: command" in payload.text and "id: proc-11aa22bb" in payload.text
        assert "`sleep 1`" in payload.text and "done!" in payload.text
        assert session.take_background_notices() == []
        assert omni.user_text("hi", "user").payload.sender is None
        session.dispose()
