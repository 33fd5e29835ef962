"""The ScriptedModelServer as agenthub's `openai-chat` client sees it: events, recorded requests,
and the exception each fault kind produces (the table the LLM layer maps to outcomes)."""

from __future__ import annotations

import asyncio
import json
import time

import httpx2
import openai
import pytest
from agenthub.errors import EmptyResponseError, ToolCallArgumentParseError

from penguin_jupyter.testing import EXHAUSTED_MESSAGE, ScriptedModelServer, demo_entries
from tests.support.server import cause_chain, collect, items, joined, openai_chat_client

TOOLS = [
    {
        "name": "exec_command",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
    }
]


async def test_text_reasoning_and_usage_reach_the_client():
    entry = {
        "reasoning": "Think about it.",
        "text": "Hello from the scripted model!",
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 40, "reasoning_tokens": 5},
    }
    with ScriptedModelServer([entry]) as server:
        events = await collect(openai_chat_client(server), "hi")
    assert joined(events, "text", "text") == "Hello from the scripted model!"
    assert joined(events, "thinking", "thinking") == "Think about it."
    assert all(
        item["fidelity"] == {"reasoning_field": "reasoning_content"} for item in items(events, "thinking")
    )
    # a str is split into 8-char deltas
    assert [item["text"] for item in items(events, "text")] == ["Hello fr", "om the s", "cripted ", "model!"]
    last = events[-1]
    assert last["event_type"] == "stop"
    assert last["finish_reason"] == "stop"
    assert last["usage_metadata"] == {
        "cached_tokens": 40,
        "prompt_tokens": 60,
        "thoughts_tokens": 5,
        "response_tokens": 15,
    }


async def test_reasoning_field_can_be_the_openrouter_spelling():
    with ScriptedModelServer(
        [{"reasoning": ["a", "b"], "reasoning_field": "reasoning", "text": "t"}]
    ) as server:
        events = await collect(openai_chat_client(server))
    assert [(i["thinking"], i["fidelity"]) for i in items(events, "thinking")] == [
        ("a", {"reasoning_field": "reasoning"}),
        ("b", {"reasoning_field": "reasoning"}),
    ]


async def test_explicit_delta_lists_and_chunk_size():
    entries = [{"text": ["one ", "two ", "three"]}, {"text": "abcdefghij", "chunk": 3}]
    # the second turn is a user message with the first call unanswered: off the real API's rules
    with ScriptedModelServer(entries, validate=False) as server:
        client = openai_chat_client(server)
        first = await collect(client)
        second = await collect(client)
    assert [item["text"] for item in items(first, "text")] == ["one ", "two ", "three"]
    assert [item["text"] for item in items(second, "text")] == ["abc", "def", "ghi", "j"]


async def test_several_tool_calls_stream_with_default_and_explicit_ids():
    entry = {
        "text": "Running two commands.",
        "tool_calls": [
            {"name": "exec_command", "arguments": {"cmd": "ls -la", "description": "List files"}},
            {"name": "read_file", "arguments": '{"file_path":"a.txt"}', "id": "call_custom"},
            {"name": "exec_command", "arguments": {"cmd": "pwd"}},
        ],
    }
    with ScriptedModelServer([entry]) as server:
        events = await collect(openai_chat_client(server), "do it", {"tools": TOOLS})
    calls = items(events, "tool_call")
    assert [(c["name"], c["tool_call_id"], c["arguments"]) for c in calls] == [
        ("exec_command", "call_0", {"cmd": "ls -la", "description": "List files"}),
        ("read_file", "call_custom", {"file_path": "a.txt"}),
        ("exec_command", "call_2", {"cmd": "pwd"}),
    ]
    partials = items(events, "partial_tool_call")
    # the first fragment of each call names it; argument fragments follow, concatenating exactly
    assert [p["name"] for p in partials if p["name"]] == ["exec_command", "read_file", "exec_command"]
    by_call: dict[str, str] = {}
    current = ""
    for p in partials:
        if p["name"]:
            current = p["tool_call_id"]
        by_call[current] = by_call.get(current, "") + p["arguments"]
    assert by_call == {
        "call_0": '{"cmd":"ls -la","description":"List files"}',
        "call_custom": '{"file_path":"a.txt"}',
        "call_2": '{"cmd":"pwd"}',
    }
    assert events[-1]["finish_reason"] == "tool_call"


