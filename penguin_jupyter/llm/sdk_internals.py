"""Every use of a third-party internal, in one module (docs/model-requests.md "Provider boundary").

agenthub owns the provider protocols and calls the SDKs itself, with no hooks for what this
project needs (no SDK retries: the engine retries; the long-session shortcuts; a credential the
anthropic SDK accepts). What cannot be done through a public API is done here and nowhere else,
each item naming the upstream shape it relies on; tests/llm/test_llm_sdk_internals.py checks each
shape against the installed versions and fails loudly, naming the item, when one changes:

1. `AutoLLMClient._client_class_for_model` — agenthub's routing from a client type to its
   protocol client class (read only, so the adapter builds the protocol client itself).
2. A protocol client's `_client` — the SDK object it calls (read, and replaced by one with
   `max_retries=0` wrapped in `SdkBodyPassthrough`).
3. openai's per-attempt `AsyncOpenAI._prepare_options` hook (replaced on one SDK object by
   `PreEncodedBody`) and its body encoder `openai._utils._json.openapi_dumps` / `openai._types.Omit`.
4. agenthub's `transform_uni_message_to_model_input` (replaced on one protocol-client instance by
   `IncrementalConversion` / `IncrementalSyncConversion`), and `Claude5Client._use_bedrock` (read:
   on Bedrock agenthub edits the converted list in place, so it keeps converting whole).
5. `AntMessagesClient.__init__` — rebuilt so the anthropic SDK gets one credential argument
   (agenthub passes the key as both `api_key` and `auth_token`, which anthropic ≥ 2 rejects
   before any request), setting the three attributes agenthub's `__init__` sets.
6. google-genai's request path for `generateContent`: the conversion of a Content list to its wire
   form (`types._GenerateContentParameters`, `models._GenerateContentParameters_to_mldev` /
   `_to_vertex`, `_common.convert_to_dict`, `_common.encode_unserializable_types`, the steps
   `AsyncModels._generate_content_stream` runs), the `genai.Client`'s `_api_client` and its
   `_build_request` (replaced on that one object by `gemini_request.PreConvertedContents`), whose
   `HttpRequest.data` the SDK sends as given when it is bytes, else as `json.dumps(data)`; and
   agenthub calling `client.aio.models.generate_content_stream` (replaced on that one
   `AsyncModels` object).
7. anthropic's per-request `AsyncAnthropic._copy_and_prepare` (merges `extra_body` into the body,
   then copies the whole tree with `copy_tree`, reading file inputs; replaced on one SDK object by
   `anthropic_prepare.KeptListsUnwalked`) and `anthropic._compat.model_copy`.

8. openai's stream-event parser for the Responses clients: `openai._models.construct_type` on the
   `openai.types.responses.ResponseStreamEvent` union builds its discriminator
   (`_build_discriminated_union_meta`, the pydantic schema of every variant) on the first event a
   process parses — ≈ 0.5 s of CPU; `build_stream_event_parser` has it built early, off the loop
   (the kernel's pre-warm thread, `notebook/runtime/prewarm.py`).

Nothing process-wide is patched: every replacement is on objects one model owns.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from agenthub import AutoLLMClient
from agenthub.base_client import LLMClient
from openai import AsyncOpenAI
from openai._types import Omit
from openai._utils._json import openapi_dumps

__all__ = [
    "Omit",
    "anthropic_options_copy",
    "build_ant_messages_client",
    "build_stream_event_parser",
    "claude_on_bedrock",
    "gemini_wire_contents",
    "installed_conversion",
    "openapi_dumps",
    "protocol_client_class",
    "replace_conversion",
    "replace_copy_and_prepare",
    "replace_gemini_build_request",
    "replace_gemini_stream",
    "replace_prepare_options",
    "sdk_object",
    "set_sdk_object",
]

_CONVERSION = "transform_uni_message_to_model_input"


# --- 1. routing -------------------------------------------------------------------------------


def protocol_client_class(client_type: str) -> type[LLMClient] | None:
    """The agenthub protocol client class a resolved (lower-cased) client type routes to."""
    return AutoLLMClient._client_class_for_model(client_type)


# --- 2. the SDK object of a protocol client ---------------------------------------------------


def sdk_object(routed: LLMClient) -> Any:
    """The SDK client object (AsyncOpenAI, AsyncAnthropic, genai.Client) the protocol client calls."""
    return getattr(routed, "_client", None)


def set_sdk_object(routed: LLMClient, sdk: Any) -> None:
    routed._client = sdk


# --- 3. openai's per-attempt request hook -------------------------------------------------------


def replace_prepare_options(sdk: Any, make_hook: Callable[[Any], Any], hook_type: type) -> bool:
    """Give one openai SDK client object `make_hook(its _prepare_options)`; False when `sdk` is
    not an openai client (the anthropic SDK encodes its own bodies) or already has the hook."""
    prepare = getattr(sdk, "_prepare_options", None)
    if not isinstance(sdk, AsyncOpenAI) or prepare is None or isinstance(prepare, hook_type):
        return False
    sdk._prepare_options = make_hook(prepare)  # type: ignore[method-assign]
    return True


# --- 4. agenthub's history conversion ------------------------------------------------------------


def conversion_function(routed: LLMClient) -> Any:
    """The class-level conversion function of a protocol client (to tell which protocol it is)."""
    return getattr(type(routed), _CONVERSION, None)


def replace_conversion(routed: LLMClient, make: Callable[[Any], Any]) -> None:
    """Replace the conversion method on this one protocol-client instance by `make(bound method)`."""
    setattr(routed, _CONVERSION, make(getattr(routed, _CONVERSION)))


def installed_conversion(routed: LLMClient) -> Any:
    """The instance-level replacement `replace_conversion` put on `routed` (None without one)."""
    return routed.__dict__.get(_CONVERSION)


def claude_on_bedrock(routed: LLMClient) -> bool:
    """Whether `routed` is agenthub's Claude client talking to Bedrock (`bedrock://` base URL)."""
    return getattr(routed, "_use_bedrock", False) is True


