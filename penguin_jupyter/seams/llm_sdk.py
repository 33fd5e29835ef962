"""The model side's seams: agenthub, openai, anthropic and google-genai internals (docs/seams.md,
docs/model-requests.md "Provider boundary").

agenthub owns the provider protocols and calls the SDKs itself, with no hooks for what this
project needs (no SDK retries: the engine retries; the long-session shortcuts; a credential the
anthropic SDK accepts). What cannot be done through a public API is done here and nowhere else,
each item a `Seam` with the upstream shape it relies on and a check that runs on the user's
machine before the first use (`tests/llm/test_llm_sdk_internals.py` holds the same shapes against
the versions CI installs):

1. `agenthub.routing` (rule) — `AutoLLMClient._client_class_for_model`, agenthub's routing from
   a client type to its protocol client class (read only). Off: the model is built through the
   public `AutoLLMClient` (no key check up front, none of the items below).
2. `agenthub.sdk_object` (rule) — the SDK object a protocol client calls (`_client`; found by
   its public shape when renamed), read and replaced by one with `max_retries=0` (through the
   SDK's public `with_options`) wrapped in `SdkBodyPassthrough`. Off: the SDK's own retries stand
   (up to 3 HTTP requests per attempt), said in the cell.
3. `openai.prepare_options` (fast path) — openai's per-attempt `AsyncOpenAI._prepare_options`
   hook (replaced on one SDK object by `PreEncodedBody`), its body encoder
   `openai._utils._json.openapi_dumps` and `openai._types.Omit`.
4. `agenthub.conversion` (fast path) — agenthub's `transform_uni_message_to_model_input`
   (replaced on one protocol-client instance by `IncrementalConversion` /
   `IncrementalSyncConversion`); `agenthub.claude_bedrock` (fast path, checked once a Claude
   client exists) — `Claude5Client._use_bedrock` (read: on Bedrock agenthub edits the converted
   list in place, so it keeps converting whole; off: every Claude client converts whole).
5. `agenthub.ant_messages` (rule) — `AntMessagesClient` rebuilt so the anthropic SDK gets one
   credential argument (agenthub passes the key as both `api_key` and `auth_token`, which
   anthropic ≥ 2 rejects before any request), setting the three attributes agenthub's `__init__`
   sets. Used only when the public constructor refuses the key.
6. `genai.request_path` (fast path) — google-genai's request path for `generateContent`: the
   conversion of a Content list to its wire form (`types._GenerateContentParameters`,
   `models._GenerateContentParameters_to_mldev` / `_to_vertex`, `_common.convert_to_dict`,
   `_common.encode_unserializable_types`), the `genai.Client`'s `_api_client` and its
   `_build_request` (replaced on that one object by `gemini_request.PreConvertedContents`), and
   agenthub calling `client.aio.models.generate_content_stream` (replaced on that one
   `AsyncModels` object).
7. `anthropic.copy_and_prepare` (fast path) — anthropic's per-request
   `AsyncAnthropic._copy_and_prepare` (replaced on one SDK object by
   `anthropic_prepare.KeptListsUnwalked`) and `anthropic._compat.model_copy`.
8. `openai.event_parser` (fast path) — `openai._models.construct_type` on the
   `ResponseStreamEvent` union builds its discriminator on the first event a process parses
   (≈ 0.5 s of CPU); `build_stream_event_parser` has it built early, off the loop (the kernel's
   pre-warm thread).

Nothing process-wide is patched: every replacement is on objects one model owns.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

from . import NotInUse, declare

_CONVERSION = "transform_uni_message_to_model_input"
_SDK_ATTRIBUTE = "_client"
_UNREACHABLE = "http://127.0.0.1:9/v1"


def _co_names(cls: type) -> set[str]:
    """Every global and attribute name the functions defined on `cls` and its bases use."""
    names: set[str] = set()
    for klass in cls.__mro__:
        for value in vars(klass).values():
            code = getattr(getattr(value, "__func__", value), "__code__", None)
            if code is not None:
                names.update(code.co_names)
    return names


# --- 1. routing -------------------------------------------------------------------------------


def _check_routing() -> str | None:
    from agenthub import AutoLLMClient
    from agenthub.base_client import LLMClient

    route = getattr(AutoLLMClient, "_client_class_for_model", None)
    if not callable(route):
        return "agenthub's AutoLLMClient has no _client_class_for_model"
    routed = route("openai-chat")
    if not (isinstance(routed, type) and issubclass(routed, LLMClient)):
        return f"agenthub routes 'openai-chat' to {routed!r}"
    if route("penguin-no-such-client-type") is not None:
        return "agenthub routes an unknown client type"
    return None


ROUTING = declare(
    "agenthub.routing",
    what="agenthub AutoLLMClient._client_class_for_model (which protocol client a client type uses)",
    kind="rule",
    when_off="models are built through agenthub's public AutoLLMClient: no key check before the "
    "request, the SDK's own retries, no long-session shortcuts",
    check=_check_routing,
)


def protocol_client_class(client_type: str) -> type | None:
    """The agenthub protocol client class a resolved (lower-cased) client type routes to (None:
    no client serves it). Only while `ROUTING` is on."""
    from agenthub import AutoLLMClient

    cls: type | None = AutoLLMClient._client_class_for_model(client_type)
    return cls


def public_client(model: str, api_key: str | None, base_url: str | None, client_type: str) -> Any:
    """agenthub's public entry point, for when the routing seam is off."""
    from agenthub import AutoLLMClient

    return AutoLLMClient(model=model, api_key=api_key, base_url=base_url, client_type=client_type)