async def test_default_tool_call_ids_count_across_entries():
    entries = [
        {"tool_calls": [{"name": "a"}]},
        {"tool_calls": [{"name": "b", "id": "mine"}, {"name": "c"}]},
    ]
    # the second turn is a user message with the first call unanswered: off the real API's rules
    with ScriptedModelServer(entries, validate=False) as server:
        client = openai_chat_client(server)
        first = await collect(client)
        second = await collect(client)
    assert [c["tool_call_id"] for c in items(first, "tool_call")] == ["call_0"]
    assert [c["tool_call_id"] for c in items(second, "tool_call")] == ["mine", "call_2"]
    assert items(first, "tool_call")[0]["arguments"] == {}


async def test_finish_reason_length_is_passed_through():
    with ScriptedModelServer([{"text": "cut off", "finish_reason": "length"}]) as server:
        events = await collect(openai_chat_client(server))
    assert events[-1]["finish_reason"] == "length"


async def test_recorded_request_body_has_everything_the_model_was_sent():
    with ScriptedModelServer(["first answer", "second answer"]) as server:
        client = openai_chat_client(server)
        config = {"tools": TOOLS, "system_prompt": "You are terse.", "max_tokens": 777}
        await collect(client, "question one", config)
        await collect(client, "question two", config)
        first, second = server.requests
    assert first["model"] == "scripted-model"
    assert first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    assert first["max_completion_tokens"] == 777
    assert first["tools"] == [{"type": "function", "function": TOOLS[0]}]
    assert first["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "text", "text": "question one"}]},
    ]
    # stateful: the second request replays the first exchange
    assert second["messages"][1:] == [
        {"role": "user", "content": [{"type": "text", "text": "question one"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "first answer"}]},
        {"role": "user", "content": [{"type": "text", "text": "question two"}]},
    ]
    assert server.remaining == []
    assert server.served == 2
    assert [h["authorization"] for h in server.request_headers] == ["Bearer test", "Bearer test"]


async def test_entries_added_while_running_are_served_in_order():
    with ScriptedModelServer() as server:
        server.add({"text": "A"})
        client = openai_chat_client(server)
        assert joined(await collect(client), "text", "text") == "A"
        server.extend([{"text": "B"}, "C"])
        assert server.remaining == [{"text": "B"}, {"text": "C"}]
        assert joined(await collect(client), "text", "text") == "B"
        assert joined(await collect(client), "text", "text") == "C"


async def test_list_models():
    with ScriptedModelServer(model="my-model") as server:
        assert await openai_chat_client(server).list_models() == ["my-model"]


async def test_demo_script_plays_through_four_turns():
    # each turn is a fresh user message, the tool calls left unanswered: off the real API's rules
    with ScriptedModelServer(demo_entries(), validate=False) as server:
        client = openai_chat_client(server)
        turns = [await collect(client, "Summarize sales.csv") for _ in range(4)]
    names = [[c["name"] for c in items(events, "tool_call")] for events in turns]
    assert names == [["exec_command"], ["read_file"], ["write_file"], []]
    first_call = items(turns[0], "tool_call")[0]["arguments"]
    assert first_call["cmd"] == "ls -la" and first_call["description"]
    assert joined(turns[0], "thinking", "thinking")
    assert items(turns[1], "tool_call")[0]["arguments"] == {"file_path": "sales.csv"}
    written = items(turns[2], "tool_call")[0]["arguments"]
    assert written["file_path"] == "summary.md" and "$12,451.50" in written["content"]
    assert "$12,451.50" in joined(turns[3], "text", "text")
    assert turns[3][-1]["finish_reason"] == "stop"


# --- faults: what the client raises ------------------------------------------------------------


async def _raised(server: ScriptedModelServer, **client_kwargs) -> BaseException:
    with pytest.raises(Exception) as info:
        await collect(openai_chat_client(server, **client_kwargs))
    return info.value


