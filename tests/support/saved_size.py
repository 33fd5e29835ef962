"""What a finished `%%penguin` cell adds to the saved .ipynb, against what its Task said.

`saved_output_bytes(data)`: the bytes the cell's display output adds to the file as nbformat
writes it (one display_data output of `data`, UTF-8). `transcript_bytes(bundle)`: what was said
— the user's prompt, the assistant's text and thinking, each tool call's arguments and output,
plus every image as saved (its base64 characters). Used by the saved-notebook size test and
its figures (docs/notebook-runtime.md "Saved size").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import nbformat


def saved_output_bytes(data: Mapping[str, Any]) -> int:
    """Bytes one display output of `data` adds to a saved notebook's cell."""
    cell = nbformat.v4.new_code_cell("%%penguin\nx")
    bare = nbformat.v4.new_notebook(cells=[cell])
    empty = len(nbformat.writes(bare).encode())
    cell.outputs = [nbformat.v4.new_output("display_data", data=dict(data))]
    return len(nbformat.writes(bare).encode()) - empty


def transcript_bytes(bundle: Mapping[str, Any]) -> tuple[int, int]:
    """(text bytes, image bytes) of what the Task said, from its JSON bundle."""
    text = images = 0
    for message in bundle.get("messages") or []:
        payload = message.get("payload") or {}
        kind = payload.get("type")
        if kind == "text":
            text += len(str(payload.get("text", "")).encode())
        elif kind == "thinking":
            text += len(str(payload.get("thinking", "")).encode())
        elif kind == "tool_call":
            text += len(str(payload.get("arguments", "")).encode())
        elif kind == "tool_call_output":
            text += len(str(payload.get("output", "")).encode())
            images += sum(len(str(i).encode()) for i in payload.get("images") or [])
        elif kind == "inline_data":
            images += len(str(payload.get("data", "")).encode())
    return text, images