def restore_conversion(routed: LLMClient) -> Any:
    """Take an instance-level replacement out again (tests and benchmarks: the "before" path)."""
    return routed.__dict__.pop(_CONVERSION, None)


# --- 5. ant-messages -------------------------------------------------------------------------------


def build_ant_messages_client(
    model: str, api_key: str | None, base_url: str | None, default_headers: dict[str, str] | None = None
) -> LLMClient:
    """agenthub's AntMessagesClient with an SDK object the anthropic SDK accepts.

    agenthub means to send the key through both header conventions (Anthropic and DeepSeek read
    `x-api-key`, gateways such as OpenRouter and Z.AI read `Authorization: Bearer`) by passing it
    as `api_key` and `auth_token`; anthropic ≥ 2 allows only one of them, and sends `api_key` as
    the bearer header. So the key goes in as `api_key` and `x-api-key` is added as a default
    header: both conventions again, through the SDK's own options."""
    from agenthub.ant_messages import AntMessagesClient
    from anthropic import AsyncAnthropic

    key = api_key or os.getenv("ANTHROPIC_API_KEY")
    url = base_url or os.getenv("ANTHROPIC_BASE_URL")
    headers = dict(default_headers or {})
    if key:
        headers.setdefault("X-Api-Key", key)
    client = AntMessagesClient.__new__(AntMessagesClient)
    client._model = model
    client._client = AsyncAnthropic(api_key=key, base_url=url, default_headers=headers or None)
    client._history = []
    return client


# --- 6. google-genai's generateContent request path ------------------------------------------------


def gemini_api_client(sdk: Any) -> Any:
    """The `BaseApiClient` of a `genai.Client` (None for anything else)."""
    from google import genai

    return sdk._api_client if isinstance(sdk, genai.Client) else None