async def test_fault_http_401_raises_authentication_error():
    with ScriptedModelServer([{"text": "x", "fault": {"kind": "http", "status": 401}}]) as server:
        exc = await _raised(server)
    assert type(exc) is openai.AuthenticationError
    assert exc.status_code == 401
    assert str(exc) == "Error code: 401 - Incorrect API key provided."
    assert exc.body == {
        "message": "Incorrect API key provided.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }


async def test_fault_http_429_raises_rate_limit_error():
    with ScriptedModelServer([{"fault": {"kind": "http", "status": 429}}]) as server:
        exc = await _raised(server)
        assert len(server.requests) == 1
    assert type(exc) is openai.RateLimitError
    assert exc.status_code == 429
    assert str(exc) == "Error code: 429 - Rate limit reached. Please try again later."
    assert exc.code == "rate_limit_exceeded"


async def test_fault_http_500_with_message_raises_internal_server_error():
    fault = {"kind": "http", "status": 500, "message": "upstream exploded"}
    with ScriptedModelServer([{"fault": fault}]) as server:
        exc = await _raised(server)
    assert type(exc) is openai.InternalServerError
    assert exc.status_code == 500
    assert str(exc) == "Error code: 500 - upstream exploded"
    assert exc.type == "server_error"


async def test_fault_http_400_raises_bad_request_with_custom_code():
    fault = {"kind": "http", "status": 400, "message": "context too long", "code": "context_length_exceeded"}
    with ScriptedModelServer([{"fault": fault}]) as server:
        exc = await _raised(server)
    assert type(exc) is openai.BadRequestError
    assert str(exc) == "Error code: 400 - context too long"
    assert exc.code == "context_length_exceeded"


async def test_sdk_default_retries_consume_one_entry_per_attempt():
    """The openai SDK retries 429/5xx twice by itself unless max_retries=0 (docs/model.md "Request lifecycle" note)."""
    entries = [{"fault": {"kind": "http", "status": 429, "headers": {"retry-after-ms": "10"}}}] * 2 + ["ok"]
    with ScriptedModelServer(entries) as server:
        events = await collect(openai_chat_client(server, sdk_retries=None))
        assert len(server.requests) == 3
    assert joined(events, "text", "text") == "ok"


async def test_script_exhausted_is_a_non_retried_500_with_an_obvious_message():
    with ScriptedModelServer([]) as server:
        exc = await _raised(server, sdk_retries=None)
        assert len(server.requests) == 1  # x-should-retry: false stops the SDK's own retries
    assert type(exc) is openai.InternalServerError
    assert str(exc) == f"Error code: 500 - {EXHAUSTED_MESSAGE}"
    assert EXHAUSTED_MESSAGE == "scripted model server: script exhausted"


@pytest.mark.parametrize("after", [0, 3])
async def test_fault_drop_raises_api_connection_error(after):
    entry = {"text": "a long enough answer to stream", "fault": {"kind": "drop", "after": after}}
    with ScriptedModelServer([entry]) as server:
        exc = await _raised(server)
    assert type(exc) is openai.APIConnectionError
    assert str(exc) == "Connection error."
    chain = cause_chain(exc)
    assert any(isinstance(e, httpx2.RemoteProtocolError) for e in chain)
    assert "peer closed connection without sending complete message body (incomplete chunked read)" in [
        str(e) for e in chain
    ]


async def test_fault_malformed_raises_json_decode_error():
    with ScriptedModelServer([{"text": "hello there", "fault": {"kind": "malformed", "after": 1}}]) as server:
        exc = await _raised(server)
    assert type(exc) is json.JSONDecodeError
    assert str(exc) == "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"


async def test_fault_stall_pauses_then_completes():
    entry = {"text": "slow answer", "fault": {"kind": "stall", "after": 1, "seconds": 1.0}}
    with ScriptedModelServer([entry]) as server:
        started = time.monotonic()
        events = await collect(openai_chat_client(server))
        elapsed = time.monotonic() - started
    assert joined(events, "text", "text") == "slow answer"
    assert elapsed >= 0.9


async def test_stalled_stream_ends_when_the_server_stops():
    server = ScriptedModelServer([{"text": "never", "fault": {"kind": "stall", "after": 1, "seconds": 600}}])
    server.start()
    client = openai_chat_client(server)
    task = asyncio.create_task(collect(client))
    await asyncio.to_thread(server.wait_for_requests, 1)
    await asyncio.sleep(0.2)
    started = time.monotonic()
    await asyncio.to_thread(server.stop)
    with pytest.raises(openai.APIConnectionError):
        await asyncio.wait_for(task, 30)
    assert time.monotonic() - started < 20


async def test_missing_usage_chunk_fails_agenthub_validation():
    with ScriptedModelServer([{"text": "no usage", "usage": None}]) as server:
        exc = await _raised(server)
    assert type(exc) is ValueError
    assert str(exc).startswith("Last event must carry usage_metadata, got: ")


async def test_thinking_only_response_raises_empty_response_error():
    with ScriptedModelServer([{"reasoning": "only thoughts"}]) as server:
        exc = await _raised(server)
    assert type(exc) is EmptyResponseError
    assert str(exc) == "OpenaiChatClient returned no content other than thinking (finish_reason='stop')."


async def test_unparsable_tool_arguments_raise_tool_call_argument_parse_error():
    with ScriptedModelServer([{"tool_calls": [{"name": "exec_command", "arguments": "{bad"}]}]) as server:
        exc = await _raised(server)
    assert type(exc) is ToolCallArgumentParseError
    assert str(exc) == (
        'Invalid streamed tool call arguments from OpenaiChatClient for tool "exec_command" '
        "(tool_call_id=\"call_0\", length=4, preview='{bad'): "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )
