"""GenerativeModel over real HTTP to the scripted model server (agenthub's openai-chat client,
unchanged): answers, tool calls, usage, every fault's outcome, abort, idle timeout, resume."""

from __future__ import annotations

import asyncio
import time

import pytest

from penguin_jupyter.interfaces import AbortSignal, GenerativeModelParameters, LLMOutcome
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import (
    TokenCounts,
    assistant_text,
    image_url,
    tool_call,
    tool_call_output,
    user_text,
)
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.llm import collect, kinds, payloads, scripted_model

pytestmark = pytest.mark.timeout(120)


def _complete(messages):
    return [p for p in payloads(messages) if p["type"] in ("text", "thinking", "tool_call")]


async def test_text_answer_streams_and_completes():
    with ScriptedModelServer(
        [{"text": ["Hel", "lo"], "usage": {"prompt_tokens": 12, "completion_tokens": 4}}]
    ) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("hi")])
    assert outcome == LLMOutcome("completed")
    assert kinds(messages) == [
        "partial_text:start",
        "partial_text:delta",
        "partial_text:delta",
        "partial_text:stop",
        "text",
        "token_usage",
    ]
    assert [p["text"] for p in payloads(messages)[:5]] == ["", "Hel", "lo", "", "Hello"]
    assert all(p["stop_reason"] == "completed" for p in payloads(messages)[:5])
    assert payloads(messages)[-1] == {
        "type": "token_usage",
        "session": {"cache_read": 0, "cache_write": 12, "output": 4, "total": 16},
        "request": {"cache_read": 0, "cache_write": 12, "output": 4, "total": 16},
    }
    body = s.requests[0]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert "tools" not in body and "tool_choice" not in body


async def test_reasoning_text_and_two_tool_calls_in_one_turn():
    entry = {
        "reasoning": ["let me ", "see"],
        "text": ["Listing", " now"],
        "tool_calls": [
            {"name": "exec_command", "arguments": {"cmd": "ls"}, "id": "call_a"},
            {"name": "read_file", "arguments": {"path": "a.txt"}, "id": "call_b"},
        ],
        "finish_reason": "tool_calls",
    }
    with ScriptedModelServer([entry]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("go")])
    assert outcome.status == "completed"
    assert _complete(messages) == [
        {
            "type": "thinking",
            "role": "assistant",
            "thinking": "let me see",
            "stop_reason": "completed",
            "fidelity": {"reasoning_field": "reasoning_content"},
        },
        {"type": "text", "role": "assistant", "text": "Listing now", "stop_reason": "completed"},
        {
            "type": "tool_call",
            "role": "assistant",
            "name": "exec_command",
            "arguments": '{"cmd":"ls"}',
            "tool_call_id": "call_a",
            "stop_reason": "completed",
        },
        {
            "type": "tool_call",
            "role": "assistant",
            "name": "read_file",
            "arguments": '{"path":"a.txt"}',
            "tool_call_id": "call_b",
            "stop_reason": "completed",
        },
    ]
    order = kinds(messages)
    assert order[:8] == [
        "partial_thinking:start",
        "partial_thinking:delta",
        "partial_thinking:delta",
        "partial_thinking:stop",
        "thinking",
        "partial_text:start",
        "partial_text:delta",
        "partial_text:delta",
    ]
    # each call: start(name) → deltas → stop → complete, and the first call closes before the second opens
    calls = [(k, p) for k, p in zip(order, payloads(messages), strict=True) if "tool_call" in k]
    a_stop = next(i for i, (k, p) in enumerate(calls) if k == "tool_call" and p["tool_call_id"] == "call_a")
    b_start = next(
        i
        for i, (k, p) in enumerate(calls)
        if k == "partial_tool_call:start" and p["tool_call_id"] == "call_b"
    )
    assert a_stop < b_start
    a_fragments = "".join(
        p["arguments"] for k, p in calls if k == "partial_tool_call:delta" and p["tool_call_id"] == "call_a"
    )
    assert a_fragments == '{"cmd":"ls"}'
    assert calls[0][1]["name"] == "exec_command" and calls[0][0] == "partial_tool_call:start"
    assert order[-1] == "token_usage"


