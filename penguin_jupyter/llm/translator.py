"""EventTranslator: agenthub UniEvents → OmniMessages (docs/model.md "Inbound: the event translator").

Owns inbound segmentation (thinking / text / tool-call fragments and their complete messages,
fidelity-driven block boundaries), the request's usage snapshot and `usage_to_token_counts`.
It performs no I/O: `GenerativeModel` feeds it events and decides between `finish()` and
`finish_interrupted()`. Tool-call ids come from the session's `ToolCallIdAllocator`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from agenthub.types import (
    Fidelity,
    PartialToolCallContentItem,
    TextContentItem,
    ThinkingContentItem,
    ToolCallContentItem,
    UniEvent,
    UsageMetadata,
)

from ..omni import (
    OmniMessage,
    StopReason,
    TokenCounts,
    assistant_text,
    dumps_compact,
    partial_text,
    partial_thinking,
    partial_tool_call,
    thinking,
    tool_call,
)
from .tool_call_ids import ToolCallIdAllocator

_COMPLETED_FINISH_REASONS = (None, "stop", "tool_call")


def usage_to_token_counts(usage: UsageMetadata | None) -> TokenCounts:
    """cache_read = cached, cache_write = prompt (uncached input), output = thoughts + response."""
    cached = (usage.get("cached_tokens") if usage else None) or 0
    prompt = (usage.get("prompt_tokens") if usage else None) or 0
    output = ((usage.get("thoughts_tokens") if usage else None) or 0) + (
        (usage.get("response_tokens") if usage else None) or 0
    )
    return TokenCounts(cache_read=cached, cache_write=prompt, output=output, total=cached + prompt + output)


def _fidelity_of(
    item: TextContentItem | ThinkingContentItem | PartialToolCallContentItem | ToolCallContentItem,
) -> Fidelity | None:
    """The item's fidelity, with an empty object treated as absent."""
    fidelity = item.get("fidelity")
    return dict(fidelity) if fidelity else None


@dataclass
class _ToolCallAccumulator:
    provider_id: str
    tool_call_id: str
    name: str = ""
    args_buffer: str = ""
    complete_args: str | None = None
    fidelity: Fidelity | None = None
    started: bool = False
    emitted: bool = False


class _Segment:
    """One open text or thinking block: started flag, buffer and held fidelity."""

    def __init__(self) -> None:
        self.started = False
        self.buffer = ""
        self.fidelity: Fidelity | None = None


class EventTranslator:
    """Feed `push_event` every gateway event, then call exactly one of `finish` /
    `finish_interrupted`. All methods yield OmniMessages in emission order."""

    def __init__(self, tool_call_ids: ToolCallIdAllocator | None = None) -> None:
        self._ids = tool_call_ids or ToolCallIdAllocator()
        self._text = _Segment()
        self._thinking = _Segment()
        self._tools: dict[str, _ToolCallAccumulator] = {}
        self._tool_order: list[_ToolCallAccumulator] = []
        self._active_provider_id: str | None = None
        self.finish_reason: str | None = None
        self.request_tokens = TokenCounts()

    @property
    def saw_finish_reason(self) -> bool:
        return self.finish_reason is not None

    # --- inbound ---------------------------------------------------------------------------

    def push_event(self, event: UniEvent) -> Iterator[OmniMessage]:
        finish_reason = event.get("finish_reason")
        if finish_reason is not None:
            self.finish_reason = finish_reason
        usage = event.get("usage_metadata")
        if usage:
            # cumulative snapshots: the last one wins, never summed
            self.request_tokens = usage_to_token_counts(usage)
        for item in event.get("content_items") or ():
            if "type" not in item:  # (a malformed item is skipped, as any unknown kind)
                continue
            if item["type"] == "text":
                yield from self._on_text(item)
            elif item["type"] == "thinking":
                yield from self._on_thinking(item)
            elif item["type"] == "partial_tool_call":
                yield from self._on_partial_tool_call(item)
            elif item["type"] == "tool_call":
                yield from self._on_tool_call(item)

    def _on_text(self, item: TextContentItem) -> Iterator[OmniMessage]:
        text = item.get("text") or ""
        fidelity = _fidelity_of(item)
        held = self._text.fidelity or {}
        incoming_phase = (fidelity or {}).get("phase")
        signed = held.get("signature") is not None and bool(text or fidelity)
        new_phase = incoming_phase is not None and incoming_phase != held.get("phase")
        if signed or new_phase:
            yield from self._close_thinking("completed")
            yield from self._close_text("completed")
        if fidelity:
            self._text.fidelity = {**(self._text.fidelity or {}), **fidelity}
        if not text:
            return
        yield from self._close_thinking("completed")
        if not self._text.started:
            self._text.started = True
            yield partial_text("start")
        self._text.buffer += text
        yield partial_text("delta", text)

    def _on_thinking(self, item: ThinkingContentItem) -> Iterator[OmniMessage]:
        text = item.get("thinking") or ""
        fidelity = _fidelity_of(item)
        held = self._thinking.fidelity
        if held and held != (fidelity or {}) and (text or fidelity):
            yield from self._close_thinking("completed")
        if fidelity:
            self._thinking.fidelity = fidelity
        if not text:
            return
        yield from self._close_text("completed")
        if not self._thinking.started:
            self._thinking.started = True
            yield partial_thinking("start")
        self._thinking.buffer += text
        yield partial_thinking("delta", text)

    def _on_partial_tool_call(self, item: PartialToolCallContentItem) -> Iterator[OmniMessage]:
        item_id = item.get("tool_call_id") or ""
        key = item_id or self._active_provider_id
        if not key:
            return
        if item_id:
            self._active_provider_id = item_id
        acc = self._tools.get(key)
        if (
            acc is None or acc.emitted
        ):  # a provider id used again (a call named by its function) is a new call
            acc = self._new_tool(key)
        name = item.get("name") or ""
        if name:
            acc.name = name
        fidelity = _fidelity_of(item)
        if fidelity:
            acc.fidelity = fidelity
        if not acc.started:
            yield from self._close_thinking("completed")
            yield from self._close_text("completed")
            acc.started = True
            yield partial_tool_call("start", acc.name, "", acc.tool_call_id)
        fragment = item.get("arguments") or ""
        if fragment:
            acc.args_buffer += fragment
            yield partial_tool_call("delta", "", fragment, acc.tool_call_id)

    def _on_tool_call(self, item: ToolCallContentItem) -> Iterator[OmniMessage]:
        provider_id = item.get("tool_call_id") or ""
        if not provider_id:
            return
        yield from self._close_thinking("completed")
        yield from self._close_text("completed")
        acc = self._tools.get(provider_id)
        if acc is None or acc.emitted:
            acc = self._new_tool(provider_id)
        acc.name = item.get("name") or acc.name
        arguments = item.get("arguments")
        acc.complete_args = dumps_compact(arguments if arguments is not None else {})
        fidelity = _fidelity_of(item)
        if fidelity:
            acc.fidelity = fidelity
        yield from self._emit_tool(acc, "completed")

    # --- closing ---------------------------------------------------------------------------

    def finish(self) -> Iterator[OmniMessage]:
        """The stream ended normally: close open blocks with the finish reason's stop_reason and
        emit every call not yet emitted (as completed). The caller then emits `token_usage`."""
        reason: StopReason = "completed" if self.finish_reason in _COMPLETED_FINISH_REASONS else "failed"
        yield from self._close_thinking(reason)
        yield from self._close_text(reason)
        for acc in self._tool_order:
            if not acc.emitted:
                yield from self._emit_tool(acc, "completed")

    def finish_interrupted(self, reason: StopReason) -> Iterator[OmniMessage]:
        """The stream was cut: close everything with `reason`; eagerly emitted calls stay as they were."""
        yield from self._close_thinking(reason)
        yield from self._close_text(reason)
        for acc in self._tool_order:
            if not acc.emitted:
                yield from self._emit_tool(acc, reason)

    def _close_thinking(self, reason: StopReason) -> Iterator[OmniMessage]:
        seg = self._thinking
        if seg.started:
            seg.started = False
            yield partial_thinking("stop", "", reason)
        if seg.buffer or seg.fidelity:
            yield thinking(seg.buffer, reason, seg.fidelity)
        self._thinking = _Segment()

    def _close_text(self, reason: StopReason) -> Iterator[OmniMessage]:
        seg = self._text
        if seg.started:
            seg.started = False
            yield partial_text("stop", "", reason)
        if seg.buffer or seg.fidelity:
            yield assistant_text(seg.buffer, reason, seg.fidelity)
        self._text = _Segment()

    def _new_tool(self, provider_id: str) -> _ToolCallAccumulator:
        acc = _ToolCallAccumulator(provider_id=provider_id, tool_call_id=self._ids.allocate(provider_id))
        self._tools[provider_id] = acc
        self._tool_order.append(acc)
        return acc

    def _emit_tool(self, acc: _ToolCallAccumulator, reason: StopReason) -> Iterator[OmniMessage]:
        acc.emitted = True
        if acc.started:
            yield partial_tool_call("stop", "", "", acc.tool_call_id, reason)
        arguments = acc.complete_args if acc.complete_args is not None else acc.args_buffer
        yield tool_call(acc.name, arguments, acc.tool_call_id, reason, acc.fidelity)
        if self._active_provider_id == acc.provider_id:
            self._active_provider_id = None
