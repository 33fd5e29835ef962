"""Outcome classification of a failed request (docs/model.md "Request lifecycle", rules 3–8) and the
one-line error text that rides on the outcome.

Owns `classify_error`, `describe_error` and `provider_failure`, the one place a foreign error is
read: by exception type (the openai, anthropic and google-genai SDK errors, httpx and stdlib
transport errors, agenthub's parse and validation errors), HTTP status and the provider's own
error code (OpenAI `code`/`type`, Anthropic `error.type`, Gemini `status` and `ErrorInfo.reason`)
— never by the words of a message (docs/model-requests.md "Provider boundary"). An SDK that was
never imported cannot have raised, so its types are looked up only when it is loaded.
User-abort and idle-timeout precedence (rules 1–2) is decided by `GenerativeModel`, which knows
which of the two fired.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import httpx
from agenthub.errors import EmptyResponseError, ToolCallArgumentParseError, UnsupportedParameterError

from ..interfaces import LLMOutcome
from .connect_failure import ConnectKind, connect_failure
from .stream_reading import UnreadableStream

FAST_MODE_GUIDANCE = (
    "Fast mode is enabled for this model; turn it off in the model settings to use this model."
)

_INCOMPLETE_STREAM_PREFIXES = ("Streaming response yielded no events", "Last event must carry")

# The provider codes that mean "the credential is wrong or lacks the right": OpenAI (and the
# OpenAI-compatible gateways) `invalid_api_key`; Anthropic `authentication_error` /
# `permission_error`; Gemini `API_KEY_INVALID` (a 400) and the `UNAUTHENTICATED` /
# `PERMISSION_DENIED` statuses.
AUTH_CODES = frozenset(
    {
        "invalid_api_key",
        "unauthorized",
        "authentication_error",
        "permission_error",
        "API_KEY_INVALID",
        "API_KEY_EXPIRED",
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
    }
)
# Codes of failures that pass (the same request can succeed later), including those that arrive
# as a mid-stream error event on an HTTP 200: Anthropic `overloaded_error` (529) / `rate_limit_error`
# / `api_error`; OpenAI `rate_limit_exceeded` / `server_error`; Gemini `RESOURCE_EXHAUSTED`,
# `UNAVAILABLE`, `INTERNAL`, `DEADLINE_EXCEEDED`.
RETRYABLE_CODES = frozenset(
    {
        "overloaded_error",
        "rate_limit_error",
        "api_error",
        "rate_limit_exceeded",
        "server_error",
        "RESOURCE_EXHAUSTED",
        "UNAVAILABLE",
        "INTERNAL",
        "DEADLINE_EXCEEDED",
    }
)
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})  # and every 5xx (529: Anthropic overloaded)
AUTH_STATUSES = frozenset({401})
# Connection-level errno names (Python's OSError.errno values by name) that mean "the transport failed".
_NETWORK_ERRNOS = frozenset(
    {"ECONNRESET", "ECONNREFUSED", "ETIMEDOUT", "EPIPE", "ECONNABORTED", "EHOSTUNREACH"}
)
_TRANSPORT_TYPES: tuple[type[BaseException], ...] = (
    httpx.TransportError,  # ConnectError, ReadError, ReadTimeout, RemoteProtocolError, …
    httpx.StreamError,  # the body went away mid-read
    ConnectionError,  # ConnectionResetError, BrokenPipeError, …
    TimeoutError,
    http.client.IncompleteRead,
)


@dataclass(frozen=True)
class ProviderFailure:
    """What a provider said when it refused or broke off a request."""

    status: int | None  # the HTTP status (a mid-stream error event may come on a 200)
    codes: tuple[str, ...]  # the provider's error code, type, status and reasons
    message: str | None  # the provider's own message
    should_retry: bool | None = None  # the provider's `x-should-retry` header, when it sent one

    @property
    def is_auth(self) -> bool:
        return self.status in AUTH_STATUSES or any(code in AUTH_CODES for code in self.codes)

    @property
    def is_retryable(self) -> bool:
        if self.is_auth or self.should_retry is False:
            return False
        status = self.status
        if self.should_retry is True or (
            status is not None and (status in RETRYABLE_STATUSES or 500 <= status <= 599)
        ):
            return True
        return any(code in RETRYABLE_CODES for code in self.codes)

    @property
    def is_permanent(self) -> bool:
        """The provider said the same request will fail again (`x-should-retry: false`, as its
        own SDK reads it; docs/model-requests.md "Failures waiting cannot fix"). Another 4xx that
        does not pass is retried once and made permanent when refused the same way again
        (`rejections.py`)."""
        return not self.is_auth and self.should_retry is False


class ProviderStreamError(Exception):
    """A provider's error that arrived as an event inside a 200 stream the SDK does not raise
    for (OpenAI Responses `error` / `response.failed`); raised by `sdk_passthrough.py`."""

    def __init__(self, message: str, codes: tuple[str, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.codes = codes


def cause_chain(error: BaseException) -> Iterator[BaseException]:
    """`error`, then its `__cause__` (or unsuppressed `__context__`) levels, cycle-safe."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None


