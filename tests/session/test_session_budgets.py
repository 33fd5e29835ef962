"""Budgets that stop a Task before it spends (issue 41): a real Agent and Session against the
scripted model server, a model entry with its own price, real `exec_command` tool calls. The
checks count the requests the server received — a refused request is never sent."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.omni import TextPayload, user_text
from penguin_jupyter.state import load_project_config, update_project_config
from penguin_jupyter.state.errors import ConfigError
from penguin_jupyter.state.spend_ledger import ledger_path, today
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.session import allow, collect, configure_model, request_messages

# $10 per million input and output tokens; each scripted request reports 5,000 input and 100
# output tokens: $0.051 a request. The output cap (max_tokens 100) bounds every estimate.
PRICE = {"input": 10.0, "cached": 1.0, "output": 10.0}
USAGE = {"prompt_tokens": 5000, "completion_tokens": 100}
REQUEST_USD = (5000 * 10.0 + 100 * 10.0) / 1_000_000


def call(cmd: str, call_id: str) -> dict:  # type: ignore[type-arg]
    return {
        "tool_calls": [{"name": "exec_command", "arguments": {"cmd": cmd}, "id": call_id}],
        "usage": USAGE,
    }


THREE_REQUESTS = [call("echo a", "call_a"), call("echo b", "call_b"), {"text": "done", "usage": USAGE}]


def texts(messages: list) -> list[str]:  # type: ignore[type-arg]
    return [m.payload.text for m in messages if m.type == "model_msg" and isinstance(m.payload, TextPayload)]


def priced(root: Path, server: ScriptedModelServer, **budgets: float) -> None:
    configure_model(root, server, price=PRICE)

    def change(cfg) -> None:  # type: ignore[no-untyped-def]
        cfg.models[0].max_tokens = 100
        for key, value in budgets.items():
            setattr(cfg, key, value)

    update_project_config(root, "default_project", change)


async def test_a_task_budget_stops_before_the_request_that_could_cross_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([*THREE_REQUESTS[:2], {"text": "picked up again", "usage": USAGE}]) as server:
        agent = await create_agent()
        priced(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        out = await collect(session.run([user_text("two commands")], approve=allow, budget_usd=0.12))
        assert len(server.calls) == 2  # the third request was never sent
        (stop,) = [t for t in texts(out) if t.startswith("[stopped before a model request")]
        assert "this cell's budget of $0.12" in stop
        assert "$0.102 spent" in stop
        assert session.spend is not None and session.spend.task.usd == pytest.approx(2 * REQUEST_USD)

        # the session stays usable, and the next Task's model is told why the last one stopped
        again = await collect(session.run([user_text("go on")], approve=allow))
        assert texts(again)[-1] == "picked up again"
        sent = " ".join(str(m) for m in request_messages(server.calls[-1].body))
        assert "[budget_stop]" in sent and "this cell's budget of $0.12" in sent
        assert session.spend.task.usd == pytest.approx(REQUEST_USD)  # a new Task counts from zero
        assert session.spend.session.usd == pytest.approx(3 * REQUEST_USD)
        session.dispose()


async def test_a_session_budget_from_the_project_config_spans_tasks(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        {"text": "one", "usage": USAGE},
        {"text": "two", "usage": USAGE},
        {"text": "three", "usage": USAGE},
    ]
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        priced(agent.root, server, budget_usd_per_session=0.11)
        session = await agent.create_session(workspace_dir=workspace)
        assert texts(await collect(session.run([user_text("1")], approve=allow))) == ["one"]
        assert texts(await collect(session.run([user_text("2")], approve=allow))) == ["two"]
        third = texts(await collect(session.run([user_text("3")], approve=allow)))
        assert len(server.calls) == 2
        assert "the session budget of $0.11 (budget_usd_per_session in" in third[-1]
        session.dispose()


async def test_an_unknown_price_with_a_budget_is_refused_not_guessed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([{"text": "hi"}]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)  # scripted-model: no price anywhere
        session = await agent.create_session(workspace_dir=workspace)
        out = texts(await collect(session.run([user_text("hi")], approve=allow, budget_usd=5)))
        assert server.calls == []
        assert "has no known price, so a budget cannot be checked" in out[-1]
        session.dispose()


@pytest.mark.parametrize("value", [-1, 0, float("inf"), float("nan")])
async def test_a_bad_budget_is_one_line(tmp_path: Path, value: float) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer([{"text": "hi"}]) as server:
        agent = await create_agent()
        configure_model(agent.root, server)
        session = await agent.create_session(workspace_dir=workspace)
        with pytest.raises(ValueError, match="budget_usd must be a positive number of USD"):
            await collect(session.run([user_text("hi")], budget_usd=value))
        session.dispose()


def test_a_bad_budget_in_the_project_config_names_the_file_and_key(tmp_path: Path) -> None:
    from penguin_jupyter.state.paths import project_config_path

    path = project_config_path(tmp_path, "default_project")
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_text('budget_usd_per_day = "ten"\n')
    path.chmod(0o600)
    with pytest.raises(ConfigError) as caught:
        load_project_config(tmp_path, "default_project")
    assert "budget_usd_per_day" in str(caught.value) and str(path) in str(caught.value)


DAY_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from penguin_jupyter import create_agent
    from penguin_jupyter.omni import user_text

    async def main(workspace):
        agent = await create_agent()
        session = await agent.create_session(workspace_dir=workspace)
        async for msg in session.run([user_text("hi")]):
            if msg.type == "model_msg" and msg.payload.type == "text":
                print("TEXT:" + msg.payload.text)
        session.dispose()

    asyncio.run(main(sys.argv[1]))
    """
)


