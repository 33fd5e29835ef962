"""A tool output's image, saved once: in a transcript's `text/html`, named by its JSON bundle.

Owns the reference form `penguin:html-image:N` (the N-th inline raster of the same output's
HTML), making references (`image_refs`, when a transcript is displayed) and putting the images
back (`with_saved_images`, for every Python reader of a saved bundle). A bundle from a saved
notebook travels as a `SavedBundle` (the bundle as saved, references unresolved, and the images
of its HTML) so that replay can measure what putting them back would cost (`image_load`: the
references counted and their images' lengths summed, nothing built) before it does it. The
labextension's renderer does the same in TypeScript (render.ts). Light on purpose — the
saved-notebook index imports it from `%load_ext` — so no message models here
(docs/notebook-runtime.md "Saved size").
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

# A tool output's image is saved once, in the `text/html` (what GitHub and nbconvert show); the
# JSON names it `penguin:html-image:N`, the N-th inline raster of that HTML (docs/notebook-runtime.md
# "Saved size"). `with_saved_images` puts it back; the labextension does the same (render.ts).
SAVED_IMAGE_REF = "penguin:html-image:"
ImageOf = Callable[[object], object]  # an image (or its reference) -> what replaces it (None: left out)
_HTML_IMAGE = re.compile(r'<img src="(data:image/(?:png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=]+)"', re.IGNORECASE)


def html_images(markup: object) -> list[str]:
    """The inline rasters of a transcript's `text/html` (a string or nbformat's list of lines),
    in document order; anything else in it is ignored."""
    if isinstance(markup, list):
        markup = "".join(part for part in markup if isinstance(part, str))
    return [html.unescape(src) for src in _HTML_IMAGE.findall(markup)] if isinstance(markup, str) else []


def _map_images(bundle: Mapping[str, object], image: ImageOf) -> dict[str, object]:
    """`bundle` with each tool output's image `i` replaced by `image(i)` (None: left out)."""
    messages = []
    for message in _messages(bundle):
        payload = message.get("payload") if isinstance(message, Mapping) else None
        if isinstance(message, Mapping) and isinstance(payload, Mapping) and payload.get("type") == "tool_call_output":
            images = payload.get("images")
            if isinstance(images, list) and images:
                kept = [new for new in map(image, images) if new is not None]
                message = {**message, "payload": {**payload, "images": kept}}
        messages.append(message)
    return {**bundle, "messages": messages}


def image_refs(bundle: Mapping[str, object], markup: str) -> dict[str, object]:
    """The JSON as saved: each tool output image that `markup` shows inline named by its index."""
    index: dict[str, int] = {}
    for number, src in enumerate(html_images(markup)):
        index.setdefault(src, number)
    return _map_images(bundle, lambda src: f"{SAVED_IMAGE_REF}{index[src]}" if src in index else src)


@dataclass(frozen=True)
class SavedBundle:
    """A transcript bundle as a notebook saved it (its image references not put back) and the
    inline rasters of the same output's `text/html`, which the references name."""

    bundle: object
    images: tuple[str, ...] = ()


def _image_of(images: Sequence[str]) -> ImageOf:
    def image(value: object) -> object:
        if not isinstance(value, str) or not value.startswith(SAVED_IMAGE_REF):
            return value
        number = value[len(SAVED_IMAGE_REF) :]
        return images[int(number)] if number.isdigit() and int(number) < len(images) else None

    return image


def _messages(bundle: Mapping[str, object]) -> list[object]:
    messages = bundle.get("messages")
    return messages if isinstance(messages, list) else []


def _tool_output_images(bundle: Mapping[str, object]) -> Iterator[object]:
    for message in _messages(bundle):
        payload = message.get("payload") if isinstance(message, Mapping) else None
        if isinstance(payload, Mapping) and payload.get("type") == "tool_call_output":
            images = payload.get("images")
            if isinstance(images, list):
                yield from images


def image_load(bundle: object, images: Sequence[str]) -> tuple[int, int]:
    """What putting `images` back into `bundle` would add, measured without doing it: (the
    number of references, the characters the bundle's JSON would grow by). Every reference
    counts its image's length: an image named 2,000 times is shown 2,000 times."""
    if not isinstance(bundle, Mapping) or not isinstance(bundle.get("messages"), list):
        return 0, 0
    image = _image_of(images)
    count = grown = 0
    for value in _tool_output_images(bundle):
        if isinstance(value, str) and value.startswith(SAVED_IMAGE_REF):
            count += 1
            found = image(value)
            grown += (len(found) if isinstance(found, str) else 0) - len(value)
    return count, grown


@overload
def with_images(bundle: Mapping[str, object], images: Sequence[str]) -> Mapping[str, object]: ...
@overload
def with_images(bundle: object, images: Sequence[str]) -> object: ...
def with_images(bundle: object, images: Sequence[str]) -> object:
    """`bundle` with its `penguin:html-image:N` references replaced by `images[N]`; a reference
    without its image is left out. Anything but a bundle with a message list comes back as it is."""
    if not isinstance(bundle, Mapping) or not isinstance(bundle.get("messages"), list):
        return bundle
    return _map_images(bundle, _image_of(images))


@overload
def with_saved_images(bundle: Mapping[str, object], markup: object) -> Mapping[str, object]: ...
@overload
def with_saved_images(bundle: object, markup: object) -> object: ...
def with_saved_images(bundle: object, markup: object) -> object:
    """A saved bundle with its `penguin:html-image:N` references replaced by the rasters of its
    `text/html` `markup` (data, read by `html_images`); a reference without its image is left out.
    Anything but a bundle with a message list comes back as it is. For a bundle of this kernel's
    own cells; a stranger's goes through replay's checks first (`SavedBundle`, `image_load`)."""
    if not isinstance(bundle, Mapping) or not isinstance(bundle.get("messages"), list):
        return bundle
    return with_images(bundle, html_images(markup))
