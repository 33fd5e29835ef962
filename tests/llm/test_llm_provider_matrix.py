"""Every client agenthub routes to, over its own wire protocol (issue 26): the scripted model server
speaks OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini
streamGenerateContent with each provider's request validation (thinking signatures echoed back,
every tool call answered) and its own error bodies. Real SDKs, real loopback HTTP, real
subprocesses for the resume, a real kernel for the `%%penguin` cells."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from penguin_jupyter.interfaces import LLMOutcome
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import OmniMessage, to_json, tool_call_output, user_text
from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.llm import collect
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
KEY = "sk-matrix-good"


@dataclass(frozen=True)
class Client:
    """One row: what a user configures, the protocol it speaks, and where the SDK's base_url points."""

    label: str
    model_id: str
    client_type: str | None
    protocol: str
    provider_root: bool  # Anthropic and Gemini SDKs add their own path prefix

    def base_url(self, server: ScriptedModelServer) -> str:
        return server.root_url if self.provider_root else server.url


CLIENTS = [
    Client("Claude 4.6+", "claude-sonnet-4-6", None, "anthropic-messages", True),
    Client("GPT-5.4+/6", "gpt-5.5", None, "openai-responses", False),
    Client("Gemini 3", "gemini-3-flash", None, "gemini", True),
    Client("DeepSeek v4", "deepseek-v4-pro", None, "openai-responses", False),
    Client("GLM 5", "glm-5.1", None, "openai-chat", False),
    Client("Kimi K2.5+", "kimi-k2.5", None, "openai-chat", False),
    Client("MiniMax M3", "minimax-m3", None, "openai-responses", False),
    Client("ant-messages", "claude-compatible", "ant-messages", "anthropic-messages", True),
    Client("openai-responses", "any-model", "openai-responses", "openai-responses", False),
    Client("openai-chat", "any-model", "openai-chat", "openai-chat", False),
    Client("vLLM adapter", "qwen3.6-35b-a3b", "openai-chat-vllm-adapter", "openai-chat", False),
]
IDS = [client.label for client in CLIENTS]
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]
TWO_CALLS = {
    "reasoning": "Both files are needed.",
    "tool_calls": [
        {"name": "read_file", "arguments": {"path": "a.csv"}},
        {"name": "read_file", "arguments": {"path": "b.csv"}},
    ],
}
ANSWER = {"reasoning": "Now I can answer.", "text": "Both have 3 rows."}


def model_for(client: Client, server: ScriptedModelServer, *, api_key: str = KEY) -> GenerativeModel:
    return GenerativeModel(
        GenerativeModelConfig(
            model_id=client.model_id,
            client_type=client.client_type,
            api_key=api_key,
            base_url=client.base_url(server),
            tools=TOOLS,
            thinking_level="medium",
        )
    )


def of_type(messages: list[OmniMessage], kind: str) -> list:  # type: ignore[type-arg]
    return [m.payload for m in messages if m.payload.type == kind]


def refusals(server: ScriptedModelServer) -> list[str]:
    return [f"{call.status}: {call.error}" for call in server.calls if call.error]


@pytest.mark.parametrize("client", CLIENTS, ids=IDS)
async def test_thinking_two_tool_calls_and_the_follow_up_pass_the_providers_validation(
    client: Client,
) -> None:
    with ScriptedModelServer([TWO_CALLS, ANSWER], model=client.model_id, api_key=KEY) as server:
        model = model_for(client, server)
        first, outcome = await collect(model, [user_text("How many rows do a.csv and b.csv have?")])
        assert outcome == LLMOutcome("completed")
        assert [t.thinking for t in of_type(first, "thinking")] == ["Both files are needed."]  # summary shown
        calls = of_type(first, "tool_call")
        assert [json.loads(c.arguments) for c in calls] == [{"path": "a.csv"}, {"path": "b.csv"}]
        outputs = [tool_call_output(f"{c.arguments}: 3 rows", c.tool_call_id) for c in calls]
        second, outcome = await collect(model, outputs)
        assert outcome == LLMOutcome("completed"), refusals(server)
        assert [t.text for t in of_type(second, "text")] == ["Both have 3 rows."]
        assert server.protocols == [client.protocol] * 2
        assert refusals(server) == []