# --- 2. the SDK object of a protocol client ---------------------------------------------------


def is_sdk_client(value: Any) -> bool:
    """An SDK client object by its public shape: openai / anthropic (`with_options` and
    `max_retries`, their public API) or a `google.genai.Client`."""
    if callable(getattr(value, "with_options", None)) and isinstance(getattr(value, "max_retries", None), int):
        return True
    module = type(value).__module__
    return module.startswith("google.genai") and type(value).__name__ == "Client"


def _sdk_attribute(routed: Any) -> str | None:
    """The one attribute of `routed` holding its SDK client: `_client`, else the only one whose
    value has an SDK client's shape (agenthub renamed it), provided agenthub's code reads it."""
    attributes = vars(routed) if hasattr(routed, "__dict__") else {}
    if is_sdk_client(attributes.get(_SDK_ATTRIBUTE)):
        return _SDK_ATTRIBUTE
    found = [name for name, value in attributes.items() if is_sdk_client(value)]
    if len(found) != 1 or found[0] not in _co_names(type(routed)):
        return None
    return found[0]


def _check_sdk_object() -> str | None:
    from agenthub.openai_chat.client import OpenaiChatClient

    client = OpenaiChatClient(model="m", api_key="k", base_url=_UNREACHABLE)
    name = _sdk_attribute(client)
    if name is None:
        return "OpenaiChatClient holds no SDK client agenthub reads"
    if name != _SDK_ATTRIBUTE:
        SDK_OBJECT.note(f"found as {name!r}, not {_SDK_ATTRIBUTE!r}")
    return None


SDK_OBJECT = declare(
    "agenthub.sdk_object",
    what="agenthub protocol client's SDK object (`_client`): replaced by one with max_retries=0 "
    "wrapped in SdkBodyPassthrough",
    kind="rule",
    when_off="the SDK's own retries stand (up to 3 HTTP requests per attempt), no first-response "
    "window, no body passthrough",
    check=_check_sdk_object,
)


