"""The ScriptedModelServer speaks every protocol agenthub routes to, driven by agenthub's own
clients: text, a thinking + two-tool-call round trip whose follow-up passes the provider's
validation, a broken history answered with the provider's own error, the provider's bad-key
answer, faults, and a second server accepting the first one's opaque tokens (a resume)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import openai
import pytest
from agenthub import AutoLLMClient
from agenthub.types import ThinkingLevel
from google.genai import errors as genai_errors

from penguin_jupyter.testing import ScriptedModelServer, ScriptError, parse_entry

KEY = "sk-scripted-right-key"
TOOLS = [
    {
        "name": "exec_command",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
    }
]
THINKING = {"thinking_level": ThinkingLevel.HIGH, "thinking_summary": True}

# (model, client_type, protocol the server must see)
CLIENTS = [
    ("claude-sonnet-4-6", None, "anthropic-messages"),
    ("claude-opus-4-8", None, "anthropic-messages"),
    ("gpt-5.5", None, "openai-responses"),
    ("gemini-3-pro-preview", None, "gemini"),
    ("deepseek-v4-flash", None, "openai-responses"),
    ("glm-5", None, "openai-chat"),
    ("kimi-k2.5", None, "openai-chat"),
    ("MiniMax-M3", None, "openai-responses"),
    ("scripted-model", "openai-responses", "openai-responses"),
    ("scripted-model", "openai-chat", "openai-chat"),
    ("scripted-model", "openai-chat-vllm-adapter", "openai-chat"),
]
CLIENT_IDS = [client_type or model for model, client_type, _ in CLIENTS]


def make_client(
    server: ScriptedModelServer, model: str, client_type: str | None, key: str = KEY
) -> AutoLLMClient:
    """An agenthub client on `server` with the SDK's own retries off (each test sees one attempt)."""
    client = AutoLLMClient(model=model, client_type=client_type, api_key=key, base_url=server.url)
    inner = client._client
    if hasattr(inner._client, "with_options"):  # the OpenAI and Anthropic SDKs
        inner._client = inner._client.with_options(max_retries=0)
    return client


def config_for(client_type: str | None, **extra: Any) -> dict[str, Any]:
    # agenthub's vLLM adapter cannot send a thinking level at all (see the test below), and
    # its server streams reasoning_content unasked
    thinking = {} if client_type == "openai-chat-vllm-adapter" else THINKING
    return {"tools": TOOLS, **thinking, **extra}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content_items": [{"type": "text", "text": text}]}


def results_for(calls: list[dict[str, Any]]) -> dict[str, Any]:
    items = [
        {"type": "tool_result", "text": f"out {c['arguments']['cmd']}", "tool_call_id": c["tool_call_id"]}
        for c in calls
    ]
    return {"role": "user", "content_items": items}


async def turn(
    client: AutoLLMClient, message: dict[str, Any], config: dict[str, Any]
) -> list[dict[str, Any]]:
    return [event async for event in client.streaming_response_stateful(message=message, config=config)]


