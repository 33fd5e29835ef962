"""Outbound conversion: complete OmniMessages → agenthub UniMessages (docs/model.md "Outbound").

Owns `merge_to_uni_message` (one request's new messages, one role) and `group_history`
(resume replay, adjacent same-role runs). Fidelity payloads are passed back as they arrived
(bytes included, docs/protocol.md "Fidelity") and tool_call ids lose their `#n` suffix. Inbound translation lives in `translator.py`.
"""

from __future__ import annotations

import base64
import binascii
from typing import TypeVar

from agenthub.types import (
    ContentItem,
    Fidelity,
    ImageContentItem,
    InlineDataContentItem,
    InlineThinkingContentItem,
    TextContentItem,
    ThinkingContentItem,
    ToolCallContentItem,
    ToolResultContentItem,
    UniMessage,
)

from ..omni import (
    ImageUrlPayload,
    InlineDataPayload,
    InlineThinkingPayload,
    OmniMessage,
    TextPayload,
    ThinkingPayload,
    ToolCallOutputPayload,
    ToolCallPayload,
    fidelity_for_provider,
    model_role,
    read_call_arguments,
)
from .tool_call_ids import strip_tool_call_id_suffix

MIXED_ROLES_ERROR = (
    "stream_generate does not accept mixed roles: all messages merged into one gateway message "
    "must share the same role"
)
EMPTY_INPUT_ERROR = "stream_generate requires at least one input message"


_FidelityItem = TypeVar(
    "_FidelityItem",
    TextContentItem,
    InlineDataContentItem,
    ThinkingContentItem,
    InlineThinkingContentItem,
    ToolCallContentItem,
)


def _with_fidelity(item: _FidelityItem, fidelity: Fidelity | None) -> _FidelityItem:
    """The item with its fidelity as the provider gave it (JSON-safe bytes back to bytes)."""
    if fidelity:
        item["fidelity"] = fidelity_for_provider(fidelity)
    return item


def _decode_base64(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"{what} data is not valid base64: {exc}") from None


def _parse_arguments(raw: str, tool_call_id: str) -> dict[str, object]:
    """A tool call's JSON-string arguments as an object (`omni.read_call_arguments`, the one
    parser): `""` and non-objects become `{}`; text that is not JSON is a ValueError."""
    parsed = read_call_arguments(raw)
    if isinstance(parsed, dict):
        return parsed
    if parsed.reason.startswith("are not valid JSON"):
        raise ValueError(f"tool_call {tool_call_id} has arguments that {parsed.reason}")
    return {}


def to_content_item(msg: OmniMessage) -> ContentItem:
    """The gateway content item for one complete model message; ValueError for anything else."""
    p = msg.payload
    if isinstance(p, TextPayload):
        return _with_fidelity(TextContentItem(type="text", text=p.text), p.fidelity)
    if isinstance(p, ImageUrlPayload):
        return ImageContentItem(type="image_url", image_url=p.image_url)
    if isinstance(p, InlineDataPayload):
        data = _decode_base64(p.data, "inline_data")
        return _with_fidelity(
            InlineDataContentItem(type="inline_data", data=data, mime_type=p.mime_type), p.fidelity
        )
    if isinstance(p, ThinkingPayload):
        return _with_fidelity(ThinkingContentItem(type="thinking", thinking=p.thinking), p.fidelity)
    if isinstance(p, InlineThinkingPayload):
        data = _decode_base64(p.data, "inline_thinking")
        item = InlineThinkingContentItem(type="inline_thinking", data=data, mime_type=p.mime_type)
        return _with_fidelity(item, p.fidelity)
    if isinstance(p, ToolCallPayload):
        call = ToolCallContentItem(
            type="tool_call",
            name=p.name,
            arguments=_parse_arguments(p.arguments, p.tool_call_id),
            tool_call_id=strip_tool_call_id_suffix(p.tool_call_id),
        )
        return _with_fidelity(call, p.fidelity)
    if isinstance(p, ToolCallOutputPayload):
        tool_call_id = strip_tool_call_id_suffix(p.tool_call_id)
        if p.images:
            return ToolResultContentItem(
                type="tool_result", text=p.output, images=list(p.images), tool_call_id=tool_call_id
            )
        return ToolResultContentItem(type="tool_result", text=p.output, tool_call_id=tool_call_id)
    raise ValueError(f"stream_generate accepts only complete model messages, got {msg.kind!r}")


def merge_to_uni_message(messages: list[OmniMessage]) -> UniMessage:
    """One gateway message from same-role complete messages; ValueError on empty or mixed input."""
    if not messages:
        raise ValueError(EMPTY_INPUT_ERROR)
    role = model_role(messages[0])
    items: list[ContentItem] = []
    for msg in messages:
        if model_role(msg) != role:
            raise ValueError(MIXED_ROLES_ERROR)
        items.append(to_content_item(msg))
    if role not in ("user", "assistant"):
        raise ValueError(f"stream_generate accepts only complete model messages, got {messages[0].type!r}")
    return {"role": role, "content_items": items}


def group_history(history: list[OmniMessage]) -> list[UniMessage]:
    """Committed history as gateway messages: each run of adjacent same-role messages is one."""
    groups: list[list[OmniMessage]] = []
    current_role: str | None = None
    for msg in history:
        role = model_role(msg)
        if role not in ("user", "assistant"):
            raise ValueError(f"set_history accepts only complete model messages, got {msg.type!r}")
        if role != current_role:
            groups.append([])
            current_role = role
        groups[-1].append(msg)
    return [merge_to_uni_message(group) for group in groups]