def sdk_object(routed: Any) -> Any:
    """The SDK client object (AsyncOpenAI, AsyncAnthropic, genai.Client) the protocol client
    calls, or None (the seam is off, or this client holds none: then it is turned off)."""
    if not SDK_OBJECT.enabled():
        return None
    name = _sdk_attribute(routed)
    if name is None:
        SDK_OBJECT.turn_off(f"{type(routed).__name__} holds no SDK client agenthub reads")
        return None
    return getattr(routed, name)


def set_sdk_object(routed: Any, sdk: Any) -> None:
    """Put `sdk` where `sdk_object` found the protocol client's SDK object."""
    setattr(routed, _sdk_attribute(routed) or _SDK_ATTRIBUTE, sdk)


# --- 3. openai's per-attempt request hook -------------------------------------------------------


def _check_prepare_options() -> str | None:
    from openai import AsyncOpenAI
    from openai._models import FinalRequestOptions
    from openai._types import Omit
    from openai._utils._json import openapi_dumps

    hook = getattr(AsyncOpenAI, "_prepare_options", None)
    if not inspect.iscoroutinefunction(hook):
        return "openai's AsyncOpenAI._prepare_options is gone or no longer async"
    if list(inspect.signature(hook).parameters) != ["self", "options"]:
        return f"AsyncOpenAI._prepare_options{inspect.signature(hook)}"
    if "_prepare_options" not in AsyncOpenAI.request.__code__.co_names:
        return "AsyncOpenAI.request no longer calls _prepare_options"
    fields = {"json_data", "extra_json", "files", "content"} - set(FinalRequestOptions.model_fields)
    if fields:
        return f"openai's FinalRequestOptions has no {sorted(fields)}"
    if openapi_dumps({"a": [1]}) != b'{"a":[1]}' or isinstance(Omit(), dict):
        return "openai's openapi_dumps encodes differently"
    return None


PREPARE_OPTIONS = declare(
    "openai.prepare_options",
    what="openai AsyncOpenAI._prepare_options, openai._utils._json.openapi_dumps, openai._types.Omit",
    kind="fast path",
    when_off="the SDK encodes every request body whole",
    check=_check_prepare_options,
)


@functools.cache
def _openai_encoding() -> tuple[Callable[[Any], bytes], type]:
    from openai._types import Omit
    from openai._utils._json import openapi_dumps as dumps

    return dumps, Omit


def openapi_dumps(value: Any) -> bytes:
    """openai's own body encoder (the bytes the SDK would send)."""
    return _openai_encoding()[0](value)


def is_omitted(value: Any) -> bool:
    """Whether `value` is openai's `Omit` marker (a field the SDK leaves out of the body)."""
    return isinstance(value, _openai_encoding()[1])


def replace_prepare_options(sdk: Any, make_hook: Callable[[Any], Any], hook_type: type) -> bool:
    """Give one openai SDK client object `make_hook(its _prepare_options)`; False when the seam is
    off, `sdk` is not an openai client (the anthropic SDK encodes its own bodies) or has the hook."""
    from openai import AsyncOpenAI

    prepare = getattr(sdk, "_prepare_options", None)
    if not isinstance(sdk, AsyncOpenAI) or prepare is None or isinstance(prepare, hook_type):
        return False
    if not PREPARE_OPTIONS.enabled():
        return False
    sdk._prepare_options = make_hook(prepare)  # type: ignore[method-assign]
    return True


def restore_prepare_options(sdk: Any, hook_type: type) -> None:
    """Take the replacement out again (tests and benchmarks: the "before" path)."""
    if isinstance(vars(sdk).get("_prepare_options"), hook_type):
        del vars(sdk)["_prepare_options"]


# --- 4. agenthub's history conversion ------------------------------------------------------------


def _check_conversion() -> str | None:
    from agenthub.base_client import LLMClient
    from agenthub.openai_chat.client import OpenaiChatClient

    if not callable(getattr(OpenaiChatClient, _CONVERSION, None)):
        return f"agenthub's OpenaiChatClient has no {_CONVERSION}"
    callers = [
        name
        for name, value in vars(OpenaiChatClient).items()
        if name != _CONVERSION and _CONVERSION in getattr(getattr(value, "__code__", None), "co_names", ())
    ]
    if not callers or not issubclass(OpenaiChatClient, LLMClient):
        return f"agenthub no longer calls {_CONVERSION}"
    return None