def _loaded(module: str, name: str) -> type[BaseException] | None:
    """`module.name` when the module was imported (else nothing of it can have been raised)."""
    loaded = sys.modules.get(module)
    found = getattr(loaded, name, None) if loaded is not None else None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _strings(*values: object) -> list[str]:
    return [value for value in values if isinstance(value, str) and value]


def _openai_style_codes(body: object) -> list[str]:
    """`code` and `type` of an OpenAI / Anthropic error body (top level and under `error`)."""
    if not isinstance(body, Mapping):
        return []
    codes = _strings(body.get("code"), body.get("type"))
    inner = body.get("error")
    if isinstance(inner, Mapping):
        codes += _strings(inner.get("code"), inner.get("type"))
    return [code for code in codes if code != "error"]


def _should_retry(level: BaseException) -> bool | None:
    """The `x-should-retry` header of the HTTP response an SDK error carries (openai, anthropic
    and google-genai keep it as `.response`), as the SDKs themselves read it."""
    response = getattr(level, "response", None)
    headers = getattr(response, "headers", None)
    if not isinstance(headers, Mapping):
        return None
    value = headers.get("x-should-retry")
    if not isinstance(value, str):
        return None
    return {"true": True, "false": False}.get(value.strip().lower())


def _sdk_api_failure(level: BaseException) -> ProviderFailure | None:
    """openai / anthropic `APIError` (status errors, and stream errors on a 200)."""
    for module in ("openai", "anthropic"):
        api_error = _loaded(module, "APIError")
        if api_error is None or not isinstance(level, api_error):
            continue
        status = getattr(level, "status_code", None)
        body = getattr(level, "body", None)
        codes = _openai_style_codes(body) + _strings(
            getattr(level, "code", None), getattr(level, "type", None)
        )
        message = getattr(level, "message", None)
        if isinstance(body, Mapping):
            inner = body.get("error")
            source = inner if isinstance(inner, Mapping) else body
            message = source.get("message") if isinstance(source.get("message"), str) else message
        return ProviderFailure(
            status if isinstance(status, int) else None,
            tuple(dict.fromkeys(codes)),
            message,
            _should_retry(level),
        )
    return None


def _gemini_failure(level: BaseException) -> ProviderFailure | None:
    """google-genai `APIError`: `code` (HTTP status), `status` and the `ErrorInfo.reason`s in `details`."""
    api_error = _loaded("google.genai.errors", "APIError")
    if api_error is None or not isinstance(level, api_error):
        return None
    codes = _strings(getattr(level, "status", None))
    details = getattr(level, "details", None)
    error = details.get("error", details) if isinstance(details, Mapping) else {}
    infos = error.get("details") if isinstance(error, Mapping) else None
    for item in infos if isinstance(infos, list) else []:
        if isinstance(item, Mapping):
            codes += _strings(item.get("reason"))
    status = getattr(level, "code", None)
    message = getattr(level, "message", None)
    return ProviderFailure(
        status if isinstance(status, int) and not isinstance(status, bool) else None,
        tuple(dict.fromkeys(codes)),
        message if isinstance(message, str) else None,
        _should_retry(level),
    )


def _level_failure(level: BaseException) -> ProviderFailure | None:
    if isinstance(level, ProviderStreamError):
        return ProviderFailure(None, level.codes, level.message)
    return _sdk_api_failure(level) or _gemini_failure(level)


def provider_failure(error: BaseException) -> ProviderFailure | None:
    """The first level of the cause chain that is a provider's answer, read by its SDK's type."""
    for level in cause_chain(error):
        failure = _level_failure(level)
        if failure is not None:
            return failure
    return None


