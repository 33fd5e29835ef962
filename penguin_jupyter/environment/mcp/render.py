"""Flattening an MCP `CallToolResult` into Environment output (docs/mcp.md "Naming, permission, results").

Owns the content-block mapping only: text, data-URL images, placeholder lines, and the
`structuredContent` fallback. Whether the call failed, the empty-error wording and the
framing are decided by `tools.py` and the Environment's close-out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

EMPTY_ERROR_TEXT = "[tool reported an error with no message]"


@dataclass
class RenderedResult:
    text: str
    images: list[str] = field(default_factory=list)
    is_error: bool = False


def render_call_tool_result(result: Any) -> RenderedResult:
    """Map a CallToolResult (SDK model or plain wire dict) to text + images, blocks in order."""
    raw = _as_wire_dict(result)
    parts: list[str] = []
    images: list[str] = []
    for block in raw.get("content") or []:
        _render_block(block if isinstance(block, dict) else _as_wire_dict(block), parts, images)
    text = "\n".join(parts)
    structured = raw.get("structuredContent")
    if text == "" and "structuredContent" in raw and structured is not None:
        text = json.dumps(structured, indent=2, ensure_ascii=False)
    return RenderedResult(text=text, images=images, is_error=raw.get("isError") is True)


def _render_block(block: dict[str, Any], parts: list[str], images: list[str]) -> None:
    kind = block.get("type")
    if kind == "text":
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
    elif kind == "image":
        images.append(f"data:{block.get('mimeType')};base64,{block.get('data')}")
    elif kind == "audio":
        parts.append(f"[audio content: {block.get('mimeType')}]")
    elif kind == "resource_link":
        description = block.get("description")
        suffix = f" {description}" if isinstance(description, str) else ""
        parts.append(f"[resource: {block.get('uri')}]{suffix}")
    elif kind == "resource":
        raw_resource = block.get("resource")
        resource: dict[str, Any] = raw_resource if isinstance(raw_resource, dict) else {}
        if isinstance(resource.get("text"), str):
            parts.append(resource["text"])
        else:
            parts.append(f"[resource: {resource.get('uri', 'unknown')} (binary)]")
    else:
        parts.append(f"[unsupported content type: {kind}]")


def _as_wire_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, mode="json", exclude_none=True)
    return {}