CONVERSION = declare(
    "agenthub.conversion",
    what="agenthub protocol clients' transform_uni_message_to_model_input",
    kind="fast path",
    when_off="agenthub converts the whole history on every request",
    check=_check_conversion,
)

_CLAUDE_MODULE = "agenthub.claude5.client"


def loaded_class(module_name: str, class_name: str) -> type[Any] | None:
    """Class `class_name` of module `module_name` when that module is imported already, else None
    (never imports it: a provider's SDK is loaded only for a client of that provider)."""
    module = sys.modules.get(module_name)
    found = getattr(module, class_name, None) if module is not None else None
    return found if isinstance(found, type) else None


def _check_claude_bedrock() -> str | None:
    claude = loaded_class(_CLAUDE_MODULE, "Claude5Client")  # checked once a Claude client is in
    if claude is None:  # use: importing it loads anthropic (~1.6 s of CPU) in a kernel that talks to no Claude
        raise NotInUse("no Claude client in this process")
    if not callable(getattr(claude, _CONVERSION, None)):
        return f"agenthub's Claude5Client has no {_CONVERSION}"
    if "_use_bedrock" not in claude.__init__.__code__.co_names:
        return "agenthub's Claude5Client no longer sets _use_bedrock"
    return None


CLAUDE_BEDROCK = declare(
    "agenthub.claude_bedrock",
    what="agenthub Claude5Client._use_bedrock",
    kind="fast path",
    when_off="Claude models convert the whole history on every request (as on Bedrock)",
    check=_check_claude_bedrock,
)


def conversion_function(routed: Any) -> Any:
    """The class-level conversion function of a protocol client (to tell which protocol it is)."""
    return class_conversion(type(routed))


def class_conversion(client_class: type) -> Any:
    """The conversion function a protocol client class defines or inherits (None without one)."""
    return getattr(client_class, _CONVERSION, None)


def replace_conversion(routed: Any, make: Callable[[Any], Any]) -> bool:
    """Replace the conversion method on this one protocol-client instance by `make(bound
    method)`; False when the seam is off."""
    if not CONVERSION.enabled():
        return False
    setattr(routed, _CONVERSION, make(getattr(routed, _CONVERSION)))
    return True


def installed_conversion(routed: Any) -> Any:
    """The instance-level replacement `replace_conversion` put on `routed` (None without one)."""
    return vars(routed).get(_CONVERSION) if hasattr(routed, "__dict__") else None


def claude_on_bedrock(routed: Any) -> bool:
    """Whether `routed` is agenthub's Claude client talking to Bedrock (`bedrock://` base URL)."""
    claude = loaded_class(_CLAUDE_MODULE, "Claude5Client")
    if claude is not None and isinstance(routed, claude) and not CLAUDE_BEDROCK.enabled():
        return True  # where it talks cannot be told: convert whole, as on Bedrock
    return getattr(routed, "_use_bedrock", False) is True


def restore_conversion(routed: Any) -> Any:
    """Take an instance-level replacement out again (tests and benchmarks: the "before" path)."""
    return vars(routed).pop(_CONVERSION, None) if hasattr(routed, "__dict__") else None


# --- 5. ant-messages -------------------------------------------------------------------------------


def _check_ant_messages() -> str | None:
    from agenthub.ant_messages import AntMessagesClient

    assigned = set(AntMessagesClient.__init__.__code__.co_names)
    missing = {"_model", _SDK_ATTRIBUTE, "_history"} - assigned
    return f"agenthub's AntMessagesClient.__init__ no longer sets {sorted(missing)}" if missing else None