async def test_usage_session_totals_accumulate_and_cached_tokens_map():
    script = [
        {"text": "a", "usage": {"prompt_tokens": 12, "completion_tokens": 4, "cached_tokens": 2}},
        {"text": "b", "usage": {"prompt_tokens": 20, "completion_tokens": 3, "reasoning_tokens": 1}},
    ]
    with ScriptedModelServer(script) as s:
        model = scripted_model(s)
        first, _ = await collect(model, [user_text("one")])
        second, _ = await collect(model, [user_text("two")])
    assert payloads(first)[-1]["request"] == {"cache_read": 2, "cache_write": 10, "output": 4, "total": 16}
    assert payloads(second)[-1]["request"] == {"cache_read": 0, "cache_write": 20, "output": 3, "total": 23}
    assert payloads(second)[-1]["session"] == {"cache_read": 2, "cache_write": 30, "output": 7, "total": 39}
    assert model.session_tokens == TokenCounts(cache_read=2, cache_write=30, output=7, total=39)
    assert model.last_request_total == 23


async def test_only_new_messages_are_sent_on_the_stateful_client():
    with ScriptedModelServer([{"text": "first"}, {"text": "second"}]) as s:
        model = scripted_model(s)
        await collect(model, [user_text("one")])
        await collect(model, [user_text("two")])
    assert s.requests[1]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "one"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "first"}]},
        {"role": "user", "content": [{"type": "text", "text": "two"}]},
    ]


# --- faults → outcomes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "status", "message_part", "permanent"),
    [
        ({"kind": "http", "status": 401}, "auth", "Incorrect API key provided.", False),
        ({"kind": "http", "status": 429}, "timeout", "Rate limit reached", False),
        ({"kind": "http", "status": 500}, "timeout", "HTTP 500: ", False),
        ({"kind": "http", "status": 503}, "timeout", "HTTP 503: ", False),
        # a first 4xx that does not pass is retried once (rejections.py makes a repeat permanent)
        ({"kind": "http", "status": 400}, "failed", "HTTP 400: ", False),
        ({"kind": "http", "status": 403}, "failed", "HTTP 403: ", False),
        ({"kind": "http", "status": 404}, "failed", "HTTP 404: ", False),
        ({"kind": "http", "status": 400, "code": "invalid_api_key"}, "auth", "invalid_api_key", False),
        # the provider's own word: x-should-retry: false makes even a 5xx or a 429 permanent
        ({"kind": "http", "status": 500, "headers": {"x-should-retry": "false"}}, "failed", "HTTP 500: ", True),
        ({"kind": "http", "status": 429, "headers": {"x-should-retry": "false"}}, "failed", "HTTP 429: ", True),
    ],
)
async def test_http_faults_classify(fault, status, message_part, permanent):
    with ScriptedModelServer([{"fault": fault}]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("q")])
        assert len(s.requests) == 1
    assert messages == []
    assert outcome.status == status
    assert message_part in outcome.message
    assert outcome.permanent is permanent


async def test_sdk_retries_are_off_even_when_the_server_invites_them():
    retry = {"kind": "http", "status": 500, "headers": {"x-should-retry": "true"}}
    with ScriptedModelServer([{"fault": retry}, {"text": "late"}]) as s:
        _, outcome = await collect(scripted_model(s), [user_text("q")])
        assert outcome.status == "timeout"
        assert len(s.requests) == 1
        assert s.remaining == [{"text": "late"}]


async def test_drop_mid_stream_is_timeout_and_closes_the_open_text():
    with ScriptedModelServer([{"text": ["ab", "cd", "ef"], "fault": {"kind": "drop", "after": 1}}]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("q")])
    assert outcome.status == "timeout"
    assert "peer closed connection" in outcome.message
    assert kinds(messages) == ["partial_text:start", "partial_text:delta", "partial_text:stop", "text"]
    assert payloads(messages)[-2:] == [
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "stop",
            "text": "",
            "stop_reason": "timeout",
        },
        {"type": "text", "role": "assistant", "text": "ab", "stop_reason": "timeout"},
    ]


