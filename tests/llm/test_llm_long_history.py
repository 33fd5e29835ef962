"""Long histories: the conversation list reaches the wire around the SDK's body walk
(`llm/sdk_passthrough.py`), or from the wire form kept per message (`llm/gemini_request.py`), and
nothing is lost — the bytes the scripted server receives for a 4,000-message history are exactly
the bytes the SDK builds on its own."""

from __future__ import annotations

import asyncio
import itertools
import json
import types
from typing import Any

import openai.resources.chat.completions.completions as openai_completions
import pytest
from google import genai

from penguin_jupyter.interfaces import LLMOutcome
from penguin_jupyter.llm import gemini_request
from penguin_jupyter.llm.body_encoding import PreEncodedBody
from penguin_jupyter.llm.sdk_passthrough import SdkBodyPassthrough, passthrough_create
from penguin_jupyter.omni import (
    OmniMessage,
    assistant_text,
    image_url,
    thinking,
    tool_call,
    tool_call_output,
    user_text,
)
from penguin_jupyter.testing import ScriptedModelServer, signatures
from penguin_jupyter.testing import server as scripted_server
from tests.support.llm import collect, scripted_model

pytestmark = pytest.mark.timeout(240)

TOOLS = [
    {
        "name": "exec_command",
        "description": "Run a command.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
    }
]
PNG_DATA_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def long_history(pairs: int, with_thinking: bool = True) -> list[OmniMessage]:
    """`2 × pairs` complete messages of every kind a session replays: user and assistant text
    (quotes, newlines, non-ASCII), thinking with its wire field, tool calls with nested
    arguments, tool outputs, an image."""
    history: list[OmniMessage] = []
    for n in range(pairs):
        kind = n % 4
        if kind == 0:
            history += [
                user_text(f'Remember item {n}: "quoted"\nline two, é 中文 \\ slash'),
                assistant_text(f"Noted {n}."),
            ]
        elif kind == 1:
            history.append(user_text(f"Run step {n}."))
            if with_thinking:
                history.append(
                    thinking(f"step {n} needs a command", fidelity={"reasoning_field": "reasoning_content"})
                )
            history.append(
                tool_call(
                    "exec_command",
                    json.dumps({"cmd": f"echo {n}", "opts": {"n": n, "flags": [1, None]}}),
                    f"call_{n}",
                )
            )
        elif kind == 2:
            history += [
                tool_call_output(f"output {n}\n\ttabbed", f"call_{n - 1}"),
                assistant_text(f"Step {n - 1} done."),
            ]
        else:
            history += [
                image_url(PNG_DATA_URL) if n % 40 == 3 else user_text(f"And {n}?"),
                assistant_text(f"Fine {n}."),
            ]
    return history


