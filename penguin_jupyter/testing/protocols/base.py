"""What every wire protocol of the scripted server provides, and the pieces they share.

Owns the `Protocol` interface (route, credential, error bodies, request validation, the SSE
events of one script entry, mid-stream errors), `Rejection` (a provider-shaped refusal),
`Ledger` (what the server issued that later requests must echo: thinking signatures, reasoning
items) and the SSE frame and usage helpers. Each protocol lives in its own module beside this one;
`server.py` picks one per request and serves it.
"""

from __future__ import annotations

import json
import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from penguin_jupyter.omni import dumps_compact

from ..script import Fault, ScriptEntry


@dataclass(frozen=True)
class Rejection:
    """A refusal in the provider's own words: HTTP status, JSON body, and the one-line reason."""

    status: int
    body: dict[str, Any]
    reason: str


@dataclass
class Ledger:
    """Opaque things this server handed out that a later request must send back unchanged.

    `anthropic_thinking`: tool_use id → the signatures (thinking) and data (redacted_thinking)
    of the blocks that came before it in the same response. `responses_reasoning`: function
    call_id → the `encrypted_content` of the reasoning item of its response.
    """

    anthropic_thinking: dict[str, tuple[str, ...]] = field(default_factory=dict)
    responses_reasoning: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def note_anthropic(self, tool_use_ids: list[str], blocks: tuple[str, ...]) -> None:
        with self.lock:
            for tool_use_id in tool_use_ids:
                self.anthropic_thinking[tool_use_id] = blocks

    def note_responses(self, call_ids: list[str], encrypted_content: str) -> None:
        with self.lock:
            for call_id in call_ids:
                self.responses_reasoning[call_id] = encrypted_content

    def anthropic_for(self, tool_use_id: str) -> tuple[str, ...] | None:
        with self.lock:
            return self.anthropic_thinking.get(tool_use_id)

    def responses_for(self, call_id: str) -> str | None:
        with self.lock:
            return self.responses_reasoning.get(call_id)


@dataclass(frozen=True)
class Exchange:
    """One request as a protocol sees it: the parsed body, the path, and the serial number."""

    body: dict[str, Any]
    path: str
    serial: int
    model: str


def sse(data: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event: an optional `event:` line and one `data:` line.

    An object is sent as compact JSON, with `\\uXXXX` escapes when it holds a lone surrogate (valid
    JSON a real provider may send). A string is sent as given, its surrogate escapes (U+DC80 to
    U+DCFF, Python's `surrogateescape`) as the raw bytes they stand for, so a `malformed` fault
    can send bytes that are not UTF-8."""
    head = f"event: {event}\n" if event else ""
    if isinstance(data, str):
        return f"{head}data: {data}\n\n".encode("utf-8", "surrogateescape")
    payload = dumps_compact(dict(data))
    try:
        return f"{head}data: {payload}\n\n".encode()
    except UnicodeEncodeError:
        escaped = json.dumps(dict(data), separators=(",", ":"))
        return f"{head}data: {escaped}\n\n".encode()


def estimate_tokens(text: str) -> int:
    """A rough token count (4 chars a token), at least 1 for non-empty text."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class Usage:
    prompt: int
    completion: int
    cached: int
    reasoning: int | None


def usage_numbers(entry: ScriptEntry, conversation: object) -> Usage:
    """The entry's numbers, else a rough count of `conversation` (the request's history) and the reply."""
    given = entry.usage or {}
    prompt = given.get("prompt_tokens")
    if prompt is None:
        prompt = max(1, estimate_tokens(dumps_compact(conversation)))
    completion = given.get("completion_tokens")
    if completion is None:
        produced = (
            "".join(entry.text) + "".join(entry.reasoning) + "".join(c.arguments for c in entry.tool_calls)
        )
        completion = max(1, estimate_tokens(produced))
    return Usage(prompt, completion, given.get("cached_tokens", 0), given.get("reasoning_tokens"))


def split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class Protocol(ABC):
    """One provider's wire protocol, as the scripted server speaks it."""

    name: ClassVar[str]
    malformed_event: ClassVar[str | None] = None  # the `event:` name a malformed frame carries
    stream_hint: ClassVar[str] = '("stream": true)'  # how a client asks this protocol to stream

    @abstractmethod
    def matches(self, path: str) -> bool:
        """Whether a POST to `path` is this protocol's generation route."""

    @abstractmethod
    def credential(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        """The API key where this provider's SDK sends it (None when absent)."""

    @abstractmethod
    def bad_key(self, key: str | None) -> Rejection:
        """The provider's answer to a wrong or missing key."""

    @abstractmethod
    def error_body(
        self, status: int, message: str | None, error_type: str | None, code: str | None
    ) -> dict[str, Any]:
        """The provider's JSON error body for an HTTP error `status`."""

    def streaming(self, exchange: Exchange) -> bool:
        """Whether the request asked for a streamed answer (the only kind served)."""
        return exchange.body.get("stream") is True

    @abstractmethod
    def validate(self, exchange: Exchange, ledger: Ledger) -> Rejection | None:
        """The provider's request validation; None when the request is acceptable."""

    @abstractmethod
    def events(self, entry: ScriptEntry, exchange: Exchange, ledger: Ledger) -> list[bytes]:
        """Every SSE event of a well-behaved answer, in send order (notes issued tokens in `ledger`)."""

    @abstractmethod
    def error_event(self, fault: Fault) -> list[bytes]:
        """The provider's mid-stream error event(s) for an `error_event` fault."""

    def malformed(self, data: str) -> bytes:
        return sse(data, self.malformed_event)

    def closing(self) -> list[bytes]:
        """Events after the last one (Chat Completions' `[DONE]`)."""
        return []

    @abstractmethod
    def conversation(self, body: Mapping[str, Any]) -> object:
        """The request's history, for the rough prompt-token estimate."""

    @abstractmethod
    def texts(self, body: Mapping[str, Any]) -> list[str]:
        """The text of each history message, newest first (for `{{match:…}}` placeholders)."""

    def reject(
        self, status: int, message: str, error_type: str | None = None, code: str | None = None
    ) -> Rejection:
        return Rejection(status, self.error_body(status, message, error_type, code), message)