ANT_MESSAGES = declare(
    "agenthub.ant_messages",
    what="agenthub AntMessagesClient rebuilt without its __init__ (its _model, _client, _history)",
    kind="rule",
    when_off="ant-messages models fail with the anthropic SDK's own credential error",
    check=_check_ant_messages,
)


def build_ant_messages_client(
    model: str, api_key: str | None, base_url: str | None, default_headers: dict[str, str] | None = None
) -> Any:
    """agenthub's AntMessagesClient with an SDK object the anthropic SDK accepts.

    agenthub means to send the key through both header conventions (Anthropic and DeepSeek read
    `x-api-key`, gateways such as OpenRouter and Z.AI read `Authorization: Bearer`) by passing it
    as `api_key` and `auth_token`; anthropic ≥ 2 allows only one of them, and sends `api_key` as
    the bearer header. So the key goes in as `api_key` and `x-api-key` is added as a default
    header: both conventions again, through the SDK's own options. When agenthub's own
    constructor accepts the key (fixed upstream), it is used as it is."""
    from agenthub.ant_messages import AntMessagesClient
    from anthropic import AsyncAnthropic

    key = api_key or os.getenv("ANTHROPIC_API_KEY")
    url = base_url or os.getenv("ANTHROPIC_BASE_URL")
    headers = dict(default_headers or {})
    if key:
        headers.setdefault("X-Api-Key", key)
    try:
        return AntMessagesClient(model, api_key=key, base_url=url, default_headers=headers or None)
    except ValueError:
        if not ANT_MESSAGES.enabled():
            raise
    client = AntMessagesClient.__new__(AntMessagesClient)
    client._model = model
    client._client = AsyncAnthropic(api_key=key, base_url=url, default_headers=headers or None)
    client._history = []
    return client


# --- 6. google-genai's generateContent request path ------------------------------------------------


def _check_gemini() -> str | None:
    from google import genai
    from google.genai import _api_client, types

    sdk = genai.Client(api_key="k", http_options={"base_url": _UNREACHABLE})
    api_client = getattr(sdk, "_api_client", None)
    if not isinstance(api_client, _api_client.BaseApiClient) or not callable(
        getattr(api_client, "_build_request", None)
    ):
        return "google-genai's Client has no _api_client with _build_request"
    if "_build_request" not in _co_names(_api_client.BaseApiClient):
        return "google-genai no longer builds requests through _build_request"
    request = api_client._build_request("post", "models/m:streamGenerateContent", {"contents": []}, None)
    if request.data != {"contents": []}:
        return "google-genai's HttpRequest.data is no longer the request dict"
    content = types.Content(role="model", parts=[types.Part(text="a", thought_signature=b"\x8f\x00")])
    expected = [{"parts": [{"text": "a", "thoughtSignature": "jwA="}], "role": "model"}]
    if _wire_contents(api_client, [content]) != expected:
        return "google-genai converts contents differently"
    if not callable(getattr(sdk.aio.models, "generate_content_stream", None)):
        return "google-genai has no aio.models.generate_content_stream"
    return None


GEMINI_REQUEST = declare(
    "genai.request_path",
    what="google-genai types._GenerateContentParameters, models._GenerateContentParameters_to_mldev/"
    "_to_vertex, _common.convert_to_dict/encode_unserializable_types, Client._api_client._build_request",
    kind="fast path",
    when_off="the SDK converts and encodes the whole history on every request",
    check=_check_gemini,
)


def gemini_api_client(sdk: Any) -> Any:
    """The `BaseApiClient` of a `genai.Client` (None for anything else, or with the seam off)."""
    from google import genai

    if not isinstance(sdk, genai.Client) or not GEMINI_REQUEST.enabled():
        return None
    return sdk._api_client


def _wire_contents(api_client: Any, contents: list[Any]) -> list[Any]:
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


