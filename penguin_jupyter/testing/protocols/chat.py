"""OpenAI Chat Completions (`POST …/chat/completions`), as the scripted server speaks it.

Owns the route, the Bearer key, OpenAI's error bodies, the tool-message validation and the
framing of `chunks.py`'s chunk objects (one `data:` line each, then `data: [DONE]`). Used by
agenthub's openai-chat, openai-chat-vllm-adapter, GLM 5 and Kimi K2.5+ clients. Rules and their
sources: docs/model.md ("The scripted model server").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..chunks import build_chunks, error_body
from ..placeholders import _message_texts
from ..script import Fault, ScriptEntry
from .base import Exchange, Ledger, Protocol, Rejection, sse
from .keys import bearer, masked


class ChatCompletions(Protocol):
    name = "openai-chat"

    def matches(self, path: str) -> bool:
        return path.endswith("/chat/completions") or path == "/chat/completions"

    def credential(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        return bearer(headers)

    def bad_key(self, key: str | None) -> Rejection:
        if not key:
            message = (
                "You didn't provide an API key. You need to provide your API key in an Authorization "
                "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
            )
            return Rejection(401, error_body(401, message, "invalid_request_error", None), message)
        message = f"Incorrect API key provided: {masked(key)}. You can find your API key at https://platform.openai.com/account/api-keys."
        return Rejection(401, error_body(401, message, "invalid_request_error", "invalid_api_key"), message)

    def error_body(
        self, status: int, message: str | None, error_type: str | None, code: str | None
    ) -> dict[str, Any]:
        return error_body(status, message, error_type, code)

    def _invalid(self, message: str, param: str | None, code: str | None = None) -> Rejection:
        return Rejection(400, error_body(400, message, "invalid_request_error", code, param), message)

    def validate(self, exchange: Exchange, ledger: Ledger) -> Rejection | None:
        messages = exchange.body.get("messages")
        if not isinstance(messages, list) or not messages:
            return self._invalid(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                "messages",
                "empty_array",
            )
        open_calls: list[str] = []
        opened_at = 0
        for index, message in enumerate(messages):
            role = message.get("role") if isinstance(message, dict) else None
            if role == "tool":
                call_id = message.get("tool_call_id")
                if call_id not in open_calls:
                    return self._invalid(
                        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                        "message with 'tool_calls'.",
                        f"messages.[{index}].role",
                    )
                open_calls.remove(call_id)
                continue
            if open_calls:
                return self._unanswered(open_calls, opened_at)
            calls = message.get("tool_calls") if role == "assistant" else None
            if calls:
                open_calls = [str(call.get("id")) for call in calls if isinstance(call, dict)]
                opened_at = index
        if open_calls:
            return self._unanswered(open_calls, opened_at)
        return None

    def _unanswered(self, call_ids: list[str], index: int) -> Rejection:
        return self._invalid(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(map(str, call_ids))}",
            f"messages.[{index}].role",
        )

    def events(self, entry: ScriptEntry, exchange: Exchange, ledger: Ledger) -> list[bytes]:
        zai = "glm" in exchange.model.lower()  # Z.AI puts usage on the last chunk unasked
        chunks = build_chunks(
            entry, exchange.body, f"chatcmpl-scripted-{exchange.serial}", usage_on_finish=zai
        )
        return [sse(chunk) for chunk in chunks]

    def error_event(self, fault: Fault) -> list[bytes]:
        body = error_body(fault.status, fault.message, fault.error_type, None)
        return [sse(body)]

    def closing(self) -> list[bytes]:
        return [sse("[DONE]")]

    def conversation(self, body: Mapping[str, Any]) -> object:
        return body.get("messages", [])

    def texts(self, body: Mapping[str, Any]) -> list[str]:
        return _message_texts(dict(body))