async def test_drop_before_any_chunk_is_timeout():
    with ScriptedModelServer([{"text": "x", "fault": {"kind": "drop", "after": 0}}]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("q")])
    assert (messages, outcome.status) == ([], "timeout")


async def test_malformed_chunk_is_malformed():
    with ScriptedModelServer([{"text": ["ab", "cd"], "fault": {"kind": "malformed", "after": 1}}]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("q")])
    assert outcome.status == "malformed"
    assert "line 1 column 2" in outcome.message
    assert payloads(messages)[-1] == {
        "type": "text",
        "role": "assistant",
        "text": "ab",
        "stop_reason": "malformed",
    }


async def test_truncated_stream_without_final_usage_is_malformed():
    with ScriptedModelServer([{"text": "hi", "usage": None}]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("q")])
    assert outcome.status == "malformed"
    # readable, without the whole event agenthub quotes
    assert outcome.message == "the model's stream ended early: Last event must carry usage_metadata"
    assert "token_usage" not in kinds(messages)


async def test_thinking_only_response_is_malformed():
    with ScriptedModelServer([{"reasoning": "only thoughts"}]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("q")])
    assert outcome.status == "malformed"
    assert "no content other than thinking" in outcome.message
    assert payloads(messages)[-1]["stop_reason"] == "malformed"


async def test_stall_past_the_idle_timer_is_timeout():
    entry = {"text": ["ab", "cd"], "fault": {"kind": "stall", "after": 1, "seconds": 5}}
    with ScriptedModelServer([entry]) as s:
        started = time.monotonic()
        messages, outcome = await collect(scripted_model(s, request_timeout_ms=400), [user_text("q")])
        elapsed = time.monotonic() - started
    assert outcome.status == "timeout"
    assert elapsed < 4.5  # well before the stall ends
    assert payloads(messages)[-1] == {
        "type": "text",
        "role": "assistant",
        "text": "ab",
        "stop_reason": "timeout",
    }


async def test_stall_shorter_than_the_idle_timer_completes():
    entry = {"text": ["ab", "cd"], "fault": {"kind": "stall", "after": 2, "seconds": 0.3}}
    with ScriptedModelServer([entry]) as s:
        messages, outcome = await collect(scripted_model(s, request_timeout_ms=5000), [user_text("q")])
    assert outcome.status == "completed"
    assert _complete(messages)[-1]["text"] == "abcd"


async def test_a_failed_request_leaves_the_history_untouched():
    with ScriptedModelServer([{"fault": {"kind": "http", "status": 500}}, {"text": "ok"}]) as s:
        model = scripted_model(s)
        await collect(model, [user_text("lost")])
        _, outcome = await collect(model, [user_text("again")])
    assert outcome.status == "completed"
    assert s.requests[1]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "again"}]}]


# --- abort ---------------------------------------------------------------------------------------


async def test_abort_mid_stream_closes_fragments_as_aborted():
    signal = AbortSignal()
    entry = {"text": ["one ", "two ", "three"], "delay_ms": 200}
    with ScriptedModelServer([entry]) as s:
        model = scripted_model(s)
        items = []
        async for item in model.stream_generate(GenerativeModelParameters([user_text("q")], signal=signal)):
            items.append(item)
            if (
                getattr(item.payload if not isinstance(item, LLMOutcome) else None, "event_type", None)
                == "delta"
            ):
                signal.abort("user")  # aborted while the generator is suspended at this yield
    messages, outcome = items[:-1], items[-1]
    assert outcome == LLMOutcome("aborted")
    assert payloads(messages) == [
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "start",
            "text": "",
            "stop_reason": "completed",
        },
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "delta",
            "text": "one ",
            "stop_reason": "completed",
        },
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "stop",
            "text": "",
            "stop_reason": "aborted",
        },
        {"type": "text", "role": "assistant", "text": "one ", "stop_reason": "aborted"},
    ]