def gemini_wire_contents(api_client: Any, contents: list[Any]) -> list[Any]:
    """The wire form of `contents` (non-empty `types.Content` list) exactly as the SDK puts it in a
    `generateContent` request body: its own validation, conversion and JSON preparation."""
    from google.genai import _common, models, types

    parameters = types._GenerateContentParameters(model="m", contents=contents)
    to_wire = (
        models._GenerateContentParameters_to_vertex
        if api_client.vertexai
        else models._GenerateContentParameters_to_mldev
    )
    request = to_wire(api_client, parameters, None, parameters)
    request = _common.encode_unserializable_types(_common.convert_to_dict(request))
    wire: list[Any] = request["contents"]  # type: ignore[assignment]
    return wire


def replace_gemini_build_request(api_client: Any, make: Callable[[Any], Any]) -> None:
    """Replace `_build_request` on this one `BaseApiClient` by `make(its bound method)`."""
    api_client._build_request = make(api_client._build_request)


def replace_gemini_stream(sdk: Any, make: Callable[[Any], Any]) -> None:
    """Replace `generate_content_stream` on this one client's `aio.models` by `make(bound method)`."""
    models = sdk.aio.models
    models.generate_content_stream = make(models.generate_content_stream)


def restore_gemini_request_path(sdk: Any) -> None:
    """Take both replacements out again (tests and benchmarks: the "before" path)."""
    sdk.aio.models.__dict__.pop("generate_content_stream", None)
    sdk._api_client.__dict__.pop("_build_request", None)


# --- 7. anthropic's per-request body preparation ----------------------------------------------------


def replace_copy_and_prepare(sdk: Any, make: Callable[[Any], Any], hook_type: type) -> bool:
    """Give one anthropic SDK client object `make(its _copy_and_prepare)`; False when `sdk` is not
    an anthropic client or already has the hook."""
    from anthropic import AsyncAnthropic

    prepare = getattr(sdk, "_copy_and_prepare", None)
    if not isinstance(sdk, AsyncAnthropic) or prepare is None or isinstance(prepare, hook_type):
        return False
    sdk._copy_and_prepare = make(prepare)  # type: ignore[method-assign]
    return True


def restore_copy_and_prepare(sdk: Any) -> None:
    vars(sdk).pop("_copy_and_prepare", None)


def anthropic_options_copy(options: Any) -> Any:
    """A shallow copy of anthropic's `FinalRequestOptions`, as the SDK makes its own."""
    from anthropic._compat import model_copy

    return model_copy(options)


# --- 8. the SDK's stream-event parser, built on first use -------------------------------------------

# agenthub's clients that stream OpenAI Responses events (openai SDK `responses.create`)
RESPONSES_STREAM_CLIENTS = ("OpenaiResponsesClient", "GPT6Client", "DeepSeekV4Client", "MiniMaxM3Client")


def build_stream_event_parser(client_class: type) -> bool:
    """Build what the SDK builds when the first stream event of `client_class` (an agenthub
    protocol client class) is parsed in this process; False when there is nothing to build."""
    if client_class.__name__ not in RESPONSES_STREAM_CLIENTS:
        return False
    from openai._models import construct_type
    from openai.types.responses import ResponseStreamEvent

    response: dict[str, Any] = {"id": "r", "object": "response", "output": [], "status": "completed"}
    item = {"type": "message", "id": "m", "role": "assistant", "status": "completed", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    events: tuple[dict[str, Any], ...] = (
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.content_part.added", "output_index": 0, "content_index": 0, "part": part},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": ""},
        {"type": "response.output_text.done", "output_index": 0, "content_index": 0, "text": ""},
        {"type": "response.content_part.done", "output_index": 0, "content_index": 0, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": response},
    )
    for n, event in enumerate(events):
        construct_type(value={**event, "sequence_number": n}, type_=ResponseStreamEvent)
    return True