def gemini_wire_contents(api_client: Any, contents: list[Any]) -> list[Any]:
    """The wire form of `contents` (non-empty `types.Content` list) exactly as the SDK puts it in a
    `generateContent` request body: its own validation, conversion and JSON preparation."""
    return _wire_contents(api_client, contents)


def replace_gemini_build_request(api_client: Any, make: Callable[[Any], Any]) -> None:
    """Replace `_build_request` on this one `BaseApiClient` by `make(its bound method)`."""
    api_client._build_request = make(api_client._build_request)


def replace_gemini_stream(sdk: Any, make: Callable[[Any], Any]) -> None:
    """Replace `generate_content_stream` on this one client's `aio.models` by `make(bound method)`."""
    models = sdk.aio.models
    models.generate_content_stream = make(models.generate_content_stream)


def restore_gemini_request_path(sdk: Any) -> None:
    """Take both replacements out again (tests and benchmarks: the "before" path)."""
    vars(sdk.aio.models).pop("generate_content_stream", None)
    vars(sdk._api_client).pop("_build_request", None)


# --- 7. anthropic's per-request body preparation ----------------------------------------------------


def _check_copy_and_prepare() -> str | None:
    from anthropic import AsyncAnthropic
    from anthropic._compat import model_copy

    prepare = getattr(AsyncAnthropic, "_copy_and_prepare", None)
    if not inspect.iscoroutinefunction(prepare):
        return "anthropic's AsyncAnthropic._copy_and_prepare is gone or no longer async"
    if list(inspect.signature(prepare).parameters) != ["self", "options"]:
        return f"AsyncAnthropic._copy_and_prepare{inspect.signature(prepare)}"
    if "_copy_and_prepare" not in AsyncAnthropic.request.__code__.co_names:
        return "AsyncAnthropic.request no longer calls _copy_and_prepare"
    if not callable(model_copy):
        return "anthropic._compat.model_copy is gone"
    return None


COPY_AND_PREPARE = declare(
    "anthropic.copy_and_prepare",
    what="anthropic AsyncAnthropic._copy_and_prepare, anthropic._compat.model_copy",
    kind="fast path",
    when_off="the SDK copies the whole conversation on every request",
    check=_check_copy_and_prepare,
)


def replace_copy_and_prepare(sdk: Any, make: Callable[[Any], Any], hook_type: type) -> bool:
    """Give one anthropic SDK client object `make(its _copy_and_prepare)`; False when the seam is
    off, `sdk` is not an anthropic client or already has the hook."""
    # no anthropic client exists before anthropic is imported (and it is not imported for the
    # other providers: ~1.6 s of CPU)
    async_anthropic = loaded_class("anthropic", "AsyncAnthropic")
    prepare = getattr(sdk, "_copy_and_prepare", None)
    if async_anthropic is None or not isinstance(sdk, async_anthropic) or prepare is None or isinstance(prepare, hook_type):
        return False
    if not COPY_AND_PREPARE.enabled():
        return False
    sdk._copy_and_prepare = make(prepare)
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


def _check_event_parser() -> str | None:
    from openai._models import construct_type
    from openai.types.responses import ResponseStreamEvent

    if not callable(construct_type) or ResponseStreamEvent is None:
        return "openai._models.construct_type is gone"
    if "type_" not in inspect.signature(construct_type).parameters:
        return f"openai._models.construct_type{inspect.signature(construct_type)}"
    return None


EVENT_PARSER = declare(
    "openai.event_parser",
    what="openai._models.construct_type on the Responses stream-event union (built ahead of time)",
    kind="fast path",
    when_off="the first OpenAI Responses event of the process builds the parser (≈ 0.5 s)",
    check=_check_event_parser,
)


def build_stream_event_parser(client_class: type) -> bool:
    """Build what the SDK builds when the first stream event of `client_class` (an agenthub
    protocol client class) is parsed in this process; False when there is nothing to build."""
    if client_class.__name__ not in RESPONSES_STREAM_CLIENTS or not EVENT_PARSER.enabled():
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