@pytest.fixture
def raw_bodies(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every request body the scripted server reads, as the bytes that arrived."""
    bodies: list[bytes] = []
    read_body = scripted_server._Handler._drain_body

    def capture(handler: Any) -> bytes:
        raw = read_body(handler)
        bodies.append(raw)
        return raw

    monkeypatch.setattr(scripted_server._Handler, "_drain_body", capture)
    return bodies


def as_the_sdk_builds_it(model: Any) -> Any:
    """The same model with every shortcut taken out: the SDK client agenthub holds unwrapped (the
    SDK's own walk), its own body encoding, and agenthub's whole-history conversion."""
    routed = model._client.protocol_client
    if isinstance(routed._client, genai.Client):  # Gemini: the SDK's own request path again
        sdk = routed._client
        assert "generate_content_stream" in sdk.aio.models.__dict__
        model._client.without_shortcuts()
        assert "generate_content_stream" not in sdk.aio.models.__dict__
        assert "_build_request" not in sdk._api_client.__dict__
        assert "transform_uni_message_to_model_input" not in routed.__dict__
        return model
    assert isinstance(routed._client, SdkBodyPassthrough)
    model._client.without_shortcuts()
    assert not isinstance(routed._client, SdkBodyPassthrough)
    assert not isinstance(routed._client.__dict__.get("_prepare_options"), PreEncodedBody)
    assert "transform_uni_message_to_model_input" not in routed.__dict__
    return model


SCRIPT = [
    "one",
    {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "ls"}, "id": "call_ls"}]},
    {"reasoning": ["so"], "text": ["three"]},
]


async def converse(model: Any, history: list[OmniMessage] | None = None) -> None:
    """Three requests: a question, a tool call answered with its output, a last question."""
    model.set_history(long_history(2000) if history is None else history)
    replies, outcome = await collect(model, [user_text("What was item 0?")])
    assert outcome == LLMOutcome("completed")
    replies, outcome = await collect(model, [user_text("List the folder.")])
    assert outcome == LLMOutcome("completed")
    (call,) = [m.payload for m in replies if m.payload.type == "tool_call"]
    _, outcome = await collect(model, [tool_call_output("a.txt\nb.txt", call.tool_call_id)])
    assert outcome == LLMOutcome("completed")


async def test_4000_message_history_sends_the_bytes_the_sdk_would_build(raw_bodies: list[bytes]) -> None:
    assert len(long_history(2000)) >= 4000
    for shortcuts in (True, False):
        with ScriptedModelServer(SCRIPT) as server:
            model = scripted_model(server, tools=TOOLS, system_prompt="You are terse.")
            await converse(model if shortcuts else as_the_sdk_builds_it(model))
    assert len(raw_bodies) == 6
    shipped, sdk_built = raw_bodies[:3], raw_bodies[3:]
    for n, (ours, theirs) in enumerate(zip(shipped, sdk_built, strict=True)):
        assert ours == theirs, f"request {n + 1}"
    sent = [json.loads(body) for body in shipped]
    assert [len(body["messages"]) for body in sent] == [4002, 4004, 4006]
    assert sent[0]["messages"][0] == {"role": "system", "content": "You are terse."}
    assert list(sent[0])[:3] == ["model", "stream", "messages"]
    assert sent[2]["messages"][-1]["role"] == "tool"


async def test_the_sdk_walk_sees_no_history(monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[tuple[int, int]] = []
    sdk_walk = openai_completions.async_maybe_transform

    async def counting_walk(data: Any, expected_type: Any) -> Any:
        walked.append((len(data.get("messages", [])), len(data.get("tools", []))))
        return await sdk_walk(data, expected_type)

    monkeypatch.setattr(openai_completions, "async_maybe_transform", counting_walk)
    with ScriptedModelServer(["ok"]) as server:
        model = scripted_model(server, tools=TOOLS)
        model.set_history(long_history(52))  # ends on a whole pair: no tool call left unanswered
        _, outcome = await collect(model, [user_text("next")])
        assert outcome == LLMOutcome("completed")
        assert len(server.requests[0]["messages"]) > 100 and len(server.requests[0]["tools"]) == 1
    assert walked == [(0, 0)]


@pytest.mark.parametrize("client_type", ["claude-sonnet-4-6", "ant-messages"])
async def test_the_anthropic_sdk_copies_no_history(monkeypatch: pytest.MonkeyPatch, client_type: str) -> None:
    """anthropic merges `extra_body` before its per-request copy of the body: the copy still sees
    empty lists (`llm/anthropic_prepare.py`), and the history still reaches the server."""
    import anthropic._base_client as anthropic_client

    copied: list[tuple[int, int]] = []
    sdk_copy = anthropic_client.async_prepare_request_data

    async def counting_copy(data: Any, **kwargs: Any) -> Any:
        if kwargs.get("location") == "body" and isinstance(data, dict):
            copied.append((len(data.get("messages", [])), len(data.get("tools", []))))
        return await sdk_copy(data, **kwargs)

    monkeypatch.setattr(anthropic_client, "async_prepare_request_data", counting_copy)
    with ScriptedModelServer(["ok"]) as server:
        model = scripted_model(server, client_type=client_type, base_url=server.root_url, tools=TOOLS)
        model.set_history(long_history(52, with_thinking=False))
        _, outcome = await collect(model, [user_text("next")])
        assert outcome == LLMOutcome("completed")
        assert len(server.requests[0]["messages"]) > 50 and len(server.requests[0]["tools"]) == 1
    assert copied == [(0, 0)]


async def test_passthrough_leaves_an_explicit_extra_body_field_alone() -> None:
    seen: list[dict[str, Any]] = []

    async def create(**kwargs: Any) -> str:
        seen.append(kwargs)
        return "response"

    answered: list[bool] = []
    wrapped = passthrough_create(create, ("messages",), on_response=lambda: answered.append(True))
    assert await wrapped(model="m", messages=[{"role": "user"}], extra_body={"top_k": 3}) == "response"
    assert (
        await wrapped(model="m", messages=[{"role": "user"}], extra_body={"messages": ["theirs"]})
        == "response"
    )
    assert await wrapped(model="m", messages=({"role": "user"},)) == "response"
    assert seen[0] == {
        "model": "m",
        "messages": [],
        "extra_body": {"top_k": 3, "messages": [{"role": "user"}]},
    }
    assert seen[1] == {"model": "m", "messages": [{"role": "user"}], "extra_body": {"messages": ["theirs"]}}
    assert seen[2] == {"model": "m", "messages": ({"role": "user"},)}  # not a list: the SDK walks it
    assert answered == [True, True, True]


async def test_passthrough_lets_the_loop_run_before_the_sdk_builds_the_body() -> None:
    """agenthub converts the history in the task step that calls `create`; the SDK's body build
    starts in a later one, so the two never add up to one long stall."""
    steps = 0

    async def ticker() -> None:
        nonlocal steps
        while True:
            steps += 1
            await asyncio.sleep(0)

    async def create(**kwargs: Any) -> int:
        return steps

    ticking = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    try:
        called_at = steps
        built_at = await passthrough_create(create, ("messages",))(model="m", messages=[])
    finally:
        ticking.cancel()
    assert built_at > called_at


async def test_pre_encoded_body_is_the_sdks_encoding_and_encodes_each_element_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openai._models import FinalRequestOptions
    from openai._types import omit
    from openai._utils._json import openapi_dumps

    from penguin_jupyter.llm import body_encoding

    encoded: list[Any] = []

    def counting_dumps(obj: Any) -> bytes:
        encoded.append(obj)
        return openapi_dumps(obj)

    monkeypatch.setattr(body_encoding, "openapi_dumps", counting_dumps)

    async def sdk_prepare(options: Any) -> Any:
        return options

    hook = PreEncodedBody(sdk_prepare)
    history = [{"role": "user", "content": f'é "{n}"\n'} for n in range(50)]
    tools = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]
    for request, messages in enumerate([history[:40], [{"role": "system", "content": "s"}, *history]]):
        encoded.clear()
        json_data = {"model": "m", "stream": True, "messages": [], "tools": [], "temperature": omit}
        extra = {"messages": messages, "tools": tools, "top_k": 3}
        options = FinalRequestOptions.construct(method="post", url="/chat/completions", json_data=json_data)
        options.extra_json = extra
        options = await hook(options)
        expected = {"model": "m", "stream": True, "messages": messages, "tools": tools, "top_k": 3}
        assert options.json_data == openapi_dumps(expected) and options.extra_json is None
        new_elements = [obj for obj in encoded if isinstance(obj, dict) and "model" not in obj]
        assert len(new_elements) == (41 if request == 0 else 51)  # first: all 40 + the tool
    # the second request shifted every message by one (a system message in front): all re-encoded;
    # a third, same as the second plus one, encodes only that one
    encoded.clear()
    json_data = {"model": "m", "stream": True, "messages": [], "tools": []}
    options = FinalRequestOptions.construct(method="post", url="/chat/completions", json_data=json_data)
    options.extra_json = {"messages": [*messages, {"role": "user", "content": "new"}], "tools": tools}
    await hook(options)
    assert [obj for obj in encoded if isinstance(obj, dict) and "model" not in obj] == [
        {"role": "user", "content": "new"}
    ]


class _CaptureServer:
    """A real HTTP server on 127.0.0.1 that records each request body and answers 400."""

    def __init__(self) -> None:
        import http.server
        import threading

        bodies: list[bytes] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                bodies.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                payload = b'{"error": {"message": "captured", "type": "invalid_request_error"}}'
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.bodies = bodies
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.mark.parametrize("client_type", ["openai-responses", "openai-chat-vllm-adapter", "claude-sonnet-4-6"])
async def test_other_protocols_send_the_bytes_the_sdk_would_build(client_type: str) -> None:
    server = _CaptureServer()
    try:
        for shortcuts in (True, False):
            model = scripted_model(
                server, client_type=client_type, model_id="some-model", tools=TOOLS, system_prompt="Be terse."
            )
            if not shortcuts:
                as_the_sdk_builds_it(model)
            model.set_history(long_history(200, with_thinking="claude" not in client_type))  # no signatures
            _, outcome = await collect(model, [user_text("again")])
            assert outcome.status == "failed" and "captured" in (outcome.message or "")
    finally:
        server.close()
    shipped, sdk_built = server.bodies
    assert shipped == sdk_built
    assert len(shipped) > 20_000


def counting_nonces() -> Any:
    """An `os` for the signatures module whose `urandom` counts 0, 1, 2, …"""
    nonces = itertools.count()
    return types.SimpleNamespace(urandom=lambda size: next(nonces).to_bytes(size, "big"))


async def test_gemini_4000_message_history_sends_the_bytes_the_sdk_would_build(
    raw_bodies: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    converted = [0, 0, 0]  # Contents run through the SDK's conversion, per request (in slices)
    sdk_conversion = gemini_request.gemini_wire_contents

    def counting_conversion(api_client: Any, contents: list[Any]) -> list[Any]:
        converted[len(raw_bodies)] += len(contents)  # the request whose body is not sent yet
        return sdk_conversion(api_client, contents)

    monkeypatch.setattr(gemini_request, "gemini_wire_contents", counting_conversion)
    history = long_history(2000, with_thinking=False)  # no thinking without its signature
    for shortcuts in (True, False):
        # both runs get the same signatures from their server (the nonces are random otherwise)
        monkeypatch.setattr(signatures, "os", counting_nonces())
        with ScriptedModelServer(SCRIPT) as server:
            model = scripted_model(
                server,
                model_id="gemini-3-flash",
                client_type=None,
                base_url=server.root_url,
                tools=TOOLS,
                system_prompt="You are terse.",
            )
            await converse(model if shortcuts else as_the_sdk_builds_it(model), history)
    assert len(raw_bodies) == 6
    shipped, sdk_built = raw_bodies[:3], raw_bodies[3:]
    for n, (ours, theirs) in enumerate(zip(shipped, sdk_built, strict=True)):
        assert ours == theirs, f"request {n + 1}"
    # the resume's first request converts the whole history; later ones only what is new
    assert converted[0] >= len(history) and all(count <= 3 for count in converted[1:]), converted
    sent = [json.loads(body) for body in shipped]
    assert [len(body["contents"]) for body in sent] == [len(sent[0]["contents"]) + n for n in (0, 2, 4)]
    assert sent[0]["systemInstruction"]["parts"] == [{"text": "You are terse."}]
    assert any("inlineData" in part for content in sent[0]["contents"] for part in content["parts"])
    assert "functionResponse" in sent[2]["contents"][-1]["parts"][0]
    assert sent[2]["contents"][-2]["parts"][0]["functionCall"]["name"] == "exec_command"
    assert "\ue000penguin" not in shipped[2].decode()


# (model_id, client_type, the SDK's base_url is the server root) of every Anthropic Messages and
# OpenAI Responses client agenthub routes to
PER_MESSAGE_CLIENTS = {
    "claude-sonnet-4-6": ("claude-sonnet-4-6", None, True),
    "ant-messages": ("claude-compatible", "ant-messages", True),
    "openai-responses": ("any-model", "openai-responses", False),
    "gpt-5.5": ("gpt-5.5", None, False),
    "deepseek-v4": ("deepseek-v4-omni", None, False),  # the history has images: not a text-only one
    "minimax-m3": ("minimax-m3", None, False),
}


@pytest.mark.parametrize("client", sorted(PER_MESSAGE_CLIENTS))
async def test_anthropic_and_responses_convert_only_new_messages_and_send_the_sdks_bytes(
    raw_bodies: list[bytes], client: str
) -> None:
    model_id, client_type, at_root = PER_MESSAGE_CLIENTS[client]
    # no thinking in the resumed history: without its provider's signature no server takes it back
    history = long_history(2000, with_thinking=False)
    converted: list[int] = []
    for shortcuts in (True, False):
        with ScriptedModelServer(SCRIPT) as server:
            model = scripted_model(
                server,
                model_id=model_id,
                client_type=client_type,
                base_url=server.root_url if at_root else server.url,
                tools=TOOLS,
                system_prompt="You are terse.",
            )
            if shortcuts:
                await converse(model, history)
                conversion = model._client.protocol_client.transform_uni_message_to_model_input
                converted.append(conversion.converted_last)
            else:
                await converse(as_the_sdk_builds_it(model), history)
    assert len(raw_bodies) == 6
    shipped, sdk_built = raw_bodies[:3], raw_bodies[3:]
    for n, (ours, theirs) in enumerate(zip(shipped, sdk_built, strict=True)):
        assert ours == theirs, f"request {n + 1}"
    assert converted == [2]  # the last request: the tool call and its output, nothing older
    sent = [json.loads(body) for body in shipped]
    field = "messages" if at_root else "input"
    assert len(sent[2][field]) > len(sent[0][field]) > len(history) // 2
