"""The provider boundary: `ProviderClient`, the one object through which a model reaches a provider
(docs/model-requests.md "Provider boundary").

Owns building agenthub's protocol client for a `GenerativeModelConfig` (routing as agenthub
routes, the credential check up front, the SDK's own retries off — the engine owns retrying —
and the long-session shortcuts of `sdk_passthrough.py`, `anthropic_prepare.py`, `body_encoding.py`,
`gemini_request.py` and `history_conversion.py`), every call made on it (the stateful stream, its history), and what a
request reports when no client can be built. Failed requests are classified in `classify.py`; the
third-party internals this needs are all in `seams/llm_sdk.py`, each a seam checked before its
first use: with one off, the model still works through the public path (said in the cell when it
changes a rule, docs/seams.md). Provider protocols stay inside
agenthub; a key not configured falls back to the provider environment variable agenthub reads, then
to the same name in the config's `credentials` (a workspace `.env`'s keys, which never enter the
process environment: docs/security.md "A folder's `.env` is data").
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable

from agenthub.abort_signal import AbortSignal
from agenthub.base_client import LLMClient
from agenthub.types import UniConfig, UniEvent, UniMessage

from ..interfaces import LLMOutcome
from ..omni import repair_in_place, repair_strings
from ..seams.llm_sdk import (
    ROUTING,
    build_ant_messages_client,
    gemini_api_client,
    protocol_client_class,
    public_client,
    restore_conversion,
    restore_copy_and_prepare,
    restore_gemini_request_path,
    restore_prepare_options,
    sdk_object,
    set_sdk_object,
)
from .anthropic_prepare import install_kept_lists_unwalked
from .body_encoding import PreEncodedBody, install_pre_encoded_body
from .classify import describe_error
from .config import GenerativeModelConfig, InvalidBaseUrl, check_base_url
from .history_conversion import install_incremental_conversion, kept_conversion
from .sdk_passthrough import SdkBodyPassthrough
from .stream_reading import begin_reading

# The environment variable each agenthub protocol client reads its key from when none is given.
KEY_VARIABLES: dict[str, str] = {
    "OpenaiChatClient": "OPENAI_API_KEY",
    "OpenaiChatVllmAdapterClient": "OPENAI_API_KEY",
    "OpenaiResponsesClient": "OPENAI_API_KEY",
    "GPT6Client": "OPENAI_API_KEY",
    "AntMessagesClient": "ANTHROPIC_API_KEY",
    "Claude5Client": "ANTHROPIC_API_KEY",
    "Gemini3_8Client": "GEMINI_API_KEY",
    "DeepSeekV4Client": "DEEPSEEK_API_KEY",
    "GLM5_3Client": "ZAI_API_KEY",
    "KimiK3Client": "MOONSHOT_API_KEY",
    "MiniMaxM3Client": "MINIMAX_API_KEY",
}
_NOT_FOR_CHAT = ("embedding",)


class UnsupportedModel(ValueError):
    """No agenthub client serves this model id / client type (a configuration mistake)."""


class MissingCredential(ValueError):
    """No API key in the config nor in the provider's environment variable."""


def resolved_client_type(config: GenerativeModelConfig) -> str:
    """The client type agenthub routes by: the configured one, else `CLIENT_TYPE`, else the model id."""
    return (config.client_type or os.getenv("CLIENT_TYPE") or config.model_id).lower()


def _protocol_client(config: GenerativeModelConfig) -> LLMClient:
    client_type = resolved_client_type(config)
    if not ROUTING.enabled():  # agenthub's routing moved: its public entry point, as it is
        client: LLMClient = public_client(config.model_id, config.api_key, config.base_url, client_type)
        return client
    cls = protocol_client_class(client_type)
    if cls is None or any(word in cls.__name__.lower() for word in _NOT_FOR_CHAT):
        raise UnsupportedModel(
            f"model {config.model_id!r}: no agenthub client serves client type {client_type!r} "
            "(set client_type, e.g. openai-chat, openai-responses, ant-messages)"
        )
    variable = KEY_VARIABLES.get(cls.__name__)
    api_key = config.api_key
    if variable is not None:
        api_key = api_key or os.getenv(variable) or config.credentials.get(variable)
        if not api_key:
            raise MissingCredential(
                f"no API key for model {config.model_id!r}: give the model entry an api_key or set {variable}"
            )
    if cls.__name__ == "AntMessagesClient":
        return build_ant_messages_client(config.model_id, api_key, config.base_url)
    return cls(model=config.model_id, api_key=api_key, base_url=config.base_url)


