"""OpenAI Responses (`POST …/responses`), as the scripted server speaks it.

Owns the route, the Bearer key, the error bodies (OpenAI's), the mid-stream `error` +
`response.failed` pair, and the SSE events of one entry: `response.created`/`in_progress`, a
reasoning item, a message item with `output_text` deltas, function_call items with argument
deltas, and `response.completed` (or `response.incomplete`) carrying usage. The reasoning item
follows the vendor behind the model id: DeepSeek and MiniMax stream `reasoning_text`; every
other model streams a summary only when `reasoning.summary` is asked for, and carries
`encrypted_content` only when `include` names `reasoning.encrypted_content`. Validation:
`responses_rules.py`. Used by agenthub's gpt6 (GPT-5.4+), openai-responses, deepseek_v4 and
minimax_m3 clients.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .. import signatures
from ..chunks import error_body
from ..placeholders import resolve as resolve_placeholders
from ..script import Fault, ScriptEntry
from . import responses_rules
from .base import Exchange, Ledger, Protocol, Rejection, estimate_tokens, split, sse, usage_numbers
from .chat import ChatCompletions
from .keys import bearer

_CONTENT_CHANNEL_VENDORS = ("deepseek", "minimax")


class Responses(Protocol):
    name = "openai-responses"
    malformed_event = "response.output_text.delta"

    def matches(self, path: str) -> bool:
        return path.endswith("/responses")

    def credential(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        return bearer(headers)

    def bad_key(self, key: str | None) -> Rejection:
        return ChatCompletions().bad_key(key)

    def error_body(
        self, status: int, message: str | None, error_type: str | None, code: str | None
    ) -> dict[str, Any]:
        return error_body(status, message, error_type, code)

    def validate(self, exchange: Exchange, ledger: Ledger) -> Rejection | None:
        found = responses_rules.problem(exchange.body, ledger)
        if found is None:
            return None
        message, code = found
        return Rejection(400, error_body(400, message, "invalid_request_error", code), message)

    def events(self, entry: ScriptEntry, exchange: Exchange, ledger: Ledger) -> list[bytes]:
        return _Stream(entry, exchange, ledger, self.texts(exchange.body)).build()

    def error_event(self, fault: Fault) -> list[bytes]:
        body = error_body(fault.status, fault.message, fault.error_type, None)["error"]
        code = fault.error_type or ("server_error" if fault.status >= 500 else str(body["type"]))
        error = {
            "type": "error",
            "code": code,
            "message": body["message"],
            "param": None,
            "sequence_number": 0,
        }
        failed = {
            "type": "response.failed",
            "sequence_number": 1,
            "response": {
                "id": "resp_scripted_failed",
                "object": "response",
                "status": "failed",
                "output": [],
                "error": {"code": code, "message": body["message"]},
            },
        }
        return [sse(error, "error"), sse(failed, "response.failed")]

    def conversation(self, body: Mapping[str, Any]) -> object:
        return [body.get("instructions"), body.get("input")]

    def texts(self, body: Mapping[str, Any]) -> list[str]:
        items = body.get("input")
        if isinstance(items, str):
            return [items]
        found = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            content = item.get("content") if "content" in item else item.get("output")
            if isinstance(content, list):
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            if isinstance(content, str):
                found.append(content)
        return found[::-1]


class _Stream:
    """The events of one Responses answer, with running sequence numbers and output indexes."""

    def __init__(self, entry: ScriptEntry, exchange: Exchange, ledger: Ledger, texts: list[str]) -> None:
        self.entry = entry
        self.exchange = exchange
        self.body = exchange.body
        self.ledger = ledger
        self.texts = texts
        self.frames: list[bytes] = []
        self.sequence = 0
        self.output: list[dict[str, Any]] = []
        self.response: dict[str, Any] = {
            "id": f"resp_scripted_{exchange.serial}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": exchange.model,
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": self.body.get("tool_choice", "auto"),
            "tools": self.body.get("tools", []),
            "store": self.body.get("store", True),
            "error": None,
            "incomplete_details": None,
            "usage": None,
        }

    def emit(self, kind: str, **fields: Any) -> None:
        self.frames.append(sse({"type": kind, "sequence_number": self.sequence, **fields}, kind))
        self.sequence += 1

    def build(self) -> list[bytes]:
        self.emit("response.created", response=dict(self.response))
        self.emit("response.in_progress", response=dict(self.response))
        encrypted = self._reasoning() if self.entry.reasoning else None
        if self.entry.text:
            self._message()
        call_ids = [self._function_call(call.id, call.name, call.arguments) for call in self.entry.tool_calls]
        if encrypted is not None and call_ids:
            self.ledger.note_responses(call_ids, encrypted)
        self._finish()
        return self.frames

    def _reasoning(self) -> str | None:
        model = self.exchange.model.lower()
        content_channel = any(vendor in model for vendor in _CONTENT_CHANNEL_VENDORS)
        reasoning = self.body.get("reasoning")
        summary_asked = isinstance(reasoning, dict) and bool(reasoning.get("summary"))
        include = self.body.get("include") or []
        text = "".join(self.entry.reasoning)
        index = len(self.output)
        item: dict[str, Any] = {
            "id": f"rs_scripted_{self.exchange.serial}",
            "type": "reasoning",
            "summary": [],
        }
        self.emit("response.output_item.added", output_index=index, item=dict(item))
        where = {"item_id": item["id"], "output_index": index}
        if content_channel:
            for part in self.entry.reasoning:
                self.emit("response.reasoning_text.delta", **where, content_index=0, delta=part)
            self.emit("response.reasoning_text.done", **where, content_index=0, text=text)
            item["content"] = [{"type": "reasoning_text", "text": text}]
        elif summary_asked:
            opening = {"type": "summary_text", "text": ""}
            self.emit("response.reasoning_summary_part.added", **where, summary_index=0, part=opening)
            for piece in self.entry.reasoning:
                self.emit("response.reasoning_summary_text.delta", **where, summary_index=0, delta=piece)
            self.emit("response.reasoning_summary_text.done", **where, summary_index=0, text=text)
            done = {"type": "summary_text", "text": text}
            self.emit("response.reasoning_summary_part.done", **where, summary_index=0, part=done)
            item["summary"] = [done]
        encrypted = None
        if not content_channel and "reasoning.encrypted_content" in include:
            encrypted = signatures.issue(responses_rules.REASONING_KIND)
            item["encrypted_content"] = encrypted
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return encrypted

    def _message(self) -> None:
        index = len(self.output)
        item: dict[str, Any] = {
            "id": f"msg_scripted_{self.exchange.serial}",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        self.emit("response.output_item.added", output_index=index, item=dict(item))
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        self.emit(
            "response.content_part.added",
            **where,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        for delta in self.entry.text:
            self.emit("response.output_text.delta", **where, delta=delta, logprobs=[])
        text = "".join(self.entry.text)
        self.emit("response.output_text.done", **where, text=text, logprobs=[])
        part = {"type": "output_text", "text": text, "annotations": []}
        self.emit("response.content_part.done", **where, part=part)
        item.update(status="completed", content=[part])
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)

    def _function_call(self, call_id: str, name: str, arguments: str) -> str:
        arguments = resolve_placeholders(arguments, self.body, self.texts)
        index = len(self.output)
        item: dict[str, Any] = {
            "id": f"fc_{call_id}",
            "type": "function_call",
            "status": "in_progress",
            "call_id": call_id,
            "name": name,
            "arguments": "",
        }
        self.emit("response.output_item.added", output_index=index, item=dict(item))
        for fragment in split(arguments, self.entry.chunk):
            self.emit(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=index,
                delta=fragment,
            )
        self.emit(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=index,
            arguments=arguments,
        )
        item.update(status="completed", arguments=arguments)
        self.emit("response.output_item.done", output_index=index, item=item)
        self.output.append(item)
        return call_id

    def _finish(self) -> None:
        entry = self.entry
        usage = usage_numbers(entry, [self.body.get("instructions"), self.body.get("input")])
        reasoning = usage.reasoning
        if reasoning is None:
            reasoning = estimate_tokens("".join(entry.reasoning)) if entry.reasoning else 0
        reasoning = min(reasoning, usage.completion)
        response = dict(self.response, output=self.output)
        if entry.send_usage:
            response["usage"] = {
                "input_tokens": usage.prompt,
                "input_tokens_details": {"cached_tokens": usage.cached},
                "output_tokens": usage.completion,
                "output_tokens_details": {"reasoning_tokens": reasoning},
                "total_tokens": usage.prompt + usage.completion,
            }
        if entry.finish_reason in ("length", "content_filter"):
            reason = "max_output_tokens" if entry.finish_reason == "length" else "content_filter"
            response.update(status="incomplete", incomplete_details={"reason": reason})
            self.emit("response.incomplete", response=response)
        else:
            response["status"] = "completed"
            self.emit("response.completed", response=response)
