"""What the model gets from one `display(obj)` made by `run_python` code.

Owns turning a display mimebundle into text (text/markdown if present, else text/plain, else
text/html as text) and an image (image/png or image/jpeg as a data URL), and the per-call
bounds on displayed images (count and size). Routing the bundle here is output_router's job;
putting the text and images on the tool output is run_python's.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .python_runner import html_to_text

MAX_DISPLAY_IMAGES = 8
MAX_IMAGE_BYTES = 4_000_000  # of base64 text, per image
_IMAGE_TYPES = ("image/png", "image/jpeg")
# `<IPython.core.display.Image object>`, `<Foo at 0x7f…>`: says nothing the model can use
_EMPTY_REPR = re.compile(r"^<[\w.]+ object>$|^<.* at 0x[0-9a-fA-F]+>$")


def _as_text(value: object) -> str | None:
    if isinstance(value, list):  # nbformat-style multi-line strings
        value = "".join(str(v) for v in value)
    return value if isinstance(value, str) else None


def bundle_text(data: dict[str, object]) -> str | None:
    """The text the model reads for a display bundle, or None when it has none worth sending."""
    markdown = _as_text(data.get("text/markdown"))
    if markdown and markdown.strip():
        return markdown
    plain = _as_text(data.get("text/plain"))
    if plain is not None and not _EMPTY_REPR.match(plain.strip()) and plain.strip():
        return plain
    markup = _as_text(data.get("text/html"))
    if markup:
        text = html_to_text(markup)
        if text:
            return text
    return plain if plain and not any(t in data for t in _IMAGE_TYPES) else None


def bundle_image(data: dict[str, object]) -> tuple[str | None, str | None]:
    """(data URL, None) for a PNG/JPEG in the bundle, or (None, note) when it is too big."""
    for mime in _IMAGE_TYPES:
        raw = data.get(mime)
        if isinstance(raw, bytes | bytearray):
            raw = base64.b64encode(bytes(raw)).decode("ascii")
        if not isinstance(raw, str) or not raw:
            continue
        encoded = "".join(raw.split())
        if len(encoded) > MAX_IMAGE_BYTES:
            return None, f"[displayed {mime} of {len(encoded) * 3 // 4:,} bytes not sent: too large]"
        return f"data:{mime};base64,{encoded}", None
    return None, None


@dataclass
class DisplayCapture:
    """One run_python call's displays: text goes to `emit` (the stdout stream, so it keeps its
    place among prints), images are appended to `images` (the call's image list, in order)."""

    emit: Callable[[str], None]
    images: list[str] = field(default_factory=list)
    sent_images: int = 0

    def __call__(self, data: dict[str, object]) -> None:
        text = bundle_text(data)
        image, note = bundle_image(data)
        if image is not None:
            if self.sent_images < MAX_DISPLAY_IMAGES:
                self.images.append(image)
                self.sent_images += 1
            else:
                note = f"[displayed image not sent: more than {MAX_DISPLAY_IMAGES} in one call]"
        lines = [part.rstrip("\n") for part in (text, note) if part]
        if lines:
            self.emit("\n".join(lines) + "\n")