class ProviderClient:
    """One model's connection to its provider: agenthub's stateful protocol client plus what this
    project adds around it. `reports_responses`: the SDK tells when a response arrived
    (openai / anthropic), which the first-response window needs. Without the SDK object
    (`seams.llm_sdk.SDK_OBJECT` off) the SDK keeps its own retries and the cell says so. A stream
    whose events cannot be read raises `UnreadableStream` (`stream_reading.py`)."""

    def __init__(self, routed: LLMClient, on_response: Callable[[], None] | None = None) -> None:
        self._routed = routed
        self.reports_responses = False
        sdk = sdk_object(routed)
        with_options = getattr(sdk, "with_options", None)
        if with_options is not None:  # openai, anthropic: the engine retries, not the SDK
            sdk = with_options(max_retries=0)
            install_pre_encoded_body(sdk)
            install_kept_lists_unwalked(sdk)
            set_sdk_object(routed, SdkBodyPassthrough(sdk, on_response=on_response))
            self.reports_responses = True
        elif sdk is not None:  # google-genai: its request path keeps the history's wire form
            # imported here: google-genai is loaded only for a Gemini client
            from .gemini_request import install_pre_converted_contents

            install_pre_converted_contents(sdk)
        install_incremental_conversion(routed)

    @property
    def protocol_client(self) -> LLMClient:
        return self._routed

    async def stream(
        self, message: UniMessage, config: UniConfig, signal: AbortSignal
    ) -> AsyncIterator[UniEvent]:
        """The upstream events of one request; the exchange joins the history when it completes.
        History not converted yet (all of it after a `set_history`) is converted first, in slices
        with the event loop running between them (docs/model-requests.md "The first request after
        a resume"); an abort stops it at the next slice."""
        conversion = kept_conversion(self._routed)
        if conversion is not None:
            await conversion.catch_up(self._routed.get_history(), signal.throw_if_aborted)
        reading = begin_reading()  # this Task reads the stream: the SDK wrappers report into it
        before = self.history_length()
        repaired = False
        upstream = self._routed.streaming_response_stateful(message=message, config=config, signal=signal)
        try:
            async for event in upstream:
                # Text the provider sent is made valid Unicode where it enters: a lone surrogate
                # (`"\ud800"` is valid JSON) becomes U+FFFD, so the session can record it.
                repaired = repair_in_place(event.get("content_items")) or repaired
                yield event
            if repaired:  # and the history agenthub committed, which the next request sends back
                self._repair_history(before)
        except Exception as exc:
            unreadable = reading.unreadable(exc)
            if unreadable is None:
                raise
            raise unreadable from exc
        finally:
            await upstream.aclose()

    def _repair_history(self, start: int) -> None:
        """The exchange committed after `start` with every string valid Unicode (agenthub builds
        it from the events already repaired; this holds whatever it builds it from)."""
        history = self._routed.get_history()
        tail = history[start:]
        fixed = [repair_strings(message) for message in tail]
        if any(new is not old for new, old in zip(fixed, tail, strict=True)):
            self._routed.set_history([*history[:start], *fixed])

    def history_length(self) -> int:
        return len(self._routed.get_history())

    def keep_history(self, length: int) -> None:
        """Drop what was committed after `length` (a request that did not complete)."""
        history = self._routed.get_history()
        if len(history) > length:
            self._routed.set_history(history[:length])

    def set_history(self, history: list[UniMessage]) -> None:
        self._routed.set_history(history)

    def without_shortcuts(self) -> ProviderClient:
        """The SDK's own body walk and encoding and agenthub's whole-history conversion again
        (for the tests and benchmarks that compare against what the SDK builds on its own)."""
        sdk = sdk_object(self._routed)
        if isinstance(sdk, SdkBodyPassthrough):
            inner = sdk.wrapped
            restore_prepare_options(inner, PreEncodedBody)
            restore_copy_and_prepare(inner)
            set_sdk_object(self._routed, inner)
        elif gemini_api_client(sdk) is not None:
            restore_gemini_request_path(sdk)
        restore_conversion(self._routed)
        return self


def open_provider(
    config: GenerativeModelConfig, on_response: Callable[[], None] | None = None
) -> ProviderClient:
    """The provider client for `config`. Raises `InvalidBaseUrl`, `UnsupportedModel`,
    `MissingCredential`, or whatever the SDK raises while building its client."""
    check_base_url(config.base_url)
    return ProviderClient(_protocol_client(config), on_response)


def client_error_outcome(error: BaseException) -> LLMOutcome:
    """Why a request could not start: no key → `auth` (hosts gate input until the key is set);
    a base_url no request can use → permanent `failed` (never retried); anything else the SDK
    raised while building its client → `failed` with its one line."""
    if isinstance(error, MissingCredential):
        return LLMOutcome("auth", str(error))
    if isinstance(error, InvalidBaseUrl):
        return LLMOutcome("failed", str(error), permanent=True)
    return LLMOutcome("failed", f"cannot build the model client: {describe_error(error)}")