def run_process(workspace: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", DAY_SCRIPT, str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [line[5:] for line in done.stdout.splitlines() if line.startswith("TEXT:")]


async def test_the_daily_budget_is_shared_by_processes_and_survives_them(tmp_path: Path) -> None:
    """Two processes (as two kernels are) on one data root: the first spends, exits; the second
    finds today's spend in the ledger and is stopped by the daily budget before sending."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedModelServer(
        [{"text": "first", "usage": USAGE}, {"text": "second", "usage": USAGE}]
    ) as server:
        agent = await create_agent()
        priced(agent.root, server, budget_usd_per_day=0.08)
        assert run_process(workspace) == ["first"]
        spent = today(agent.root)
        assert (
            spent.spent_usd == pytest.approx(REQUEST_USD) and spent.requests == 1 and spent.reserved_usd == 0
        )
        assert ledger_path(agent.root).stat().st_mode & 0o777 == 0o600
        second = run_process(workspace)
        assert len(server.calls) == 1
        assert "today's budget of $0.08 (budget_usd_per_day in" in second[-1]
        assert "spent today by all your kernels" in second[-1]


async def test_a_subagents_requests_count_in_the_parent_task_and_its_budget(tmp_path: Path) -> None:
    """The child session shares its parent's meter: its request is in the parent Task's spend,
    and the parent's budget stops the request after it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    delegate = {
        "tool_calls": [
            {
                "name": "run_subagent",
                "arguments": {"prompt": "Caller agent: default_agent. Say hi."},
                "id": "s1",
            }
        ],
        "usage": USAGE,
    }
    script = [delegate, {"text": "hi from child", "usage": USAGE}, {"text": "never sent", "usage": USAGE}]
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        priced(agent.root, server)
        parent = await agent.create_session(workspace_dir=workspace)
        out = await collect(parent.run([user_text("delegate")], approve=allow, budget_usd=0.13))
        assert len(server.calls) == 2  # the parent's first request and the child's
        assert parent.spend is not None and parent.spend.task.usd == pytest.approx(2 * REQUEST_USD)
        assert parent.spend.task.requests == 2
        assert any(
            t.startswith("[stopped before a model request: this cell's budget of $0.13") for t in texts(out)
        )
        parent.dispose()


def _png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


async def test_the_vision_describer_and_compaction_count_in_the_task(tmp_path: Path) -> None:
    """describe_image's request to the project's vision model and a compaction's summary request
    are the Task's spend like its own turns (each priced at its own model's price)."""
    import yaml

    from penguin_jupyter.state import add_model, paths

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "chart.png").write_bytes(_png())
    describe = {
        "tool_calls": [{"name": "describe_image", "arguments": {"source": "chart.png"}, "id": "d1"}],
        "usage": USAGE,
    }
    script = [
        describe,
        {"text": "a green dot", "usage": USAGE},  # the describer's answer
        {"text": "[summary]a chart[/summary]", "usage": USAGE},  # compaction after the first turn
        {"text": "The chart is one green dot.", "usage": {"prompt_tokens": 500, "completion_tokens": 10}},
    ]
    with ScriptedModelServer(script) as server:
        agent = await create_agent()
        priced(agent.root, server)
        update_project_config(
            agent.root, "default_project", lambda cfg: setattr(cfg.models[0], "vision", False)
        )
        add_model(
            agent.root,
            "default_project",
            provider="openai",
            model_id="eyes",
            base_url=server.url,
            api_key="sk-eyes",
            client_type="openai-chat",
            vision_default=True,
            price={"input": 20.0, "output": 20.0},
        )
        config_file = paths.system_config_path(agent.root, agent.project_id, agent.agent_id)
        doc = yaml.safe_load(config_file.read_text())
        doc["compaction"] = {**(doc.get("compaction") or {}), "max_context_length": 1000}
        config_file.write_text(yaml.safe_dump(doc, sort_keys=False))
        session = await agent.create_session(workspace_dir=workspace)
        out = await collect(session.run([user_text("what is in chart.png?")], approve=allow))
        assert "The chart is one green dot." in texts(out)
        assert len(server.calls) == 4
        assert session.spend is not None and session.spend.task.requests == 4
        describer_usd = (5000 * 20.0 + 100 * 20.0) / 1_000_000
        final_usd = (500 * 10.0 + 10 * 10.0) / 1_000_000  # small enough not to compact again
        assert session.spend.task.usd == pytest.approx(2 * REQUEST_USD + describer_usd + final_usd)
        session.dispose()
