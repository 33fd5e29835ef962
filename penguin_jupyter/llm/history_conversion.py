"""A request converts only the history it has not converted before (openai-chat, Gemini).

agenthub's stateful client converts its whole history to the provider's wire format on every
request (`transform_uni_message_to_model_input`). For the Chat Completions conversion that is the
largest client-side cost left on a long session after the SDK walk (`sdk_passthrough.py`): about
5 ms at 4,000 messages, growing with every turn, and it re-fetches every image in the history.

The conversion is prefix-stable: each message's wire form depends on the message itself and on
one fact about the messages before it — which reasoning fields (`reasoning_content`,
`reasoning`, unnamed) earlier non-empty thinking came through, so a later thinking-less turn with
tool calls can replay the field empty. `IncrementalConversion` keeps the wire form of the
history converted so far (history messages are the same objects from request to request in the
stateful client) and hands agenthub only the new messages, preceded by one carrier message per
reasoning field seen, whose wire form it then drops. Any history that is not an extension of the
cached one (a rolled-back request, `set_history`) is converted whole, as before.

agenthub's Gemini conversion is prefix-stable the same way, with another fact about the earlier
messages: the function name of each tool call (a function response names its call's function,
the universal tool result carries only the id). There the carrier is one message with a tool call
for each id the new tool results answer, whose Content is dropped. Gemini's conversion is the
larger cost (≈ 190 ms at 4,000 messages), and the kept `Content` objects are what lets
`gemini_request.py` keep their wire form too.

Installed only when the client's conversion is exactly agenthub's openai-chat function (its
vLLM adapter inherits it) or its Gemini one; every other protocol converts as agenthub does.
tests/llm/test_llm_history_conversion.py checks the result against agenthub's own conversion.
See docs/model-requests.md ("Long sessions").
"""

from __future__ import annotations

import operator
from collections.abc import Awaitable, Callable
from typing import Any

from agenthub.gemini3_8.client import Gemini3_8Client
from agenthub.openai_chat.client import OpenaiChatClient
from agenthub.types import UniMessage

from .sdk_internals import conversion_function, replace_conversion

Convert = Callable[[list[UniMessage]], Awaitable[list[Any]]]


def reasoning_fields(message: UniMessage) -> set[str | None]:
    """The reasoning fields the message's non-empty thinking came through (None: unnamed)."""
    fields: set[str | None] = set()
    for item in message.get("content_items", []):
        if item.get("type") == "thinking" and item.get("thinking"):
            fields.add((item.get("fidelity") or {}).get("reasoning_field"))
    return fields


def carrier(field: str | None) -> UniMessage:
    """A message whose conversion records `field` as seen and yields exactly one wire message."""
    fidelity = {"reasoning_field": field} if field is not None else {}
    item = {"type": "thinking", "thinking": ".", "fidelity": fidelity}
    return {"role": "assistant", "content_items": [item]}


class ReasoningFieldContext:
    """openai-chat: the reasoning fields earlier non-empty thinking came through."""

    def __init__(self) -> None:
        self._fields: set[str | None] = set()

    def carriers(self, new: list[UniMessage]) -> list[UniMessage]:
        return [carrier(field) for field in sorted(self._fields, key=lambda f: f or "")]

    def learn(self, message: UniMessage) -> None:
        self._fields |= reasoning_fields(message)


class CallNameContext:
    """Gemini: the function name of each earlier tool call, by call id."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def carriers(self, new: list[UniMessage]) -> list[UniMessage]:
        answered = [
            item["tool_call_id"]
            for message in new
            for item in message.get("content_items", [])
            if item.get("type") == "tool_result" and item.get("tool_call_id") in self._names
        ]
        if not answered:
            return []
        calls = [
            {"type": "tool_call", "name": self._names[call_id], "arguments": {}, "tool_call_id": call_id}
            for call_id in dict.fromkeys(answered)
        ]
        return [{"role": "assistant", "content_items": calls}]

    def learn(self, message: UniMessage) -> None:
        for item in message.get("content_items", []):
            if item.get("type") == "tool_call":
                self._names[item["tool_call_id"]] = item["name"]


class IncrementalConversion:
    """Callable standing in for the client's conversion method. `context` makes the context
    object of the protocol (default: openai-chat's reasoning fields); each carrier it gives
    must convert to exactly one wire message."""

    def __init__(self, convert: Convert, context: Callable[[], Any] = ReasoningFieldContext) -> None:
        self._convert = convert
        self._make_context = context
        self._context = context()
        self._converted: list[UniMessage] = []  # the history converted so far (same objects)
        self._wire: list[Any] = []  # its wire form
        self.converted_last = 0  # messages handed to agenthub by the last call (for tests)

    async def __call__(self, messages: list[UniMessage]) -> list[Any]:
        known = self._extends_cache(messages)
        if not known:
            self._converted, self._wire, self._context = [], [], self._make_context()
        new = messages[known:]
        carriers = self._context.carriers(new)
        wire = await self._convert([*carriers, *new]) if new or carriers else []
        self._converted.extend(new)
        self._wire.extend(wire[len(carriers) :])
        for message in new:
            self._context.learn(message)
        self.converted_last = len(new)
        return list(self._wire)  # agenthub inserts the system prompt into the list it gets

    def _extends_cache(self, messages: list[UniMessage]) -> int:
        """len(cache) when `messages` starts with exactly the cached message objects, else 0."""
        cached = self._converted
        if len(messages) < len(cached) or not cached:
            return 0
        if messages[len(cached) - 1] is not cached[-1] or messages[0] is not cached[0]:
            return 0
        if not all(map(operator.is_, messages, cached)):
            return 0
        return len(cached)


def install_incremental_conversion(routed: Any) -> bool:
    """Give `routed` (agenthub's protocol client) an `IncrementalConversion` when its conversion
    is agenthub's openai-chat or Gemini one. Returns whether it did."""
    conversion = conversion_function(routed)
    if conversion is OpenaiChatClient.transform_uni_message_to_model_input:
        replace_conversion(routed, IncrementalConversion)
    elif conversion is Gemini3_8Client.transform_uni_message_to_model_input:
        replace_conversion(routed, lambda convert: IncrementalConversion(convert, CallNameContext))
    else:
        return False
    return True