RESUME_SCRIPT = """
import asyncio, json, sys
sys.path.insert(0, {tests!r})
from tests.support.llm import collect
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import from_json, user_text
config = GenerativeModelConfig(**json.loads(sys.argv[1]))
history = [from_json(line) for line in sys.stdin.read().splitlines()]
async def main():
    model = GenerativeModel(config)
    model.set_history(history)
    replies, outcome = await collect(model, [user_text("And c.csv?")])
    print(json.dumps({{"status": outcome.status, "message": outcome.message,
        "text": [m.payload.text for m in replies if m.payload.type == "text"]}}))
asyncio.run(main())
"""


@pytest.mark.parametrize("client", CLIENTS, ids=IDS)
async def test_a_resume_in_a_new_process_sends_a_history_the_provider_accepts(client: Client) -> None:
    """The trace form of a thinking + tool round trip (signatures, encrypted reasoning, Gemini's
    bytes) goes to a new process; its first request must still pass the provider's validation."""
    with ScriptedModelServer(
        [TWO_CALLS, ANSWER, "c.csv has 5 rows."], model=client.model_id, api_key=KEY
    ) as server:
        model = model_for(client, server)
        question = user_text("How many rows do a.csv and b.csv have?")
        first, _ = await collect(model, [question])
        calls = of_type(first, "tool_call")
        outputs = [tool_call_output("3 rows", c.tool_call_id) for c in calls]
        second, _ = await collect(model, outputs)
        complete = [
            m for m in [question, *first, *outputs, *second] if not m.payload.type.startswith("partial_")
        ]
        lines = "\n".join(to_json(m) for m in complete if m.type == "model_msg")
        config = {
            "model_id": client.model_id,
            "client_type": client.client_type,
            "api_key": KEY,
            "base_url": client.base_url(server),
            "tools": TOOLS,
            "thinking_level": "medium",
        }
        done = subprocess.run(
            [sys.executable, "-c", RESUME_SCRIPT.format(tests=str(REPO / "tests")), json.dumps(config)],
            input=lines,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result == {"status": "completed", "message": None, "text": ["c.csv has 5 rows."]}, refusals(
            server
        )
        assert refusals(server) == []
        assert len(server.calls) == 3


@pytest.mark.parametrize("client", CLIENTS, ids=IDS)
async def test_the_providers_bad_key_answer_is_an_auth_stop_after_one_request(client: Client) -> None:
    with ScriptedModelServer(["unused"], model=client.model_id, api_key=KEY) as server:
        _, outcome = await collect(model_for(client, server, api_key="sk-wrong-key"), [user_text("hi")])
        assert outcome.status == "auth", outcome
        assert "\n" not in (outcome.message or "") and "sk-wrong-key" not in (outcome.message or "")
        assert len(server.calls) == 1


@pytest.mark.parametrize("status", [429, 529, 503])
@pytest.mark.parametrize("client", CLIENTS, ids=IDS)
async def test_rate_limits_and_overload_are_retryable_and_the_next_attempt_succeeds(
    client: Client, status: int
) -> None:
    script = [{"fault": {"kind": "http", "status": status}}, "Recovered."]
    with ScriptedModelServer(script, model=client.model_id, api_key=KEY) as server:
        model = model_for(client, server)
        _, outcome = await collect(model, [user_text("hi")])
        assert outcome.status == "timeout" and outcome.permanent is False, outcome  # the engine retries these
        replies, outcome = await collect(model, [user_text("hi")])
        assert outcome == LLMOutcome("completed")
        assert [t.text for t in of_type(replies, "text")] == ["Recovered."]


@pytest.mark.parametrize(("status", "expected"), [(529, "timeout"), (400, "failed")])
@pytest.mark.parametrize("client", CLIENTS, ids=IDS)
async def test_a_mid_stream_error_event_is_the_providers_error(
    client: Client, status: int, expected: str
) -> None:
    script = [{"text": "partial answer", "fault": {"kind": "error_event", "after": 3, "status": status}}]
    with ScriptedModelServer(script, model=client.model_id, api_key=KEY) as server:
        _, outcome = await collect(model_for(client, server), [user_text("hi")])
    assert outcome.status == expected, outcome
    assert outcome.message and not outcome.message.startswith(("Last event", "Streaming response"))


# --- a real kernel: one %%penguin cell with a tool call per protocol -----------------------------

KERNEL_CLIENTS = [CLIENTS[0], CLIENTS[1], CLIENTS[2], CLIENTS[9]]  # Anthropic, Responses, Gemini, Chat


@pytest.mark.kernel
@pytest.mark.parametrize("client", KERNEL_CLIENTS, ids=[c.label for c in KERNEL_CLIENTS])
def test_a_penguin_cell_runs_a_tool_call_over_each_protocol(client: Client, tmp_path: Path) -> None:
    from tests.support.kernel import KernelHarness, kernel_env

    (tmp_path / "rows.txt").write_text("one\ntwo\nthree\n")
    script = [
        {
            "reasoning": "I will count.",
            "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "wc -l rows.txt"}}],
        },
        {"reasoning": "Counted.", "text": "rows.txt has 3 lines."},
    ]
    with ScriptedModelServer(script, model=client.model_id, api_key=KEY) as server:
        add_model(
            Path(os.environ["PENGUIN_HOME"]),
            "default_project",
            provider=client.protocol,
            model_id=client.model_id,
            base_url=client.base_url(server),
            api_key=KEY,
            client_type=client.client_type,
            context_window=200000,
            default=True,
        )
        kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(tmp_path / "a.ipynb")}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            cell = kernel.execute(
                "%%penguin --approve allow-all --thinking medium\nHow many lines in rows.txt?", timeout=180
            )
            assert cell.reply["content"]["status"] == "ok", cell.stderr
            assert "Traceback" not in cell.stderr and "Traceback" not in cell.stdout
        finally:
            kernel.close()
        assert server.protocols == [client.protocol] * 2
        assert refusals(server) == []
        follow_up = server.calls[1].body
        assert "3 rows.txt" in json.dumps(follow_up)  # the command really ran and its output went back


