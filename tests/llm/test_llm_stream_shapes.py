"""Streams of every shape (issue 42, defect 4), over real HTTP from the scripted model server.

Parallel tool calls whose argument fragments alternate by `index` (as some OpenAI-compatible
servers stream them) arrive whole; a stream that cannot be read — bytes that are not UTF-8, a
`data:` line holding `null` or a number, an event of the wrong shape — ends the request
`malformed` with one readable line saying what came, in every protocol. On 3758335 the first
ended `malformed` and the others `failed` with a raw Python message (`'int' object has no
attribute 'choices'`, `'utf-8' codec can't decode byte 0xff…`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from penguin_jupyter.interfaces import LLMOutcome
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.llm import collect


@dataclass(frozen=True)
class Client:
    label: str
    model_id: str
    client_type: str | None
    provider_root: bool

    def model(self, server: ScriptedModelServer) -> GenerativeModel:
        base_url = server.root_url if self.provider_root else server.url
        return GenerativeModel(
            GenerativeModelConfig(
                model_id=self.model_id, client_type=self.client_type, api_key="k", base_url=base_url
            )
        )


CLIENTS = [
    Client("openai-chat", "any-model", "openai-chat", False),
    Client("openai-responses", "gpt-5.5", None, False),
    Client("anthropic", "claude-sonnet-4-6", None, True),
    Client("gemini", "gemini-3-flash", None, True),
]
TWO_CALLS = [
    {"name": "read_file", "arguments": {"file_path": "first_file_with_a_long_name.csv", "limit": 10}},
    {"name": "read_file", "arguments": {"file_path": "b.csv"}},
    {"name": "exec_command", "arguments": {"cmd": "wc -l *.csv", "description": "count"}},
]


async def test_interleaved_parallel_tool_call_deltas_assemble_by_index() -> None:
    entry = {"text": "Reading both.", "tool_calls": TWO_CALLS, "interleave_tool_calls": True, "chunk": 3}
    with ScriptedModelServer([entry, "done"]) as server:
        model = CLIENTS[0].model(server)
        messages, outcome = await collect(model, [user_text("go")])
        assert outcome == LLMOutcome("completed")
        calls = [m.payload for m in messages if m.payload.type == "tool_call"]
        assert [(c.name, json.loads(c.arguments)) for c in calls] == [(c["name"], c["arguments"]) for c in TWO_CALLS]
        # and the follow-up the provider validates pairs every call
        from penguin_jupyter.omni import tool_call_output

        _, outcome = await collect(model, [tool_call_output("ok", c.tool_call_id) for c in calls])
        assert outcome == LLMOutcome("completed")


async def test_sequential_parallel_calls_still_stream_the_first_call_live() -> None:
    """The common shape is unchanged: the first call's argument fragments arrive as they stream."""
    entry = {"tool_calls": TWO_CALLS[:2], "chunk": 4}
    with ScriptedModelServer([entry]) as server:
        messages, outcome = await collect(CLIENTS[0].model(server), [user_text("go")])
    assert outcome == LLMOutcome("completed")
    deltas = [m.payload for m in messages if m.payload.type == "partial_tool_call" and m.payload.event_type == "delta"]
    first_id = deltas[0].tool_call_id
    assert len([d for d in deltas if d.tool_call_id == first_id]) > 3  # fragment by fragment
    calls = [m.payload for m in messages if m.payload.type == "tool_call"]
    assert [json.loads(c.arguments) for c in calls] == [c["arguments"] for c in TWO_CALLS[:2]]


UNREADABLE = [
    pytest.param("\udcff\udcfe garbage bytes", "", id="garbage-bytes"),
    pytest.param("null", "", id="null"),
    pytest.param("42", "", id="number"),
    pytest.param('{"choices":[{"index":0,"delta":null}]}', "", id="null-delta-chat"),
    pytest.param('{"type":"content_block_delta","index":0,"delta":null}', "", id="null-delta-anthropic"),
    pytest.param('{"candidates":[{"content":{"parts":[{"text":5}]}}]}', "", id="wrong-type-gemini"),
]


@pytest.mark.parametrize("data, says", UNREADABLE)
@pytest.mark.parametrize("client", CLIENTS, ids=[c.label for c in CLIENTS])
async def test_an_unreadable_stream_is_malformed_in_one_readable_line(client: Client, data: str, says: str) -> None:
    entry = {"text": "partial answer", "fault": {"kind": "malformed", "after": 2, "data": data}}
    with ScriptedModelServer([entry], model=client.model_id) as server:
        _, outcome = await collect(client.model(server), [user_text("go")])
    assert outcome.status == "malformed", outcome
    message = outcome.message or ""
    assert "\n" not in message and message.startswith("the model's stream"), message
    assert says in message
    if "garbage" in data:  # google-genai reads undecodable bytes as U+FFFD: then it is not JSON
        assert "not valid UTF-8 (byte 0xff" in message or "not JSON" in message
