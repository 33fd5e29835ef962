"""Building the agenthub gateway client for a GenerativeModelConfig.

Owns `create_llm_client` (an `AutoLLMClient` with the SDK's own retries switched off — the
engine owns retrying — the conversation list passed around the SDK's body walk, see
`sdk_passthrough.py`, only new history converted per request, see `history_conversion.py`, and
the body encoded from kept per-message JSON, see `body_encoding.py`),
the up-front `base_url` check, and `client_error_outcome` (what a request reports when the client cannot
be built, e.g. no API key in the config or the environment). Provider protocols stay inside
agenthub; credentials fall back to the provider environment variables exactly as agenthub reads them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agenthub import AutoLLMClient

from ..interfaces import LLMOutcome
from .body_encoding import install_pre_encoded_body
from .classify import describe_error
from .config import GenerativeModelConfig, InvalidBaseUrl, check_base_url
from .history_conversion import install_incremental_conversion
from .sdk_passthrough import SdkBodyPassthrough

_CREDENTIAL_TEXT = re.compile(r"api[_ ]?key|credential|authenticat", re.IGNORECASE)


def disable_sdk_retries(client: AutoLLMClient) -> bool:
    """Swap the routed client's SDK object for a copy with `max_retries=0` where the SDK allows
    it (openai, anthropic). Returns whether it did."""
    routed = getattr(client, "_client", None)
    sdk = getattr(routed, "_client", None)
    with_options = getattr(sdk, "with_options", None)
    if routed is None or with_options is None:
        return False
    try:
        routed._client = with_options(max_retries=0)
    except TypeError:
        return False
    return True


def create_llm_client(
    config: GenerativeModelConfig, on_response: Callable[[], None] | None = None
) -> AutoLLMClient:
    """The stateful gateway client. Raises `InvalidBaseUrl` for a base_url no request can use,
    ValueError for an unsupported model/client type and whatever the SDK raises for missing
    credentials. `on_response` is called when a request's response (or its failure) arrives,
    where the SDK lets us see it (openai / anthropic)."""
    check_base_url(config.base_url)
    client = AutoLLMClient(
        model=config.model_id,
        api_key=config.api_key,
        base_url=config.base_url,
        client_type=config.client_type,
    )
    if disable_sdk_retries(client):
        install_body_passthrough(client, on_response)
    install_incremental_conversion(getattr(client, "_client", None))
    return client


def reports_responses(client: AutoLLMClient) -> bool:
    """Whether the client's SDK calls tell us when a response arrives (`on_response`)."""
    return isinstance(getattr(getattr(client, "_client", None), "_client", None), SdkBodyPassthrough)


def install_body_passthrough(client: AutoLLMClient, on_response: Callable[[], None] | None = None) -> bool:
    """Wrap the routed client's SDK object (openai / anthropic) in `SdkBodyPassthrough`."""
    routed = getattr(client, "_client", None)
    sdk = getattr(routed, "_client", None)
    if routed is None or sdk is None or isinstance(sdk, SdkBodyPassthrough):
        return False
    install_pre_encoded_body(sdk)
    routed._client = SdkBodyPassthrough(sdk, on_response=on_response)
    return True


def is_unsupported_model_error(error: BaseException) -> bool:
    return isinstance(error, ValueError) and "is not supported" in str(error)


def client_error_outcome(error: BaseException) -> LLMOutcome:
    """Missing or rejected credentials read as `auth` (hosts gate input until the key is set);
    a base_url no request can use as a permanent `failed` (never retried); any other
    construction failure as `failed`."""
    if isinstance(error, InvalidBaseUrl):
        return LLMOutcome("failed", str(error), permanent=True)
    text = describe_error(error)
    if _CREDENTIAL_TEXT.search(text):
        return LLMOutcome("auth", text)
    return LLMOutcome("failed", text)