def describe_error(error: BaseException) -> str:
    """Each level of the cause chain as `message (code)`, de-duplicated, joined with `: `; a
    provider's answer as `HTTP <status>: <its message> (<its codes>)`."""
    parts: list[str] = []
    for level in cause_chain(error):
        failure = _level_failure(level)
        if failure is not None and failure.message:
            # a 200 means the error came as an event inside the stream: no status to show
            status = f"HTTP {failure.status}: " if failure.status and failure.status >= 400 else ""
            codes = f" ({', '.join(failure.codes)})" if failure.codes else ""
            piece = f"{status}{failure.message.strip()}{codes}"
        elif isinstance(level, UnreadableStream):
            parts.append(str(level))
            break  # it says what came; the SDK's error under it is not the provider's words
        else:
            piece = _readable(level)
            code = getattr(level, "code", None)
            if isinstance(code, str) and code and code not in piece:
                piece = f"{piece} ({code})"
        if piece not in parts:
            parts.append(piece)
    return ": ".join(parts) or type(error).__name__


def _readable(level: BaseException) -> str:
    """One level's message; agenthub's end-of-stream check without the event it quotes whole."""
    lines = str(level).strip().splitlines()
    text = lines[0] if lines else type(level).__name__
    if type(level) is ValueError and text.startswith(_INCOMPLETE_STREAM_PREFIXES):
        return "the model's stream ended early: " + text.split(", got:")[0]
    return text


def is_malformed(error: BaseException) -> bool:
    for level in cause_chain(error):
        if isinstance(
            level,
            json.JSONDecodeError
            | ToolCallArgumentParseError
            | EmptyResponseError
            | UnreadableStream
            | UnicodeDecodeError,
        ):
            return True
        # agenthub's stream validation (`LLMClient._validate_last_event`) raises a plain ValueError
        if type(level) is ValueError and str(level).startswith(_INCOMPLETE_STREAM_PREFIXES):
            return True
    return False


def is_auth(error: BaseException) -> bool:
    failure = provider_failure(error)
    return failure is not None and failure.is_auth


def is_fast_mode_rejection(error: BaseException) -> bool:
    return any(
        isinstance(level, UnsupportedParameterError) and level.parameter == "fast_mode"
        for level in cause_chain(error)
    )


def _is_connection_failure(level: BaseException) -> bool:
    connection_types = [_loaded(module, "APIConnectionError") for module in ("openai", "anthropic")]
    # google-genai may read through httpx2 (httpx's successor), whose errors are its own types
    connection_types += [_loaded("httpx2", "TransportError"), _loaded("httpx2", "StreamError")]
    if any(kind is not None and isinstance(level, kind) for kind in connection_types):
        return True  # APITimeoutError subclasses it
    if isinstance(level, _TRANSPORT_TYPES):
        return True
    code = getattr(level, "code", None)
    return isinstance(code, str) and code in _NETWORK_ERRNOS


def is_transport(error: BaseException) -> bool:
    """The request may succeed if sent again: a retryable provider answer (429, 5xx, 529,
    overloaded, …) or a transport failure (refused, reset, timed out, dropped mid-body)."""
    failure = provider_failure(error)
    if failure is not None and failure.is_retryable:
        return True
    if failure is not None and failure.status is not None:
        return False  # the provider answered, and not with something that passes
    return any(_is_connection_failure(level) for level in cause_chain(error))


def classify_error(
    error: BaseException,
    *,
    fast_mode: bool = False,
    base_url: str | None = None,
    previous_connect: ConnectKind | None = None,
) -> LLMOutcome:
    """Rules 3–8 of docs/model.md "Request lifecycle" for an error that neither the user nor the idle timer caused.

    A failure waiting cannot fix — a host name that does not resolve, a refused local port, an
    answer the provider marks `x-should-retry: false` — is a permanent `failed`, so the engine
    ends the Task at the first attempt; a resolver that could not answer is retried once (`previous_connect` is
    the previous attempt's connection failure). docs/model-requests.md "Failures waiting cannot
    fix"; `base_url` names the host when the error does not carry its request."""
    if is_malformed(error):
        return LLMOutcome("malformed", describe_error(error))
    if is_auth(error):
        return LLMOutcome("auth", describe_error(error))
    if fast_mode and is_fast_mode_rejection(error):
        return LLMOutcome("failed", f"{describe_error(error)} {FAST_MODE_GUIDANCE}", permanent=True)
    failure = provider_failure(error)
    if failure is not None and failure.is_permanent:
        return LLMOutcome("failed", describe_error(error), permanent=True)
    # the SDKs' connection errors are APIErrors without a status: no answer came
    connect = connect_failure(error, base_url) if failure is None or failure.status is None else None
    if connect is not None:
        permanent = connect.permanent or connect.kind == previous_connect == "dns_temporary"
        return LLMOutcome("failed" if permanent else "timeout", connect.describe(), permanent=permanent)
    if is_transport(error):
        return LLMOutcome("timeout", describe_error(error))
    if isinstance(error, asyncio.CancelledError):
        return LLMOutcome("aborted")
    return LLMOutcome("failed", describe_error(error))
