"""Outcome classification of a failed request (docs/model.md "Request lifecycle", rules 3–8) and the
one-line error text that rides on the outcome.

Owns `classify_error` and `describe_error`. The rules are applied to what agenthub and the SDKs
under it raise in Python (openai / anthropic status errors, httpx transport errors, agenthub's
parse and validation errors); user-abort and idle-timeout precedence (rules 1–2) is decided by
`GenerativeModel`, which knows which of the two fired.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator

from agenthub.errors import EmptyResponseError, ToolCallArgumentParseError, UnsupportedParameterError

from ..interfaces import LLMOutcome

FAST_MODE_GUIDANCE = (
    "Fast mode is enabled for this model; turn it off in the model settings to use this model."
)

_MALFORMED_NAMES = {"JSONDecodeError", "ToolCallArgumentParseError", "EmptyResponseError"}
_INCOMPLETE_STREAM_PREFIXES = ("Streaming response yielded no events", "Last event must carry")
_AUTH_CODES = {"invalid_api_key", "authentication_error", "unauthorized"}
_NETWORK_CODES = {
    "ECONNRESET",
    "ECONNREFUSED",
    "ETIMEDOUT",
    "EPIPE",
    "EAI_AGAIN",
    "ENOTFOUND",
    "ECONNABORTED",
    "UND_ERR_SOCKET",
    "UND_ERR_CONNECT_TIMEOUT",
    "UND_ERR_HEADERS_TIMEOUT",
    "UND_ERR_BODY_TIMEOUT",
}
# SDK / httpx / stdlib classes that mean "the transport failed", matched by class name along the MRO
_TRANSPORT_CLASS_NAMES = {
    "APIConnectionError",  # openai, anthropic (APITimeoutError subclasses it)
    "TransportError",  # httpx: ConnectError, ReadError, ReadTimeout, RemoteProtocolError, …
    "StreamError",  # httpx: StreamClosed etc. (server went away mid-body)
    "ConnectionError",  # builtin: ConnectionResetError, BrokenPipeError, …
    "TimeoutError",
    "IncompleteRead",
}
_TRANSPORT_TEXT = re.compile(
    r"timeout|timed out|network|socket hang up|econnreset|connection reset|other side closed|fetch failed"
    r"|too many requests|rate limit|temporarily unavailable|503|502|504",
    re.IGNORECASE,
)
_TERMINATED_COMPANIONS = re.compile(r"socket|connection|closed", re.IGNORECASE)


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


def _class_names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def _http_status(error: BaseException) -> int | None:
    for attr in ("status_code", "status", "code"):
        value = getattr(error, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


def describe_error(error: BaseException) -> str:
    """Each level of the cause chain as `message (code)`, de-duplicated, joined with `: `."""
    parts: list[str] = []
    for level in cause_chain(error):
        piece = str(level).strip() or type(level).__name__
        code = getattr(level, "code", None)
        if isinstance(code, str) and code and code not in piece:
            piece = f"{piece} ({code})"
        if piece not in parts:
            parts.append(piece)
    return ": ".join(parts) or type(error).__name__


def is_malformed(error: BaseException) -> bool:
    for level in cause_chain(error):
        if isinstance(level, json.JSONDecodeError | ToolCallArgumentParseError | EmptyResponseError):
            return True
        if _class_names(level) & _MALFORMED_NAMES:
            return True
        if str(level).startswith(_INCOMPLETE_STREAM_PREFIXES):
            return True
    return False


def _provider_signals(level: BaseException) -> list[str]:
    """`code`/`type` on the error, on its parsed body, and on `body["error"]`."""
    values: list[object] = [getattr(level, "code", None), getattr(level, "type", None)]
    for attr in ("body", "error"):
        body = getattr(level, attr, None)
        if isinstance(body, dict):
            values += [body.get("code"), body.get("type")]
            inner = body.get("error")
            if isinstance(inner, dict):
                values += [inner.get("code"), inner.get("type")]
    return [v for v in values if isinstance(v, str)]


def is_auth(error: BaseException) -> bool:
    for level in cause_chain(error):
        if _http_status(level) == 401:
            return True
        if any(signal in _AUTH_CODES for signal in _provider_signals(level)):
            return True
        if "AuthenticationError" in _class_names(level):
            return True
    return False


def is_fast_mode_rejection(error: BaseException) -> bool:
    return any(
        isinstance(level, UnsupportedParameterError) and level.parameter == "fast_mode"
        for level in cause_chain(error)
    )


def is_transport(error: BaseException) -> bool:
    status = _http_status(error)
    if status is not None and (status in (408, 429) or 500 <= status <= 599):
        return True
    if status is not None and 400 <= status <= 499:
        return False
    for level in cause_chain(error):
        if _class_names(level) & _TRANSPORT_CLASS_NAMES:
            return True
        code = getattr(level, "code", None)
        if isinstance(code, str) and code in _NETWORK_CODES:
            return True
    if isinstance(error, asyncio.CancelledError):
        return False
    text = f"{type(error).__name__} {error}"
    if _TRANSPORT_TEXT.search(text):
        return True
    return "terminated" in text.lower() and bool(_TERMINATED_COMPANIONS.search(text))


def classify_error(error: BaseException, *, fast_mode: bool = False) -> LLMOutcome:
    """Rules 3–8 of docs/model.md "Request lifecycle" for an error that neither the user nor the idle timer caused."""
    if is_malformed(error):
        return LLMOutcome("malformed", describe_error(error))
    if is_auth(error):
        return LLMOutcome("auth", describe_error(error))
    if fast_mode and is_fast_mode_rejection(error):
        return LLMOutcome("failed", f"{describe_error(error)} {FAST_MODE_GUIDANCE}", permanent=True)
    if is_transport(error):
        return LLMOutcome("timeout", describe_error(error))
    if isinstance(error, asyncio.CancelledError):
        return LLMOutcome("aborted")
    return LLMOutcome("failed", describe_error(error))
