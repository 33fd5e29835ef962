"""The third-party internals `llm/llm_sdk.py` relies on still have the shape it expects.

One test per numbered item of that module's docstring; each fails naming the item, so an
upgrade of agenthub, openai, anthropic or google-genai that moves one is caught here, loudly,
instead of as a silent loss of a shortcut or a request that never leaves. The count of items is
pinned too: a new internal goes into that module and gets its test here."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys

import agenthub
import pytest
from agenthub.base_client import LLMClient
from openai import AsyncOpenAI
from openai._models import FinalRequestOptions

from penguin_jupyter.llm.config import GenerativeModelConfig
from penguin_jupyter.llm.provider import KEY_VARIABLES, MissingCredential, open_provider
from penguin_jupyter.seams import llm_sdk

ROUTES = {
    "openai-chat": "OpenaiChatClient",
    "openai-chat-vllm-adapter": "OpenaiChatVllmAdapterClient",
    "openai-responses": "OpenaiResponsesClient",
    "ant-messages": "AntMessagesClient",
    "claude-sonnet-4-6": "Claude5Client",
    "gpt-5.5": "GPT6Client",
    "gemini-3-flash": "Gemini3_8Client",
    "deepseek-v4-pro": "DeepSeekV4Client",
    "glm-5.1": "GLM5_3Client",
    "kimi-k2.5": "KimiK3Client",
    "minimax-m3": "MiniMaxM3Client",
}


def test_the_module_lists_exactly_the_internals_tested_here() -> None:
    items = re.findall(r"^(\d)\. ", inspect.getdoc(llm_sdk) or "", re.M)
    assert items == ["1", "2", "3", "4", "5", "6", "7", "8"], (
        "a new internal needs its shape test in this file"
    )


def test_item_1_agenthub_routes_client_types_to_the_classes_the_adapter_knows() -> None:
    for client_type, name in ROUTES.items():
        cls = llm_sdk.protocol_client_class(client_type)
        assert cls is not None and cls.__name__ == name, f"item 1: agenthub routes {client_type!r} to {cls}"
        assert issubclass(cls, LLMClient)
        # the key variable the adapter checks up front is the one the client reads itself
        source = (
            inspect.getsource(cls.__init__) if "__init__" in vars(cls) else inspect.getsource(cls.__mro__[1])
        )
        assert KEY_VARIABLES[name] in source, f"item 1: {name} no longer reads {KEY_VARIABLES[name]}"
    assert llm_sdk.protocol_client_class("no-such-model") is None


@pytest.mark.parametrize("client_type", sorted(ROUTES))
def test_item_2_every_protocol_client_keeps_its_sdk_object_in_client(client_type: str) -> None:
    provider = open_provider(
        GenerativeModelConfig(
            model_id=client_type, api_key="k", base_url="http://127.0.0.1:9/v1", client_type=client_type
        )
    )
    sdk = llm_sdk.sdk_object(provider.protocol_client)
    module = type(getattr(sdk, "wrapped", sdk)).__module__.split(".")[0]
    assert module in ("openai", "anthropic", "google"), f"item 2: {client_type} holds {type(sdk)} in _client"
    # openai and anthropic: retries off and the passthrough in; Gemini: neither is possible
    assert provider.reports_responses is (module != "google")
    if module != "google":
        assert sdk.wrapped.max_retries == 0


def test_item_3_openai_prepares_every_attempt_through_prepare_options() -> None:
    hook = AsyncOpenAI._prepare_options
    assert inspect.iscoroutinefunction(hook), "item 3: AsyncOpenAI._prepare_options is no longer async"
    assert list(inspect.signature(hook).parameters) == ["self", "options"], "item 3: its signature changed"
    request = inspect.getsource(type(AsyncOpenAI(api_key="k")).request)
    assert "self._prepare_options(options)" in request, "item 3: request() no longer calls the hook"
    fields = set(FinalRequestOptions.model_fields)
    assert {"json_data", "extra_json", "files", "content"} <= fields, (
        f"item 3: FinalRequestOptions has {fields}"
    )
    assert llm_sdk.openapi_dumps({"a": [1]}) == b'{"a":[1]}'
    assert not llm_sdk.is_omitted({})


def test_item_4_every_protocol_client_converts_through_the_replaceable_method() -> None:
    for client_type in ROUTES:
        cls = llm_sdk.protocol_client_class(client_type)
        assert callable(getattr(cls, "transform_uni_message_to_model_input", None)), f"item 4: {cls}"
        base = inspect.getsource(LLMClient.streaming_response)
        assert "self._streaming_response_internal(messages, config)" in base, "item 4: the stream path moved"
    from agenthub.claude5.client import Claude5Client

    stream = inspect.getsource(Claude5Client._streaming_response_internal)
    assert "if self._use_bedrock:" in stream and '["cache_control"] = ' in stream, (
        "item 4: Claude's Bedrock path no longer edits the converted list as read"
    )
    claude = Claude5Client(model="claude-sonnet-4-6", api_key="k", base_url="http://127.0.0.1:9")
    bedrock = Claude5Client(model="claude-sonnet-4-6", api_key="id,secret", base_url="bedrock://us-east-1")
    assert not llm_sdk.claude_on_bedrock(claude) and llm_sdk.claude_on_bedrock(bedrock), "item 4"


def test_item_5_agenthubs_ant_messages_client_still_cannot_be_built_as_is() -> None:
    """When this fails, agenthub (or anthropic) fixed the double credential: drop item 5."""
    from agenthub.ant_messages import AntMessagesClient

    with pytest.raises(ValueError, match="at most one of"):
        AntMessagesClient("m", api_key="k", base_url="http://127.0.0.1:9")
    assigned = set(re.findall(r"self\.(\w+)(?::[^=\n]+)? = ", inspect.getsource(AntMessagesClient.__init__)))
    assert assigned == {"_model", "_client", "_history"}, (
        f"item 5: AntMessagesClient.__init__ now sets {assigned}"
    )
    built = llm_sdk.build_ant_messages_client("m", "sk-ant", "http://127.0.0.1:9")
    assert isinstance(built, AntMessagesClient)
    sdk = built._client  # type: ignore[attr-defined]
    headers = {**sdk.default_headers, **sdk.auth_headers}
    assert headers["X-Api-Key"] == "sk-ant" and headers["Authorization"] == "Bearer sk-ant"


def test_item_6_google_genai_builds_generate_content_bodies_as_read() -> None:
    import json

    from google import genai
    from google.genai import _api_client, models, types

    stream = inspect.getsource(models.AsyncModels._generate_content_stream)
    steps = [
        "types._GenerateContentParameters(",
        "_GenerateContentParameters_to_mldev(",
        "_GenerateContentParameters_to_vertex(",
        "_common.convert_to_dict(request_dict)",
        "_common.encode_unserializable_types(request_dict)",
        "self._api_client.async_request_streamed(",
    ]
    for step in steps:
        assert step in stream, f"item 6: _generate_content_stream no longer runs {step}"
    streamed = inspect.getsource(_api_client.BaseApiClient.async_request_streamed)
    assert "self._build_request(" in streamed, "item 6: async_request_streamed no longer calls _build_request"
    send = inspect.getsource(_api_client.BaseApiClient._async_request_once)
    assert "if not isinstance(http_request.data, bytes):" in send, (
        "item 6: bytes bodies are no longer sent as is"
    )
    assert "json.dumps(http_request.data)" in send, "item 6: the SDK encodes bodies differently"
    agenthub_call = inspect.getsource(llm_sdk.protocol_client_class("gemini-3-flash"))
    assert "self._client.aio.models.generate_content_stream(" in agenthub_call, (
        "item 6: agenthub's call moved"
    )

    sdk = genai.Client(api_key="k", http_options={"base_url": "http://127.0.0.1:9"})
    api_client = llm_sdk.gemini_api_client(sdk)
    assert (
        isinstance(api_client, _api_client.BaseApiClient)
        and llm_sdk.gemini_api_client(object()) is None
    )
    contents = [
        types.Content(role="model", parts=[types.Part(text="a", thought_signature=b"\x8f\x00")]),
        types.Content(role="user", parts=[types.Part.from_bytes(data=b"\x89PNG", mime_type="image/png")]),
    ]
    assert llm_sdk.gemini_wire_contents(api_client, contents) == [
        {"parts": [{"text": "a", "thoughtSignature": "jwA="}], "role": "model"},
        {"parts": [{"inlineData": {"data": "iVBORw==", "mime_type": "image/png"}}], "role": "user"},
    ]
    request = api_client._build_request("post", "models/m:streamGenerateContent", {"contents": []}, None)
    assert request.data == {"contents": []}, "item 6: HttpRequest.data is no longer the request dict"
    json.dumps(request.data)
    llm_sdk.replace_gemini_stream(sdk, lambda bound: "stream hook")
    llm_sdk.replace_gemini_build_request(api_client, lambda bound: "build hook")
    assert (
        sdk.aio.models.generate_content_stream == "stream hook" and api_client._build_request == "build hook"
    )
    llm_sdk.restore_gemini_request_path(sdk)
    assert inspect.ismethod(sdk.aio.models.generate_content_stream) and inspect.ismethod(
        api_client._build_request
    )
    other = genai.Client(api_key="k")
    assert "generate_content_stream" not in vars(other.aio.models), "item 6: a hook leaked to another client"


async def test_item_7_anthropic_merges_then_copies_the_body_once_per_request() -> None:
    from anthropic import AsyncAnthropic
    from anthropic._models import FinalRequestOptions as AnthropicOptions

    from penguin_jupyter.llm.anthropic_prepare import KeptListsUnwalked

    request = inspect.getsource(AsyncAnthropic.request)
    assert "await self._copy_and_prepare(options)" in request, "item 7: request() no longer calls it"
    sdk = AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9")
    messages = [{"role": "user", "content": "hi"}]
    options = AnthropicOptions.construct(
        method="post", url="/v1/messages", json_data={"model": "m", "messages": []}
    )
    options.extra_json = {"messages": messages, "top_k": 3}
    prepared = await sdk._copy_and_prepare(options)
    assert prepared is not options and options.extra_json is not None, (
        "item 7: it no longer copies the options"
    )
    assert prepared.json_data == {"model": "m", "messages": messages, "top_k": 3}, "item 7: merge changed"
    assert prepared.extra_json is None and prepared.json_data["messages"] is not messages, "item 7: no copy"
    copied = llm_sdk.anthropic_options_copy(options)
    assert copied is not options and copied.json_data is options.json_data
    assert llm_sdk.replace_copy_and_prepare(sdk, KeptListsUnwalked, KeptListsUnwalked)
    assert not llm_sdk.replace_copy_and_prepare(sdk, KeptListsUnwalked, KeptListsUnwalked)
    assert not llm_sdk.replace_copy_and_prepare(
        AsyncOpenAI(api_key="k"), KeptListsUnwalked, KeptListsUnwalked
    )
    ours = await sdk._copy_and_prepare(options)
    assert (
        list(ours.json_data.items()) == list(prepared.json_data.items())
        and ours.json_data["messages"] is messages
    )
    llm_sdk.restore_copy_and_prepare(sdk)
    assert inspect.ismethod(sdk._copy_and_prepare)


def test_item_8_openai_builds_the_responses_event_discriminator_on_first_use() -> None:
    """In a fresh process: the union's discriminator is not built before any event is parsed,
    `build_stream_event_parser` builds it, and a parse then finds it built (cached)."""
    code = """
