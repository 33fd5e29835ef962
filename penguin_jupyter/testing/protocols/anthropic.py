"""Anthropic Messages (`POST …/v1/messages`), as the scripted server speaks it.

Owns the route, the key (`x-api-key`, or `Authorization: Bearer` as anthropic ≥ 2.16 sends it),
Anthropic's error bodies and `event: error`, and the SSE events of one entry: `message_start`,
a `redacted_thinking` block, a `thinking` block (deltas, then its `signature_delta`), a text
block, `tool_use` blocks with `input_json_delta` fragments, `message_delta` (stop reason, output
tokens) and `message_stop`. Thinking is sent only when the request enables it (adaptive or
enabled) and its text only unless `display` is "omitted". Validation: `anthropic_rules.py`.
Used by agenthub's claude5 (Claude 4.6+) and ant-messages clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import signatures
from ..placeholders import resolve as resolve_placeholders
from ..script import Fault, ScriptEntry
from . import anthropic_rules
from .anthropic_rules import REDACTED_KIND, THINKING_KIND
from .base import Exchange, Ledger, Protocol, Rejection, split, sse, usage_numbers
from .keys import bearer

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    "invalid_request_error": "Invalid request.",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "The requested resource could not be found.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit.",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}
_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def error_type_for(status: int) -> str:
    if status in _ERROR_TYPES:
        return _ERROR_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def thinking_enabled(body: Mapping[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


class AnthropicMessages(Protocol):
    name = "anthropic-messages"
    malformed_event = "content_block_delta"

    def matches(self, path: str) -> bool:
        return path.endswith("/v1/messages") or path == "/messages"

    def credential(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        return headers.get("x-api-key") or bearer(headers)

    def bad_key(self, key: str | None) -> Rejection:
        message = "invalid x-api-key" if key else "x-api-key header is required"
        return Rejection(401, self.error_body(401, message, "authentication_error", None), message)

    def error_body(
        self, status: int, message: str | None, error_type: str | None, code: str | None
    ) -> dict[str, Any]:
        kind = error_type or error_type_for(status)
        text = message if message is not None else _DEFAULT_MESSAGES.get(kind, "Request failed.")
        return {"type": "error", "error": {"type": kind, "message": text}, "request_id": "req_scripted"}

    def validate(self, exchange: Exchange, ledger: Ledger) -> Rejection | None:
        problem = anthropic_rules.problem(exchange.body, ledger, thinking_enabled(exchange.body))
        return None if problem is None else self.reject(400, problem)

    def events(self, entry: ScriptEntry, exchange: Exchange, ledger: Ledger) -> list[bytes]:
        body = exchange.body
        usage = usage_numbers(entry, body.get("messages"))
        message: dict[str, Any] = {
            "id": f"msg_scripted_{exchange.serial}",
            "type": "message",
            "role": "assistant",
            "model": exchange.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
        }
        if entry.send_usage:
            message["usage"] = {
                "input_tokens": max(0, usage.prompt - usage.cached),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": usage.cached,
                "output_tokens": 1,
            }
        frames = [_event("message_start", message=message), _event("ping")]
        blocks = _Blocks(frames)
        issued: list[str] = []
        if thinking_enabled(body):
            shown = (body.get("thinking") or {}).get("display") != "omitted"
            if entry.redacted_thinking:
                data = signatures.issue(REDACTED_KIND)
                blocks.single({"type": "redacted_thinking", "data": data})
                issued.append(data)
            if entry.reasoning:
                text = "".join(entry.reasoning) if shown else ""
                signature = signatures.issue(THINKING_KIND, text)
                deltas = (
                    [{"type": "thinking_delta", "thinking": part} for part in entry.reasoning]
                    if shown
                    else []
                )
                deltas.append({"type": "signature_delta", "signature": signature})
                blocks.block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
                issued.append(signature)
        if entry.text:
            blocks.block(
                {"type": "text", "text": ""}, [{"type": "text_delta", "text": t} for t in entry.text]
            )
        texts = self.texts(body)
        for call in entry.tool_calls:
            arguments = resolve_placeholders(call.arguments, body, texts)
            fragments = [
                {"type": "input_json_delta", "partial_json": part} for part in split(arguments, entry.chunk)
            ]
            blocks.block({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, fragments)
        if issued and entry.tool_calls:
            ledger.note_anthropic([call.id for call in entry.tool_calls], tuple(issued))
        delta: dict[str, Any] = {"stop_reason": _STOP_REASONS[entry.finish_reason], "stop_sequence": None}
        ending: dict[str, Any] = {"delta": delta}
        if entry.send_usage:
            ending["usage"] = {"output_tokens": usage.completion}
        frames.append(_event("message_delta", **ending))
        frames.append(_event("message_stop"))
        return frames

    def error_event(self, fault: Fault) -> list[bytes]:
        body = self.error_body(fault.status, fault.message, fault.error_type, None)
        body.pop("request_id")
        return [sse(body, "error")]

    def conversation(self, body: Mapping[str, Any]) -> object:
        return body.get("messages", [])

    def texts(self, body: Mapping[str, Any]) -> list[str]:
        found = []
        for message in body.get("messages") or []:
            if isinstance(message, dict):
                found.append(_text_of(message.get("content")))
        return found[::-1]


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            parts.append(_text_of(block.get("content")))
    return "".join(parts)


def _event(kind: str, **fields: Any) -> bytes:
    return sse({"type": kind, **fields}, kind)


class _Blocks:
    """Appends content blocks (start, deltas, stop) with running indexes."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames
        self.index = 0

    def block(self, start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        self.frames.append(_event("content_block_start", index=self.index, content_block=start))
        for delta in deltas:
            self.frames.append(_event("content_block_delta", index=self.index, delta=delta))
        self.frames.append(_event("content_block_stop", index=self.index))
        self.index += 1

    def single(self, start: dict[str, Any]) -> None:
        self.block(start, [])