async def test_a_request_aborted_after_the_stream_was_read_to_its_end_leaves_no_history():
    """The upstream is read ahead of the consumer, so agenthub may have committed the exchange
    before the abort is seen: only a completed request may stay in the stateful history."""
    signal = AbortSignal()
    with ScriptedModelServer([{"text": ["one ", "two"]}, {"text": "fresh"}]) as s:
        model = scripted_model(s)
        async for item in model.stream_generate(GenerativeModelParameters([user_text("q")], signal=signal)):
            if not isinstance(item, LLMOutcome) and getattr(item.payload, "event_type", None) == "start":
                for _ in range(200):  # let the reader reach the end (and agenthub commit) first
                    if model._client.protocol_client.get_history():
                        break
                    await asyncio.sleep(0.01)
                signal.abort("user")
            last = item
        assert last == LLMOutcome("aborted")
        assert model._client.protocol_client.get_history() == []
        _messages, outcome = await collect(model, [user_text("again")])
        assert outcome.status == "completed"
    assert s.requests[1]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "again"}]}]


async def test_abort_while_waiting_for_the_next_event():
    signal = AbortSignal()
    entry = {"text": ["ab", "cd"], "fault": {"kind": "stall", "after": 1, "seconds": 10}}
    with ScriptedModelServer([entry]) as s:
        model = scripted_model(s)
        asyncio.get_running_loop().call_later(0.5, signal.abort, "stop pressed")
        started = time.monotonic()
        messages, outcome = await collect(model, [user_text("q")], signal=signal)
        assert time.monotonic() - started < 8
    assert outcome.status == "aborted"
    assert payloads(messages)[-1] == {
        "type": "text",
        "role": "assistant",
        "text": "ab",
        "stop_reason": "aborted",
    }


async def test_already_aborted_signal_sends_nothing():
    signal = AbortSignal()
    signal.abort()
    with ScriptedModelServer([{"text": "never"}]) as s:
        messages, outcome = await collect(scripted_model(s), [user_text("q")], signal=signal)
        assert s.requests == []
    assert (messages, outcome) == ([], LLMOutcome("aborted"))


async def test_abort_of_a_partial_tool_call_keeps_it_from_dispatch():
    signal = AbortSignal()
    entry = {
        "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "ls -la /tmp"}, "id": "c1"}],
        "chunk": 4,
        "delay_ms": 150,
    }
    with ScriptedModelServer([entry]) as s:
        items = []
        async for item in scripted_model(s).stream_generate(
            GenerativeModelParameters([user_text("q")], signal=signal)
        ):
            items.append(item)
            if not isinstance(item, LLMOutcome) and getattr(item.payload, "event_type", None) == "delta":
                signal.abort()
    assert items[-1].status == "aborted"
    complete = _complete(items[:-1])
    assert complete == [
        {
            "type": "tool_call",
            "role": "assistant",
            "name": "exec_command",
            "arguments": '{"cm',
            "tool_call_id": "c1",
            "stop_reason": "aborted",
        }
    ]


# --- input and credentials ---------------------------------------------------------------------


async def test_mixed_roles_and_empty_input_fail_without_a_request():
    with ScriptedModelServer([]) as s:
        model = scripted_model(s)
        _, mixed = await collect(model, [user_text("q"), assistant_text("a")])
        _, empty = await collect(model, [])
        assert s.requests == []
    assert mixed.status == "failed" and "does not accept mixed roles" in mixed.message
    assert empty == LLMOutcome("failed", "stream_generate requires at least one input message")


async def test_missing_api_key_is_auth_and_environment_key_is_used(monkeypatch):
    with ScriptedModelServer([{"text": "ok"}]) as s:
        model = scripted_model(s, api_key=None)
        _, outcome = await collect(model, [user_text("q")])
        assert outcome.status == "auth"
        assert "OPENAI_API_KEY" in outcome.message
        assert s.requests == []
        monkeypatch.setenv("OPENAI_API_KEY", "from-env")
        _, outcome = await collect(model, [user_text("q")])
    assert outcome.status == "completed"