import openai._models as models
from agenthub.openai_chat.client import OpenaiChatClient
from agenthub.openai_responses.client import OpenaiResponsesClient
from openai.types.responses import ResponseStreamEvent
from penguin_jupyter.seams.llm_sdk import build_stream_event_parser

built = []
build = models._build_discriminated_union_meta
def counting(**kwargs):
    built.append(models.DISCRIMINATOR_CACHE.get(kwargs["union"]) is None)
    return build(**kwargs)
models._build_discriminated_union_meta = counting
assert not build_stream_event_parser(OpenaiChatClient)
assert built == [], "item 8: a chat client built something"
assert build_stream_event_parser(OpenaiResponsesClient)
assert built and built[0], "item 8: the discriminator was already built, or not by construct_type"
built.clear()
event = models.construct_type(value={"type": "response.output_text.delta", "delta": "x",
    "output_index": 0, "content_index": 0, "item_id": "i", "sequence_number": 3}, type_=ResponseStreamEvent)
assert type(event).__name__ == "ResponseTextDeltaEvent", "item 8: the union no longer parses events"
assert built == [False], "item 8: a later parse builds the discriminator again"
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_missing_key_is_named_before_any_sdk_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in set(KEY_VARIABLES.values()):
        monkeypatch.delenv(variable, raising=False)
    for client_type, name in ROUTES.items():
        config = GenerativeModelConfig(model_id=client_type, client_type=client_type)
        with pytest.raises(MissingCredential, match=f"set {KEY_VARIABLES[name]}$"):
            open_provider(config)


def test_agenthub_version_is_the_one_these_shapes_were_read_from() -> None:
    version = getattr(agenthub, "__version__", None)
    assert version is None or version.startswith("0.4"), f"agenthub {version}: re-read llm_sdk.py"