def items(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [item for event in events for item in event["content_items"] if item["type"] == kind]


def text_of(events: list[dict[str, Any]], kind: str = "text") -> str:
    key = "thinking" if kind == "thinking" else "text"
    return "".join(item[key] for item in items(events, kind))


ROUND_TRIP = [
    {
        "reasoning": "I should list the folder and check the date.",
        "text": "Let me look.",
        "tool_calls": [
            {"name": "exec_command", "arguments": {"cmd": "ls"}},
            {"name": "exec_command", "arguments": {"cmd": "date"}},
        ],
    },
    {"reasoning": "Both came back.", "text": "Two files, and it is Tuesday."},
]


# --- every client: text, and a validated round trip ---------------------------------------------


@pytest.mark.parametrize(("model", "client_type", "protocol"), CLIENTS, ids=CLIENT_IDS)
async def test_text_and_thinking_stream_in_the_clients_protocol(model, client_type, protocol):
    entry = {"reasoning": "Thinking it over.", "text": "Hello from the scripted model.", "chunk": 5}
    with ScriptedModelServer([entry], model=model, api_key=KEY) as server:
        events = await turn(make_client(server, model, client_type), user("hi"), config_for(client_type))
        assert server.protocols == [protocol]
        assert server.calls[0].status == 200 and server.calls[0].error is None
    assert text_of(events) == "Hello from the scripted model."
    assert text_of(events, "thinking") == "Thinking it over."
    assert events[-1]["usage_metadata"]["response_tokens"] is not None


@pytest.mark.parametrize(("model", "client_type", "protocol"), CLIENTS, ids=CLIENT_IDS)
async def test_two_tool_calls_round_trip_and_the_follow_up_passes_validation(model, client_type, protocol):
    with ScriptedModelServer(ROUND_TRIP, model=model, api_key=KEY) as server:
        client = make_client(server, model, client_type)
        config = config_for(client_type)
        first = await turn(client, user("What is here, and what day is it?"), config)
        calls = items(first, "tool_call")
        assert [c["arguments"] for c in calls] == [{"cmd": "ls"}, {"cmd": "date"}]
        second = await turn(client, results_for(calls), config)
        follow_up = server.calls[1]
        assert follow_up.protocol == protocol
        assert (follow_up.status, follow_up.error) == (200, None)
        assert server.served == 2 and server.remaining == []
    assert text_of(second) == "Two files, and it is Tuesday."
    echoed = json.dumps(follow_up.body)
    if protocol == "anthropic-messages":  # the thinking block came back with its signature
        assert echoed.count('"signature"') == 1 and "I should list the folder" in echoed
    if protocol == "gemini":  # the first call's thoughtSignature came back
        assert echoed.count('"thoughtSignature"') == 1
    if model == "gpt-5.5":  # the reasoning item came back with its encrypted_content
        assert echoed.count('"encrypted_content"') == 1


# --- validation bites: each protocol's own error for a broken history ---------------------------


def _drop_signature(history: list[dict[str, Any]]) -> None:
    for message in history:
        for item in message["content_items"]:
            if item["type"] == "tool_call":
                item.pop("fidelity", None)


def _edit_thinking(history: list[dict[str, Any]]) -> None:
    for message in history:
        for item in message["content_items"]:
            if item["type"] == "thinking" and item["thinking"]:
                item["thinking"] += " (edited)"


def _drop_thinking(history: list[dict[str, Any]]) -> None:
    for message in history:
        message["content_items"] = [i for i in message["content_items"] if i["type"] != "thinking"]


def _tamper_encrypted(history: list[dict[str, Any]]) -> None:
    for message in history:
        for item in message["content_items"]:
            fidelity = item.get("fidelity") or {}
            if fidelity.get("encrypted_content"):
                fidelity["encrypted_content"] = fidelity["encrypted_content"][::-1]


BREAKS: list[tuple[str, str | None, Callable[[list[dict[str, Any]]], None] | None, str]] = [
    (
        "scripted-model",
        "openai-chat",
        None,
        "must be followed by tool messages responding to each 'tool_call_id'",
    ),
    ("glm-5", None, None, "The following tool_call_ids did not have response messages: call_0, call_1"),
    (
        "claude-sonnet-4-6",
        None,
        None,
        "`tool_use` ids were found without `tool_result` blocks immediately after",
    ),
    ("claude-sonnet-4-6", None, _edit_thinking, "Invalid `signature` in `thinking` block"),
    ("claude-opus-4-8", None, _drop_thinking, "Expected `thinking` or `redacted_thinking`, but found `text`"),
    ("gpt-5.5", None, None, "No tool output found for function call call_0."),
    ("gpt-5.5", None, _drop_thinking, "was provided without its required 'reasoning' item"),
    ("gpt-5.5", None, _tamper_encrypted, "could not be verified"),
    ("deepseek-v4-flash", None, None, "No tool output found for function call call_0."),
    ("gemini-3-pro-preview", None, _drop_signature, "Function call is missing a thought_signature"),
]


@pytest.mark.parametrize(
    ("model", "client_type", "damage", "expected"),
    BREAKS,
    ids=[f"{ct or m}-{d.__name__ if d else 'unanswered'}" for m, ct, d, _ in BREAKS],
)
async def test_a_broken_history_gets_the_providers_own_400(model, client_type, damage, expected):
    with ScriptedModelServer(ROUND_TRIP, model=model, api_key=KEY) as server:
        client = make_client(server, model, client_type)
        config = config_for(client_type)
        calls = items(await turn(client, user("go"), config), "tool_call")
        if damage is None:
            follow_up = user("never mind the tools")  # the calls stay unanswered
        else:
            history = copy.deepcopy(client.get_history())
            damage(history)
            client.set_history(history)
            follow_up = results_for(calls)
        with pytest.raises(Exception) as raised:
            await turn(client, follow_up, config)
        refused = server.calls[-1]
        assert server.served == 1 and len(server.remaining) == 1  # a refusal spends no entry
    exc = raised.value
    assert refused.status == 400 and expected in (refused.error or "")
    if isinstance(exc, genai_errors.APIError):
        assert (exc.code, exc.status) == (400, "INVALID_ARGUMENT") and expected in exc.message
    else:
        assert isinstance(exc, openai.BadRequestError | anthropic.BadRequestError), repr(exc)
        assert exc.status_code == 400 and expected in str(exc)


# --- auth: the provider's own bad-key answer, read where each SDK sends the key ------------------

REPRESENTATIVES = [
    ("scripted-model", "openai-chat"),
    ("gpt-5.5", None),
    ("claude-sonnet-4-6", None),
    ("gemini-3-pro-preview", None),
]
REPRESENTATIVE_IDS = [ct or m for m, ct in REPRESENTATIVES]


@pytest.mark.parametrize(("model", "client_type"), REPRESENTATIVES, ids=REPRESENTATIVE_IDS)
async def test_a_wrong_key_gets_the_providers_bad_key_answer_and_the_right_one_is_served(model, client_type):
    with ScriptedModelServer(["Welcome."], model=model, api_key=KEY) as server:
        with pytest.raises(Exception) as raised:
            await turn(make_client(server, model, client_type, key="sk-wrong-key-1234"), user("hi"), {})
        assert server.served == 0
        good = await turn(make_client(server, model, client_type), user("hi"), {})
        assert server.calls[0].status in (400, 401) and server.calls[1].status == 200
    assert text_of(good) == "Welcome."
    exc = raised.value
    if isinstance(exc, genai_errors.ClientError):
        assert (exc.code, exc.status) == (400, "INVALID_ARGUMENT")
        assert exc.details["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    elif isinstance(exc, anthropic.AuthenticationError):
        assert exc.status_code == 401 and exc.body["error"]["type"] == "authentication_error"
    else:
        assert isinstance(exc, openai.AuthenticationError) and exc.code == "invalid_api_key"
        assert "sk-wrong-key-1234" not in str(exc)  # quoted back masked, as OpenAI does


def test_each_sdks_key_location_is_read():
    with ScriptedModelServer(["a", "b", "c"], api_key=KEY) as server:
        anthropic_ok = httpx.post(
            f"{server.root_url}/v1/messages",
            headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
            json={
                "model": "m",
                "max_tokens": 5,
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
        gemini_query = httpx.post(
            f"{server.root_url}/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse&key={KEY}",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        )
        gemini_missing = httpx.post(
            f"{server.root_url}/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        )
        assert server.protocols == ["anthropic-messages", "gemini", "gemini"]
    assert anthropic_ok.status_code == 200 and "event: message_stop" in anthropic_ok.text
    assert gemini_query.status_code == 200 and '"finishReason":"STOP"' in gemini_query.text
    assert (
        gemini_missing.status_code == 403 and gemini_missing.json()["error"]["status"] == "PERMISSION_DENIED"
    )


# --- faults, in each protocol's own shape ---------------------------------------------------------

FAULT_CASES = [
    (
        "claude-sonnet-4-6",
        None,
        {"kind": "http", "status": 529},
        anthropic.OverloadedError,
        "overloaded_error",
    ),
    (
        "claude-sonnet-4-6",
        None,
        {"kind": "error_event", "after": 3, "status": 529},
        anthropic.APIStatusError,
        "overloaded_error",
    ),
    (
        "claude-sonnet-4-6",
        None,
        {"kind": "http", "status": 429},
        anthropic.RateLimitError,
        "rate_limit_error",
    ),
    (
        "gemini-3-pro-preview",
        None,
        {"kind": "http", "status": 429},
        genai_errors.ClientError,
        "RESOURCE_EXHAUSTED",
    ),
    ("gemini-3-pro-preview", None, {"kind": "error_event", "after": 1}, genai_errors.ServerError, "INTERNAL"),
    ("gpt-5.5", None, {"kind": "http", "status": 500}, openai.InternalServerError, "server_error"),
    (
        "scripted-model",
        "openai-chat",
        {"kind": "error_event", "after": 2},
        openai.APIError,
        "server had an error",
    ),
]


@pytest.mark.parametrize(
    ("model", "client_type", "fault", "error", "marker"),
    FAULT_CASES,
    ids=[f"{ct or m}-{f['kind']}-{f.get('status', 500)}" for m, ct, f, _, _ in FAULT_CASES],
)
async def test_faults_arrive_as_the_providers_errors(model, client_type, fault, error, marker):
    entry = {"text": "this answer is cut short", "chunk": 4, "fault": fault}
    with ScriptedModelServer([entry, "recovered"], model=model) as server:
        client = make_client(server, model, client_type)
        with pytest.raises(error) as raised:
            await turn(client, user("hi"), {})
        retry = await turn(make_client(server, model, client_type), user("hi"), {})
    assert marker in str(raised.value) or marker in json.dumps(getattr(raised.value, "body", None) or {})
    assert text_of(retry) == "recovered"


@pytest.mark.parametrize(("model", "client_type"), REPRESENTATIVES, ids=REPRESENTATIVE_IDS)
@pytest.mark.parametrize("kind", ["drop", "malformed"])
async def test_a_dropped_or_malformed_stream_fails_the_request(model, client_type, kind):
    entry = {"text": "partial answer here", "chunk": 4, "fault": {"kind": kind, "after": 3}}
    with ScriptedModelServer([entry], model=model) as server, pytest.raises(Exception) as raised:
        await turn(make_client(server, model, client_type), user("hi"), {})
    if kind == "drop":
        assert any(
            isinstance(e, httpx.HTTPError | openai.APIConnectionError | anthropic.APIConnectionError)
            or "incomplete chunked read" in str(e)
            for e in _chain(raised.value)
        ), repr(raised.value)
    else:
        assert "{not json" in repr(_chain(raised.value)) or isinstance(raised.value, json.JSONDecodeError)


def _chain(exc: BaseException | None) -> list[BaseException]:
    found: list[BaseException] = []
    while exc is not None and exc not in found:
        found.append(exc)
        exc = exc.__cause__ or exc.__context__
    return found


# --- a resume: a fresh server accepts the tokens the first one issued ----------------------------


@pytest.mark.parametrize(
    ("model", "client_type"), [("claude-sonnet-4-6", None), ("gpt-5.5", None), ("gemini-3-pro-preview", None)]
)
async def test_a_second_server_accepts_the_first_servers_tokens(model, client_type):
    with ScriptedModelServer(ROUND_TRIP[:1], model=model) as first:
        client = make_client(first, model, client_type)
        calls = items(await turn(client, user("go"), config_for(client_type)), "tool_call")
        history = client.get_history()
    with ScriptedModelServer(ROUND_TRIP[1:], model=model) as second:
        resumed = make_client(second, model, client_type)
        resumed.set_history(history)
        answer = await turn(resumed, results_for(calls), config_for(client_type))
        assert (second.calls[0].status, second.calls[0].error) == (200, None)
    assert text_of(answer) == "Two files, and it is Tuesday."


# --- wire shapes the clients above do not pin down ------------------------------------------------


def _sse(response: httpx.Response) -> list[tuple[str | None, Any]]:
    events = []
    for block in response.text.split("\n\n"):
        if not block.strip():
            continue
        event, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[len("event: ") :]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: ") :])
        events.append((event, data))
    return events


def test_anthropic_wire_redacted_thinking_signature_and_input_json_delta():
    entry = {
        "reasoning": "hmm",
        "redacted_thinking": True,
        "tool_calls": [{"name": "f", "arguments": {"a": 1}, "id": "toolu_1"}],
    }
    body = {"model": "claude-sonnet-4-6", "max_tokens": 99, "stream": True, "thinking": {"type": "adaptive"}}
    with ScriptedModelServer([entry, {"reasoning": "hidden", "text": "x"}]) as server:
        events = _sse(
            httpx.post(
                f"{server.url}/messages", json={**body, "messages": [{"role": "user", "content": "go"}]}
            )
        )
        omitted = _sse(
            httpx.post(
                f"{server.url}/messages",
                json={
                    **body,
                    "thinking": {"type": "adaptive", "display": "omitted"},
                    "messages": [{"role": "user", "content": "go"}],
                },
            )
        )
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    starts = [data["content_block"]["type"] for name, data in events if name == "content_block_start"]
    assert starts == ["redacted_thinking", "thinking", "tool_use"]
    deltas = [data["delta"]["type"] for name, data in events if name == "content_block_delta"]
    assert deltas == ["thinking_delta", "signature_delta", "input_json_delta"]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    hidden = [d["delta"]["type"] for n, d in omitted if n == "content_block_delta"]
    assert hidden == ["signature_delta", "text_delta"]  # display "omitted": the signature, no thinking text


def test_responses_wire_reasoning_follows_what_the_request_asked_for():
    entry = {"reasoning": "plan", "text": "done"}
    ask = {"stream": True, "input": "hi", "store": False}
    with ScriptedModelServer([entry] * 4) as server:
        plain = _sse(httpx.post(f"{server.url}/responses", json={**ask, "model": "gpt-5.5"}))
        summary = _sse(
            httpx.post(
                f"{server.url}/responses",
                json={
                    **ask,
                    "model": "gpt-5.5",
                    "reasoning": {"summary": "concise"},
                    "include": ["reasoning.encrypted_content"],
                },
            )
        )
        deepseek = _sse(httpx.post(f"{server.url}/responses", json={**ask, "model": "deepseek-v4-pro"}))
    kinds = [[name for name, _ in stream] for stream in (plain, summary, deepseek)]
    assert (
        "response.reasoning_summary_text.delta" not in kinds[0]
        and "response.reasoning_text.delta" not in kinds[0]
    )
    assert "response.reasoning_summary_text.delta" in kinds[1]
    assert "response.reasoning_text.delta" in kinds[2]
    done = [
        d["item"] for n, d in summary if n == "response.output_item.done" and d["item"]["type"] == "reasoning"
    ]
    assert done[0]["summary"] == [{"type": "summary_text", "text": "plan"}] and done[0]["encrypted_content"]
    assert all("encrypted_content" not in d["item"] for n, d in plain if n == "response.output_item.done")
    assert kinds[0][-1] == "response.completed" and plain[-1][1]["response"]["usage"]["output_tokens"] >= 1


def test_gemini_wire_thoughts_only_when_asked_and_the_signature_on_the_first_call():
    entry = {"reasoning": "plan", "text": "ok", "tool_calls": [{"name": "a"}, {"name": "b"}]}
    contents = [{"role": "user", "parts": [{"text": "hi"}]}]
    route = "/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse"
    with ScriptedModelServer([entry, entry]) as server:
        plain = _sse(httpx.post(server.root_url + route, json={"contents": contents}))
        asked = _sse(
            httpx.post(
                server.root_url + route,
                json={
                    "contents": contents,
                    "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
                },
            )
        )
    parts = [
        p
        for _, chunk in plain
        for c in chunk["candidates"]
        for p in (c.get("content") or {}).get("parts", [])
    ]
    assert not any(p.get("thought") for p in parts)
    calls = [p for p in parts if "functionCall" in p]
    assert [c["functionCall"]["name"] for c in calls] == ["a", "b"]
    assert "thoughtSignature" in calls[0] and "thoughtSignature" not in calls[1]
    asked_parts = [
        p
        for _, chunk in asked
        for c in chunk["candidates"]
        for p in (c.get("content") or {}).get("parts", [])
    ]
    assert asked_parts[0] == {"text": "plan", "thought": True}
    final = plain[-1][1]
    assert final["candidates"][0]["finishReason"] == "STOP" and final["usageMetadata"]["totalTokenCount"] >= 2


# --- what agenthub itself cannot send, said in one line -----------------------------------------


def test_agenthub_ant_messages_cannot_be_built_against_anthropic_2_16():
    """agenthub passes the key as both api_key and auth_token; anthropic 2.16 refuses that at
    construction, so no request ever reaches a server (client-side handling: llm/)."""
    with pytest.raises(ValueError, match="Pass at most one of `api_key=`, `auth_token=`"):
        AutoLLMClient(
            model="claude-sonnet-4-6", client_type="ant-messages", api_key=KEY, base_url="http://127.0.0.1:9"
        )


async def test_agenthub_vllm_adapter_cannot_send_a_thinking_level():
    """The adapter hands `chat_template_kwargs` to the OpenAI SDK as a keyword (not extra_body),
    which openai 3.x rejects before any request; without a thinking level it works (above)."""
    with ScriptedModelServer(["unused"]) as server:
        client = make_client(server, "scripted-model", "openai-chat-vllm-adapter")
        with pytest.raises(TypeError, match="chat_template_kwargs"):
            await turn(client, user("hi"), {"thinking_level": ThinkingLevel.HIGH})
        assert server.requests == []


# --- script entries: the new keys fail in one line ------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"redacted_thinking": "yes"}, "script entry 0.redacted_thinking: expected true or false, got 'yes'"),
        (
            {"fault": {"kind": "error_event", "status": 200}},
            "script entry 0.fault.status: expected an integer >= 400, got 200",
        ),
        ({"fault": {"kind": "error_event", "seconds": 1}}, "script entry 0.fault: unknown key 'seconds'"),
    ],
)
def test_new_entry_keys_are_validated_in_one_line(raw, message):
    with pytest.raises(ScriptError) as raised:
        parse_entry(raw, 0)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)
