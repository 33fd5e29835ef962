"""Image folding for text-only models (docs/architecture.md "The session layer", docs/engine.md "Steering").

Owns turning a prompt's images into `[attached image: <path>]` lines: data URLs are saved as
`<scratchpad>/upload-<8hex>.<ext>`, http(s) URLs are referenced as they are, anything
unreadable becomes `[an attached image could not be saved and was dropped]`. The lines go
after the last user text (blank-line separated) or form a lines-only user text. The session
uses it for prompts and hands it to the engine for steering.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from pathlib import Path
from typing import Any

from .omni import OmniMessage, markers, user_text
from .private_files import write_private_bytes

DROPPED_IMAGE_LINE = "[an attached image could not be saved and was dropped]"
_DATA_URL_RE = re.compile(r"^data:(?P<mime>[^;,]*)(?P<params>(;[^;,]*)*),(?P<data>.*)$", re.DOTALL)
_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/jpg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
}


def _is_image(msg: OmniMessage) -> bool:
    payload: Any = msg.payload
    if payload.type == "image_url":
        return True
    return payload.type == "inline_data" and payload.role == "user" and payload.mime_type.startswith("image/")


def _save(scratchpad: Path, mime: str, data: bytes) -> str:
    path = scratchpad / f"upload-{secrets.token_hex(4)}.{_EXTENSIONS.get(mime.lower(), 'bin')}"
    write_private_bytes(path, data)
    return str(path)


def _image_line(msg: OmniMessage, scratchpad: Path) -> str:
    payload: Any = msg.payload
    try:
        if payload.type == "inline_data":
            return markers.attached_image_line(
                _save(scratchpad, payload.mime_type, base64.b64decode(payload.data))
            )
        url: str = payload.image_url
        if url.startswith(("http://", "https://")):
            return markers.attached_image_line(url)
        match = _DATA_URL_RE.match(url)
        if match is None or ";base64" not in match.group("params"):
            return DROPPED_IMAGE_LINE
        data = base64.b64decode(match.group("data"), validate=True)
        return markers.attached_image_line(_save(scratchpad, match.group("mime"), data))
    except (OSError, binascii.Error, ValueError):
        return DROPPED_IMAGE_LINE


def fold_images(messages: list[OmniMessage], scratchpad: Path) -> list[OmniMessage]:
    """`messages` with every image replaced by a path line (unchanged when there is none)."""
    if not any(_is_image(m) for m in messages):
        return list(messages)
    lines = [_image_line(m, scratchpad) for m in messages if _is_image(m)]
    kept = [m for m in messages if not _is_image(m)]
    block = "\n".join(lines)
    for index in range(len(kept) - 1, -1, -1):
        payload: Any = kept[index].payload
        if payload.type == "text" and payload.role == "user":
            kept[index] = kept[index].model_copy(
                update={"payload": payload.model_copy(update={"text": f"{payload.text}\n\n{block}"})}
            )
            return kept
    return [*kept, user_text(block)]
