"""A request converts only the history it has not converted before (openai-chat, Gemini,
Anthropic Messages, OpenAI Responses).

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
reasoning field seen, whose wire form it then drops. A history that is not an extension of the
cached one (a rolled-back request, `set_history`) keeps the longest prefix it shares with it
that ended a conversion, and the rest is converted.

agenthub's Gemini conversion is prefix-stable the same way, with another fact about the earlier
messages: the function name of each tool call (a function response names its call's function,
the universal tool result carries only the id). There the carrier is one message with a tool call
for each id the new tool results answer, whose Content is dropped. Gemini's conversion is the
larger cost (≈ 190 ms at 4,000 messages), and the kept `Content` objects are what lets
`gemini_request.py` keep their wire form too.

agenthub's Anthropic Messages conversions (Claude 4.6+, `ant-messages`) and its OpenAI Responses
ones (`openai-responses`, GPT-5.4+/6, DeepSeek v4, MiniMax M3) need no context at all: each message
becomes its own wire items from that message alone (`MessageAlone`, no carriers). They cost
≈ 4 ms (Anthropic) and ≈ 15 ms (Responses, which also `json.dumps` every tool call's arguments)
at 4,000 messages, and kept wire items are what lets `body_encoding.py` keep their JSON too. All
of them but Claude's are plain functions, not coroutines: `IncrementalSyncConversion` stands in
for those. Claude on Bedrock is left whole: agenthub adds `cache_control` to the last user
message's wire form after converting, in place, which a kept wire form would carry into every
later request.

After a `set_history` the first request would convert the whole history in agenthub's one call;
`ProviderClient.stream` first has the kept conversion `catch_up` with the history, slice by slice
with the event loop running between slices (`loop_slices.py`), so agenthub's call converts only
the new message (docs/model-requests.md "The first request after a resume").

Installed only when the client's conversion is exactly one of these agenthub functions (the vLLM
adapter inherits openai-chat's); every other protocol converts as agenthub does.
tests/llm/test_llm_history_conversion.py checks the result against agenthub's own conversion.
See docs/model-requests.md ("Long sessions").
"""

from __future__ import annotations

import bisect
import inspect
import operator
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from agenthub.types import UniMessage

from ..seams.llm_sdk import (
    class_conversion,
    claude_on_bedrock,
    conversion_function,
    installed_conversion,
    loaded_class,
    replace_conversion,
)
from .loop_slices import run_in_slices

Convert = Callable[[list[UniMessage]], Awaitable[list[object]]]
ConvertSync = Callable[[list[UniMessage]], list[object]]


class ConversionContext(Protocol):
    """What a protocol's conversion reads of the history before a message (see the classes below)."""

    def carriers(self, new: list[UniMessage]) -> list[UniMessage]: ...

    def learn(self, message: UniMessage) -> None: ...


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


class MessageAlone:
    """Anthropic Messages, OpenAI Responses: a message's wire form depends on it alone."""

    def carriers(self, new: list[UniMessage]) -> list[UniMessage]:
        return []

    def learn(self, message: UniMessage) -> None:
        pass


class _KeptConversion:
    """The history converted so far and its wire form; `context` makes the context object of the
    protocol (default: openai-chat's reasoning fields); each carrier it gives must convert to
    exactly one wire message."""

    _convert: Convert | ConvertSync  # agenthub's conversion (a coroutine or a plain function)

    def __init__(self, context: Callable[[], ConversionContext] = ReasoningFieldContext) -> None:
        self._make_context = context
        self._context = context()
        self._converted: list[UniMessage] = []  # the history converted so far (same objects)
        self._wire: list[object] = []  # its wire form
        self._marks: list[tuple[int, int]] = []  # (len(_converted), len(_wire)) after each conversion
        self._caught_up = 0  # messages converted by `catch_up` since the last call
        self.converted_last = 0  # messages handed to agenthub for the last request (for tests)

    @property
    def converted(self) -> int:
        """History messages whose wire form is kept (grows slice by slice during `catch_up`)."""
        return len(self._converted)

    def _to_convert(self, messages: list[UniMessage]) -> tuple[list[UniMessage], list[UniMessage]]:
        """(carriers, the messages not kept): what agenthub must convert for `messages`."""
        known = self._reuse(messages)
        new = messages[known:]
        return self._context.carriers(new), new

    def _kept_with(
        self, carriers: list[UniMessage], new: list[UniMessage], wire: list[object]
    ) -> list[object]:
        """Keep the wire form of `new` (agenthub's `wire` of carriers + new); the whole list's."""
        self._keep(carriers, new, wire)
        self.converted_last, self._caught_up = self._caught_up + len(new), 0
        return list(self._wire)  # agenthub inserts the system prompt into the list it gets

    def _keep(self, carriers: list[UniMessage], new: Sequence[UniMessage], wire: list[object]) -> None:
        self._converted.extend(new)
        self._wire.extend(wire[len(carriers) :])
        for message in new:
            self._context.learn(message)
        if new:
            self._marks.append((len(self._converted), len(self._wire)))

    def _reuse(self, messages: list[UniMessage]) -> int:
        """How many of `messages` are kept converted. The whole cache when `messages` extends it;
        else (a rolled-back request, `set_history`) the cache is cut back to the longest prefix
        that `messages` shares and that ended a conversion — where the wire form of the messages
        before it is known to end — and the context is learnt again from that prefix."""
        known = self._extends_cache(messages)
        if known or not self._converted:
            return known
        shared = list(map(operator.is_, messages, self._converted))
        common = shared.index(False) if False in shared else len(shared)
        at = bisect.bisect_right(self._marks, (common, len(self._wire)))
        self._marks = self._marks[:at]
        kept, wire_kept = self._marks[-1] if self._marks else (0, 0)
        self._converted, self._wire = self._converted[:kept], self._wire[:wire_kept]
        self._context = self._make_context()
        for message in self._converted:
            self._context.learn(message)
        return kept

    async def catch_up(self, history: list[UniMessage], check: Callable[[], None] | None = None) -> None:
        """Convert what `history` adds to the kept conversion — all of it after a `set_history` —
        in slices with the event loop running between them (`loop_slices.py`), so the request's
        own call converts only its new message. Each slice extends the kept conversion as a
        request would (carriers included), so a stop between slices keeps a valid prefix."""
        known = self._reuse(history)

        async def convert(chunk: Sequence[UniMessage]) -> None:
            carriers = self._context.carriers(list(chunk))
            converted = self._convert([*carriers, *chunk])
            wire = await converted if inspect.isawaitable(converted) else converted
            self._keep(carriers, chunk, wire)
            self._caught_up += len(chunk)

        await run_in_slices(history[known:], convert, check)

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