# --- a client that cannot work: one line naming the reason, in a real kernel -----------------------

UNSERVED = [
    (
        "no client for the id",
        "totally-unknown-model",
        None,
        "no agenthub client serves client type 'totally-unknown-model'",
    ),
    (
        "an embedding client",
        "any-model",
        "text-embedding-3-small",
        "no agenthub client serves client type 'text-embedding-3-small'",
    ),
]


@pytest.mark.kernel
@pytest.mark.parametrize(
    ("model_id", "client_type", "says"), [u[1:] for u in UNSERVED], ids=[u[0] for u in UNSERVED]
)
def test_a_client_that_cannot_work_is_one_line_in_the_cell(
    model_id: str, client_type: str | None, says: str, tmp_path: Path
) -> None:
    """Never a traceback, never labelled an auth failure, and no request is sent."""
    from tests.support.kernel import KernelHarness, kernel_env

    with ScriptedModelServer(["unused"], api_key=KEY) as server:
        add_model(
            Path(os.environ["PENGUIN_HOME"]),
            "default_project",
            provider="local",
            model_id=model_id,
            base_url=server.url,
            api_key=KEY,
            client_type=client_type,
            context_window=100000,
            default=True,
        )
        kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(tmp_path / "a.ipynb")}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            cell = kernel.execute("%%penguin\nhello", timeout=120)
        finally:
            kernel.close()
        assert server.calls == []
    lines = cell.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], cell.stderr
    assert "Traceback" not in cell.stderr + cell.stdout and not cell.of_type("error")
    assert "key" not in lines[0].lower()  # not an auth failure
