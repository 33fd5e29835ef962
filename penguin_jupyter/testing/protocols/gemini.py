"""Gemini `models/{model}:streamGenerateContent?alt=sse`, as the scripted server speaks it.

Owns the route (any prefix, `v1beta/models/…`), the key (`x-goog-api-key` or `?key=`), Google's
error bodies (`{"error": {"code", "message", "status", "details"}}`, a bad key being 400
INVALID_ARGUMENT with reason API_KEY_INVALID), the mid-stream error chunk, and the chunks of one
entry: thought parts (only when `thinkingConfig.includeThoughts` is true), text parts, whole
`functionCall` parts (Gemini does not stream arguments), then a chunk with `finishReason` and
`usageMetadata`. A `thoughtSignature` (binary, base64 on the wire) rides on the first
functionCall part, else on the last text part. Validation: `gemini_rules.py`. Used by agenthub's
gemini3_8 client (every `gemini-3…` model id).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...omni import read_call_arguments
from .. import signatures
from ..placeholders import resolve as resolve_placeholders
from ..script import Fault, ScriptEntry
from . import gemini_rules
from .base import Exchange, Ledger, Protocol, Rejection, estimate_tokens, sse, usage_numbers

_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_MESSAGES = {
    "INVALID_ARGUMENT": "Request contains an invalid argument.",
    "PERMISSION_DENIED": "The caller does not have permission.",
    "NOT_FOUND": "Requested entity was not found.",
    "RESOURCE_EXHAUSTED": "Resource has been exhausted (e.g. check quota).",
    "INTERNAL": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    "UNAVAILABLE": "The model is overloaded. Please try again later.",
    "DEADLINE_EXCEEDED": "Deadline expired before operation could complete.",
}
_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}
_BAD_KEY = "API key not valid. Please pass a valid API key."


def status_for(status: int) -> str:
    if status in _STATUSES:
        return _STATUSES[status]
    return "UNAVAILABLE" if status >= 500 else "INVALID_ARGUMENT"


def model_of(path: str) -> str:
    """`gemini-3-pro-preview` from `/v1beta/models/gemini-3-pro-preview:streamGenerateContent`."""
    tail = path.rsplit("/models/", 1)[-1]
    return tail.split(":", 1)[0]


class GeminiGenerateContent(Protocol):
    name = "gemini"
    stream_hint = "(models/{model}:streamGenerateContent)"

    def matches(self, path: str) -> bool:
        return path.endswith(":streamGenerateContent") or path.endswith(":generateContent")

    def streaming(self, exchange: Exchange) -> bool:
        return exchange.path.endswith(":streamGenerateContent")

    def credential(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        return headers.get("x-goog-api-key") or query.get("key") or None

    def bad_key(self, key: str | None) -> Rejection:
        if not key:
            message = (
                "Method doesn't allow unregistered callers (callers without established identity). "
                "Please use API Key or other form of API consumer identity to call this API."
            )
            return Rejection(403, self.error_body(403, message, None, None), message)
        body = self.error_body(400, _BAD_KEY, None, "API_KEY_INVALID")
        body["error"]["details"].append(
            {
                "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
                "locale": "en-US",
                "message": _BAD_KEY,
            }
        )
        return Rejection(400, body, _BAD_KEY)

    def error_body(
        self, status: int, message: str | None, error_type: str | None, code: str | None
    ) -> dict[str, Any]:
        state = error_type or status_for(status)
        error: dict[str, Any] = {
            "code": status,
            "message": message if message is not None else _MESSAGES.get(state, "Request failed."),
            "status": state,
        }
        if code is not None:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": code,
                    "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"},
                }
            ]
        return {"error": error}

    def validate(self, exchange: Exchange, ledger: Ledger) -> Rejection | None:
        problem = gemini_rules.problem(exchange.body, exchange.model)
        return None if problem is None else self.reject(400, problem)

    def events(self, entry: ScriptEntry, exchange: Exchange, ledger: Ledger) -> list[bytes]:
        body = exchange.body
        config = body.get("generationConfig") or {}
        thinking = config.get("thinkingConfig") or {} if isinstance(config, dict) else {}
        # the API takes proto-JSON names in either spelling; google-genai sends include_thoughts
        include_thoughts = isinstance(thinking, dict) and True in (
            thinking.get("includeThoughts"),
            thinking.get("include_thoughts"),
        )
        chunks: list[list[dict[str, Any]]] = []
        calls: list[list[dict[str, Any]]] = []
        if include_thoughts:
            chunks += [[{"text": part, "thought": True}] for part in entry.reasoning]
        chunks += [[{"text": part}] for part in entry.text]
        texts = self.texts(body)
        for call in entry.tool_calls:
            arguments = resolve_placeholders(call.arguments, body, texts)
            args = read_call_arguments(arguments) if arguments.strip() else {}
            if not isinstance(args, dict):
                raise ValueError(
                    f"tool call {call.name!r}: Gemini carries arguments as a JSON object, got {arguments!r}"
                )
            calls.append([{"functionCall": {"id": call.id, "name": call.name, "args": args}}])
        signature = signatures.issue(gemini_rules.SIGNATURE_KIND)
        if calls:
            calls[0][0]["thoughtSignature"] = signature
        elif entry.text:
            chunks[-1][-1]["thoughtSignature"] = signature
        chunks += calls
        frames = [sse(self._chunk(exchange, parts)) for parts in chunks]
        final = self._chunk(exchange, None)
        final["candidates"][0]["finishReason"] = _FINISH[entry.finish_reason]
        if entry.send_usage:
            final["usageMetadata"] = self._usage(entry, body)
        frames.append(sse(final))
        return frames

    def _chunk(self, exchange: Exchange, parts: list[dict[str, Any]] | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"index": 0}
        if parts is not None:
            candidate["content"] = {"parts": parts, "role": "model"}
        return {
            "candidates": [candidate],
            "modelVersion": exchange.model,
            "responseId": f"scripted-{exchange.serial}",
        }

    def _usage(self, entry: ScriptEntry, body: Mapping[str, Any]) -> dict[str, Any]:
        usage = usage_numbers(entry, self.conversation(body))
        thoughts = usage.reasoning
        if thoughts is None:
            thoughts = estimate_tokens("".join(entry.reasoning)) if entry.reasoning else 0
        thoughts = min(thoughts, usage.completion)
        metadata: dict[str, Any] = {
            "promptTokenCount": usage.prompt,
            "candidatesTokenCount": usage.completion - thoughts,
            "totalTokenCount": usage.prompt + usage.completion,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage.prompt}],
        }
        if thoughts:
            metadata["thoughtsTokenCount"] = thoughts
        if usage.cached:
            metadata["cachedContentTokenCount"] = usage.cached
        return metadata

    def error_event(self, fault: Fault) -> list[bytes]:
        return [sse(self.error_body(fault.status, fault.message, fault.error_type, None))]

    def conversation(self, body: Mapping[str, Any]) -> object:
        return [body.get("systemInstruction"), body.get("contents")]

    def texts(self, body: Mapping[str, Any]) -> list[str]:
        found = []
        for content in body.get("contents") or []:
            if not isinstance(content, dict):
                continue
            pieces = []
            for part in content.get("parts") or []:
                if not isinstance(part, dict):
                    continue
                if isinstance(part.get("text"), str) and not part.get("thought"):
                    pieces.append(part["text"])
                response = (part.get("functionResponse") or {}).get("response")
                if isinstance(response, dict):
                    result = response.get("result", response.get("output"))
                    pieces.append(result if isinstance(result, str) else json.dumps(response))
            found.append("".join(pieces))
        return found[::-1]