class IncrementalConversion(_KeptConversion):
    """Callable standing in for the client's conversion method (a coroutine in agenthub)."""

    def __init__(
        self, convert: Convert, context: Callable[[], ConversionContext] = ReasoningFieldContext
    ) -> None:
        super().__init__(context)
        self._convert = self._convert_async = convert

    async def __call__(self, messages: list[UniMessage]) -> list[object]:
        carriers, new = self._to_convert(messages)
        todo = [*carriers, *new]
        return self._kept_with(carriers, new, await self._convert_async(todo) if todo else [])


class IncrementalSyncConversion(_KeptConversion):
    """Callable standing in for the client's conversion method (a plain function in agenthub)."""

    def __init__(self, convert: ConvertSync, context: Callable[[], ConversionContext] = MessageAlone) -> None:
        super().__init__(context)
        self._convert = self._convert_sync = convert

    def __call__(self, messages: list[UniMessage]) -> list[object]:
        carriers, new = self._to_convert(messages)
        todo = [*carriers, *new]
        return self._kept_with(carriers, new, self._convert_sync(todo) if todo else [])


# agenthub's conversion functions (by the protocol client class that defines them) -> how this
# module stands in for each. Named, not imported: a client's module is imported when agenthub
# routes to it, so a kernel talking to one provider never loads the other providers' SDKs
# (anthropic alone is ~1.6 s of CPU). `_incremental_for` compares by identity with the function
# of the module already loaded.
_INCREMENTAL: dict[tuple[str, str], Callable[..., _KeptConversion]] = {
    ("agenthub.openai_chat.client", "OpenaiChatClient"): IncrementalConversion,
    ("agenthub.gemini3_8.client", "Gemini3_8Client"): lambda convert: IncrementalConversion(
        convert, CallNameContext
    ),
    ("agenthub.claude5.client", "Claude5Client"): lambda convert: IncrementalConversion(
        convert, MessageAlone
    ),
    ("agenthub.ant_messages.client", "AntMessagesClient"): IncrementalSyncConversion,
    ("agenthub.openai_responses.client", "OpenaiResponsesClient"): IncrementalSyncConversion,
    ("agenthub.gpt6.client", "GPT6Client"): IncrementalSyncConversion,
    ("agenthub.deepseek_v4.client", "DeepSeekV4Client"): IncrementalSyncConversion,
    ("agenthub.minimax_m3.client", "MiniMaxM3Client"): IncrementalSyncConversion,
}


def _incremental_for(function: object) -> Callable[..., _KeptConversion] | None:
    """How to stand in for `function` when it is one of the conversions above (identity, among
    the client modules already imported), else None."""
    if function is None:
        return None
    for (module_name, class_name), make in _INCREMENTAL.items():
        client_class = loaded_class(module_name, class_name)
        if client_class is not None and class_conversion(client_class) is function:
            return make
    return None


def kept_conversion(routed: object) -> _KeptConversion | None:
    """The incremental conversion installed on `routed`, if any."""
    conversion = installed_conversion(routed)
    return conversion if isinstance(conversion, _KeptConversion) else None


def install_incremental_conversion(routed: object) -> bool:
    """Give `routed` (agenthub's protocol client) an incremental conversion when its conversion
    is one of agenthub's functions above (not on Bedrock). Returns whether it did."""
    make = _incremental_for(conversion_function(routed))
    if make is None or claude_on_bedrock(routed):
        return False
    return replace_conversion(routed, make)
