"""OpenAI Chat Completions streaming chunks for one script entry.

Owns the wire shape of `chat.completion.chunk` objects and of the provider-shaped error body:
reasoning deltas (`reasoning_content`), content deltas, tool-call deltas (the first fragment of
each call carries index/id/name, later ones only argument text; calls one after another, or with
`interleave_tool_calls` all openings first and then the calls' fragments alternating by index), the finish chunk and the separate
usage chunk (`stream_options.include_usage`, or usage on the finish chunk as Z.AI sends it).
Framing, faults and pacing are `protocols/chat.py` and `server.py`.
"""

from __future__ import annotations

import math
import time
from typing import Any

from penguin_jupyter.omni import dumps_compact

from .placeholders import resolve as resolve_placeholders
from .script import ScriptEntry

_DEFAULT_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("permission_denied", None, "You are not allowed to use this model."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    408: ("timeout", None, "Request timed out."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached. Please try again later."),
}


def estimate_tokens(text: str) -> int:
    """A rough token count (4 chars a token), at least 1 for non-empty text."""
    return math.ceil(len(text) / 4)


def error_body(
    status: int,
    message: str | None = None,
    error_type: str | None = None,
    code: str | None = None,
    param: str | None = None,
) -> dict:
    """An OpenAI-shaped error object: `{"error": {"message", "type", "param", "code"}}`."""
    if status >= 500:
        default: tuple[str, str | None, str] = (
            "server_error",
            None,
            "The server had an error while processing your request.",
        )
    else:
        default = _DEFAULT_ERRORS.get(status, ("invalid_request_error", None, "Request failed."))
    return {
        "error": {
            "message": message if message is not None else default[2],
            "type": error_type if error_type is not None else default[0],
            "param": param,
            "code": code if code is not None else default[1],
        }
    }


def usage_for(entry: ScriptEntry, request: dict[str, Any]) -> dict[str, Any]:
    """The usage object: the entry's numbers, else a rough count of the request and the reply."""
    given = entry.usage or {}
    prompt = given.get("prompt_tokens")
    if prompt is None:
        prompt = max(1, estimate_tokens(dumps_compact(request.get("messages", []))))
    reasoning = given.get("reasoning_tokens")
    completion = given.get("completion_tokens")
    if completion is None:
        produced = (
            "".join(entry.text) + "".join(entry.reasoning) + "".join(c.arguments for c in entry.tool_calls)
        )
        completion = max(1, estimate_tokens(produced))
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": given.get("cached_tokens", 0)},
    }
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


class ChunkFactory:
    """Builds the chunk objects of one response (shared id, creation time and model)."""

    def __init__(self, completion_id: str, model: str) -> None:
        self.completion_id = completion_id
        self.model = model
        self.created = int(time.time())
        self._role_sent = False

    def _chunk(self, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_scripted",
            "choices": choices,
        }
        if usage is not None:
            chunk["usage"] = usage
        return chunk

    def delta(self, **fields: Any) -> dict[str, Any]:
        if not self._role_sent:
            fields = {"role": "assistant", **fields}
            self._role_sent = True
        return self._chunk([{"index": 0, "delta": fields, "logprobs": None, "finish_reason": None}])

    def finish(self, finish_reason: str) -> dict[str, Any]:
        return self._chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish_reason}])

    def usage(self, usage: dict[str, Any]) -> dict[str, Any]:
        return self._chunk([], usage)


def _tool_call_deltas(
    index: int, call: Any, entry: ScriptEntry, request: dict[str, Any], texts: list[str] | None
) -> list[dict[str, Any]]:
    """One call's tool-call deltas: the opening (index, id, name), then argument fragments."""
    opening = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
    arguments = resolve_placeholders(call.arguments, request, texts)
    fragments = [
        {"index": index, "function": {"arguments": arguments[start : start + entry.chunk]}}
        for start in range(0, len(arguments), entry.chunk)
    ]
    return [opening, *fragments]


def _interleaved(calls: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Every call's opening, then the fragments of all calls alternating (round robin)."""
    openings = [[deltas[0]] for deltas in calls]
    rest = [deltas[1:] for deltas in calls]
    rounds = [[deltas[n]] for n in range(max((len(r) for r in rest), default=0)) for deltas in rest if n < len(deltas)]
    return openings + rounds


def build_chunks(
    entry: ScriptEntry,
    request: dict[str, Any],
    completion_id: str,
    texts: list[str] | None = None,
    *,
    usage_on_finish: bool = False,
) -> list[dict[str, Any]]:
    """Every chunk of a well-behaved response to `request`, in send order.

    Usage comes as its own chunk when `stream_options.include_usage` asks for it; with
    `usage_on_finish` (Z.AI's GLM endpoint) it rides on the finish chunk unasked.
    """
    factory = ChunkFactory(completion_id, str(request.get("model") or "scripted-model"))
    chunks = [factory.delta(**{entry.reasoning_field: part}) for part in entry.reasoning]
    chunks += [factory.delta(content=part) for part in entry.text]
    calls = [_tool_call_deltas(index, call, entry, request, texts) for index, call in enumerate(entry.tool_calls)]
    if entry.interleave_tool_calls:
        calls = _interleaved(calls)
    chunks += [factory.delta(tool_calls=[delta]) for deltas in calls for delta in deltas]
    include_usage = (request.get("stream_options") or {}).get("include_usage", False)
    finish = factory.finish(entry.finish_reason)
    if entry.send_usage and usage_on_finish and not include_usage:
        finish["usage"] = usage_for(entry, request)
    chunks.append(finish)
    if entry.send_usage and include_usage:
        chunks.append(factory.usage(usage_for(entry, request)))
    return chunks
