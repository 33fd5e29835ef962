"""The image loader shared by read_image and describe_image (docs/tools.md "read_image and describe_image"): an
http(s) URL (fetched, cancellable) or a path, 5 MiB cap, png/jpeg/gif/webp by content-type,
magic bytes or extension."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass

import httpx

from ...interfaces import AbortSignal, unless_aborted

IMAGE_SIZE_LIMIT = 5 * 1024 * 1024
SUPPORTED_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_EXTENSION_MIMES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".ico": "image/x-icon",
    ".heic": "image/heic",
    ".avif": "image/avif",
}


class ImageLoadError(Exception):
    """A model-facing failure text."""


class ImageLoadAborted(Exception):
    pass


@dataclass(frozen=True)
class LoadedImage:
    mime: str
    data: bytes

    @property
    def size_text(self) -> str:
        return format_size(len(self.data))

    @property
    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} kB"
    return f"{size / (1024 * 1024):.1f} MB"


def sniff_mime(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(b"BM"):
        return "image/bmp"
    if data.startswith((b"II*\x00", b"MM\x00*")):
        return "image/tiff"
    return None


def _extension_mime(path: str) -> str | None:
    return _EXTENSION_MIMES.get(os.path.splitext(path.split("?", 1)[0].split("#", 1)[0])[1].lower())


def _too_large(size: int) -> ImageLoadError:
    return ImageLoadError(f"Image too large: {format_size(size)} exceeds the 5.0 MB limit.")


def _finish(data: bytes, source: str, mime: str | None) -> LoadedImage:
    if not data:
        raise ImageLoadError(f'Image "{source}" is empty.')
    if len(data) > IMAGE_SIZE_LIMIT:
        raise _too_large(len(data))
    if mime not in SUPPORTED_MIMES:
        if mime:
            raise ImageLoadError(
                f'Unsupported image type "{mime}": only png, jpeg, gif and webp are supported.'
            )
        raise ImageLoadError("Unsupported image type: only png, jpeg, gif and webp are supported.")
    return LoadedImage(mime, data)


async def _download(source: str) -> tuple[bytes, str | None]:
    try:
        async with (
            httpx.AsyncClient(follow_redirects=True, timeout=30.0) as client,
            client.stream("GET", source) as response,
        ):
            if response.status_code >= 400:
                raise ImageLoadError(f'Failed to download image "{source}": HTTP {response.status_code}')
            content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower() or None
            chunks = bytearray()
            async for chunk in response.aiter_bytes():
                chunks += chunk
                if len(chunks) > IMAGE_SIZE_LIMIT:
                    raise _too_large(len(chunks))
            return bytes(chunks), content_type
    except httpx.HTTPError as exc:
        raise ImageLoadError(f'Failed to download image "{source}": {exc or type(exc).__name__}') from exc


async def load_image(source: str, path: str | None, signal: AbortSignal | None) -> LoadedImage:
    """The image `source` names: downloaded when it is a URL (`path` None), else read from
    `path`, the file the call's effect resolved it to."""
    if path is None:
        finished, downloaded = await unless_aborted(_download(source), signal)
        if not finished or downloaded is None:
            raise ImageLoadAborted()
        data, content_type = downloaded
        mime = (
            content_type if content_type in SUPPORTED_MIMES else (sniff_mime(data) or _extension_mime(source))
        )
        return _finish(data, source, mime)
    if not os.path.isfile(path) and os.path.exists(path):
        raise ImageLoadError(f'Failed to read image "{source}": path is not a file.')
    try:
        size = os.path.getsize(path)
        if size > IMAGE_SIZE_LIMIT:
            raise _too_large(size)
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ImageLoadError(f'Failed to read image "{source}": {exc.strerror or exc}') from exc
    return _finish(data, source, sniff_mime(data) or _extension_mime(path))