def test_unknown_model_is_a_one_line_value_error():
    with pytest.raises(ValueError, match="model 'no-such-model'") as info:
        GenerativeModel(GenerativeModelConfig(model_id="no-such-model", api_key="k"))
    assert "\n" not in str(info.value)


def test_bad_thinking_level_is_a_one_line_value_error():
    with pytest.raises(ValueError, match="unknown thinking level 'extreme'"):
        GenerativeModelConfig(model_id="m", thinking_level="extreme")


# --- resume -------------------------------------------------------------------------------------


async def test_set_history_replays_committed_history_in_the_next_request():
    history = [
        user_text("list files"),
        assistant_text("sure"),
        tool_call("get_time", {}, "get_time"),
        tool_call("get_time", {"tz": "UTC"}, "get_time#2"),
        tool_call_output("12:00", "get_time"),
        tool_call_output("13:00", "get_time#2"),
        assistant_text("done"),
    ]
    with ScriptedModelServer([{"text": "resumed"}]) as s:
        model = scripted_model(s)
        model.set_history(history)
        _, outcome = await collect(model, [user_text("and now?")])
    assert outcome.status == "completed"
    sent = s.requests[0]["messages"]
    assert sent[0] == {"role": "user", "content": [{"type": "text", "text": "list files"}]}
    assert sent[1]["role"] == "assistant"
    assert sent[1]["content"] == [{"type": "text", "text": "sure"}]
    assert [(c["id"], c["function"]["name"]) for c in sent[1]["tool_calls"]] == [
        ("get_time", "get_time"),
        ("get_time", "get_time"),
    ]
    assert sent[2:4] == [
        {"role": "tool", "tool_call_id": "get_time", "content": "12:00"},
        {"role": "tool", "tool_call_id": "get_time", "content": "13:00"},
    ]
    assert sent[4] == {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
    assert sent[-1] == {"role": "user", "content": [{"type": "text", "text": "and now?"}]}
    # historical ids are reserved: a new call under the same provider id gets the next suffix
    assert model.tool_call_ids.allocate("get_time") == "get_time#3"


async def test_image_input_reaches_the_provider():
    data_url = "data:image/png;base64,iVBORw0KGgo="
    with ScriptedModelServer([{"text": "a picture"}]) as s:
        _, outcome = await collect(scripted_model(s), [user_text("what is this?"), image_url(data_url)])
    assert outcome.status == "completed"
    content = s.requests[0]["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "what is this?"}
    assert content[1]["type"] == "image_url" and content[1]["image_url"]["url"] == data_url


async def test_set_history_skips_events_and_partials():
    from penguin_jupyter.omni import partial_text, request_begin, request_end, token_usage

    history = [
        request_begin(),
        user_text("earlier"),
        partial_text("start"),
        assistant_text("answer"),
        token_usage({"total": 3}, {"total": 3}),
        request_end("completed"),
    ]
    with ScriptedModelServer([{"text": "ok"}]) as s:
        model = scripted_model(s)
        model.set_history(history)
        await collect(model, [user_text("now")])
    assert s.requests[0]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "earlier"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
        {"role": "user", "content": [{"type": "text", "text": "now"}]},
    ]


async def test_abort_after_an_eagerly_emitted_tool_call_keeps_it_completed():
    signal = AbortSignal()
    entry = {
        "tool_calls": [
            {"name": "exec_command", "arguments": {"cmd": "ls"}, "id": "c1"},
            {"name": "exec_command", "arguments": {"cmd": "pwd"}, "id": "c2"},
        ],
        "finish_reason": "tool_calls",
    }
    with ScriptedModelServer([entry]) as s:
        items = []
        async for item in scripted_model(s).stream_generate(
            GenerativeModelParameters([user_text("q")], signal=signal)
        ):
            items.append(item)
            if not isinstance(item, LLMOutcome) and item.payload.type == "tool_call":
                signal.abort()  # e.g. the user pressed Stop while the engine awaited approval
    assert items[-1] == LLMOutcome("aborted")
    complete = _complete(items[:-1])
    assert [(p["tool_call_id"], p["stop_reason"]) for p in complete] == [("c1", "completed")]
    assert "token_usage" not in kinds(items[:-1])
