"""Test support for "nothing fetches by itself": a counting HTTP server and a hostile transcript.

Owns `audit` (an independent parser listing what a browser would load from HTML without a
click), `raw_vectors` (raw HTML for each vector), `CountingServer` (a real HTTP server on a loopback address other than jupyter's, counting
every request by path) and `hostile_messages` (a Task whose model text and tool output carry
every remote-resource vector the renderers must neutralize, plus `data:` PNGs that must still
render). Used by tests/notebook/test_no_fetch_html.py and tests/browser/test_browser_no_fetch.py.
"""

from __future__ import annotations

import base64
import contextlib
import random
import re
import threading
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote

import pytest

from penguin_jupyter.omni import (
    OmniMessage,
    assistant_text,
    image_url,
    tool_call,
    tool_call_output,
    user_text,
)

# A 4×4 red PNG: what plots look like to the renderers (data: URL, base64 PNG).
PNG_4X4 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg=="
)
DATA_PNG = f"data:image/png;base64,{PNG_4X4}"
# An SVG that references nothing outside itself (like a Mermaid diagram): it renders inline.
CLEAN_SVG = "data:image/svg+xml;base64," + base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="8" height="8">'
    b'<defs><linearGradient id="g"/></defs><rect width="8" height="8" style="fill:url(#g)"/>'
    b'<use xlink:href="#g"/></svg>'
).decode("ascii")

# Every vector, by the path it would request (so a count names the one that leaked).
VECTOR_PATHS = (
    "/md-image",
    "/ref-image",
    "/raw-img",
    "/raw-img-in-list",
    "/svg-href",
    "/svg-xlink",
    "/css-url",
    "/css-import",
    "/picture-srcset",
    "/video-poster",
    "/iframe",
    "/object",
    "/embed",
    "/audio",
    "/link-css",
    "/table-background",
    "/input-image",
    "/tool-image",
    "/image-block",
    "/data-svg-ref",
)


class CountingServer:
    """A real HTTP server (threads) on `host`; `hits` counts requests (GET and POST) by path
    (query dropped)."""

    def __init__(self, host: str = "127.0.0.2") -> None:
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with counter._lock:
                    counter.hits[self.path.split("?", 1)[0]] += 1
                body = base64.b64decode(PNG_4X4)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # a model request sent to the wrong host counts too
                with counter._lock:
                    counter.hits[self.path.split("?", 1)[0]] += 1
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((host, 0), Handler)
        self.host = host
        self.port = self._server.server_address[1]
        self.base = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> CountingServer:
        self._thread.start()
        return self

    def total(self) -> int:
        with self._lock:
            return sum(self.hits.values())

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def hostile_markdown(base: str) -> str:
    """Model text holding every remote-resource vector, each pointing at `base` + its path."""
    svg_data = "data:image/svg+xml;base64," + base64.b64encode(
        f'<svg xmlns="http://www.w3.org/2000/svg"><image href="{base}/data-svg-ref"/></svg>'.encode()
    ).decode("ascii")
    return "\n".join(
        [
            "Here is what I found.",
            "",
            f"![chart]({base}/md-image?d=secret-data)",
            "",
            "![reference][r]",
            "",
            f'<img src="{base}/raw-img?d=1">',
            "",
            "- a list item",
            "",
            f'    <img src="{base}/raw-img-in-list?d=1">',
            "",
            f'    <svg><image href="{base}/svg-href"/><use xlink:href="{base}/svg-xlink#a"/></svg>',
            "",
            f'    <div style="background-image: url({base}/css-url)">styled</div>',
            "",
            f'    <style>@import "{base}/css-import";</style>',
            "",
            f'    <picture><source srcset="{base}/picture-srcset 1x"></picture>',
            f'    <video poster="{base}/video-poster"></video><audio src="{base}/audio"></audio>',
            f'    <iframe src="{base}/iframe"></iframe><object data="{base}/object"></object>',
            f'    <embed src="{base}/embed"><link rel="stylesheet" href="{base}/link-css">',
            f'    <table background="{base}/table-background"><tr><td>cell</td></tr></table>',
            f'    <input type="image" src="{base}/input-image">',
            "",
            f"![plot]({DATA_PNG})",
            "",
            f"![svg]({svg_data})",
            "",
            f"![clean svg]({CLEAN_SVG})",
            "",
            f"[r]: {base}/ref-image",
        ]
    )


def hostile_messages(base: str) -> list[OmniMessage]:
    """A Task: the prompt, a tool whose output has a remote and a data: image, the hostile text."""
    return [
        user_text("summarize the report"),
        tool_call("run_python", {"code": "plot()"}, "call-1"),
        tool_call_output("plotted", "call-1", images=[DATA_PNG, f"{base}/tool-image"]),
        image_url(f"{base}/image-block"),
        assistant_text(hostile_markdown(base)),
    ]


def hostile_bundle(base: str) -> dict[str, Any]:
    from penguin_jupyter.notebook.transcript.transcript_bundle import make_bundle

    return make_bundle(hostile_messages(base), session_info=None, status="completed", usage=None)


def raw_vectors(base: str) -> dict[str, str]:
    """Raw HTML for every vector, by name, each pointing at `base`."""
    return {
        "img": f'<img src="{base}/a.png?d=secret">',
        "img unquoted": f"<IMG SRC={base}/a.png>",
        "img srcset": f'<img src="data:image/png;base64,AAAA" srcset="{base}/a.png 2x">',
        "picture": f'<picture><source srcset="{base}/a.png 1x, {base}/b.png 2x"><img src="{base}/c.png"></picture>',
        "video poster": f'<video poster="{base}/p.png" src="{base}/v.mp4"></video>',
        "audio": f'<audio src="{base}/a.mp3"></audio>',
        "svg href": f'<svg><image href="{base}/s.png"/></svg>',
        "svg xlink:href": f'<svg><use xlink:href="{base}/s.svg#a"/></svg>',
        "svg style": f"<svg><style>rect {{fill: url({base}/f.svg#g)}}</style></svg>",
        "css url in style attr": f"<div style=\"background-image: url('{base}/bg.png')\">x</div>",
        "css image-set": f"<span style=\"background: image-set('{base}/bg.png' 1x)\">x</span>",
        "css @import in style element": f'<style>@import "{base}/x.css";</style>',
        "css url in style element": f"<style>p {{background: url({base}/p.png)}}</style>",
        "link stylesheet": f'<link rel="stylesheet" href="{base}/x.css">',
        "link prefetch": f'<link rel="prefetch" href="{base}/x">',
        "iframe": f'<iframe src="{base}/page"></iframe>',
        "iframe srcdoc": f"<iframe srcdoc=\"<img src='{base}/x.png'>\"></iframe>",
        "object": f'<object data="{base}/o.swf"></object>',
        "embed": f'<embed src="{base}/e.swf">',
        "table background": f'<table background="{base}/t.png"><tr><td background="{base}/u.png">c</td></tr></table>',
        "body background": f'<body background="{base}/b.png">x</body>',
        "input image": f'<input type="image" src="{base}/i.png">',
        "meta refresh": f'<meta http-equiv="refresh" content="0; url={base}/r">',
        "base": f'<base href="{base}/">',
        "script": f'<script src="{base}/s.js"></script>',
        "math": f'<math><mi href="{base}/m">x</mi></math>',
        "anchor ping": f'<a href="{base}/ok" ping="{base}/ping">link</a>',
        "unknown element": f'<x-widget src="{base}/x.png">text</x-widget>',
    }


def _inline_image(src: str) -> bool:
    """The audit's own rule (independent of the code under test): a base64 raster, or an SVG
    that, without its xmlns declarations, names no URL and no resource but `#fragments`."""
    if re.match(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$", src):
        return True
    match = re.match(r"^data:image/svg\+xml(;base64)?,(.*)$", src, re.DOTALL)
    if match is None:
        return False
    svg = base64.b64decode(match.group(2)).decode() if match.group(1) else unquote(match.group(2))
    svg = re.sub(r"""xmlns(:\w+)?\s*=\s*["'][^"']*["']""", "", svg)
    return not re.search(r"""://|href\s*=\s*["']?[^#"'\s]|url\(\s*["']?[^#"'\s]|@import|\\""", svg, re.I)


class _Audit(HTMLParser):
    """Collects what a browser would load from an HTML string without a click."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loads: list[str] = []
        self.inline_images: list[str] = []
        self.links: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        for name, value in attrs:
            value = value or ""
            if tag == "a" and name == "href":
                self.links.append(value)
            elif tag == "img" and name == "src" and _inline_image(value):
                self.inline_images.append(value)
            elif name == "style" and re.search(r"url\(|@import|image-set", value, re.I):
                self.loads.append(f"<{tag} style={value}>")
            elif name in ("title", "alt", "class"):
                continue
            elif re.search(r"(https?:)?//|^/|\.(png|css|jpg)\b", value, re.I) or (
                name in ("src", "srcset", "poster", "background", "data", "href", "xlink:href")
            ):
                self.loads.append(f"<{tag} {name}={value}>")
        if tag in ("iframe", "object", "embed", "link", "video", "audio", "svg", "picture", "base", "meta"):
            self.loads.append(f"<{tag}>")

    def handle_data(self, data: str) -> None:
        if self._in_style and re.search(r"url\(|@import", data, re.I):
            self.loads.append(f"<style>{data[:80]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False


def audit(markup: str) -> _Audit:
    checker = _Audit()
    checker.feed(markup)
    checker.close()
    return checker


def svg_with_references(base: str) -> list[str]:
    """SVG documents that name something outside themselves (not shown as images)."""
    return [
        f'<svg><image href="{base}/x"/></svg>',
        f'<svg><use xlink:href="{base}/x#a"/></svg>',
        "<svg><image href=x.png /></svg>",
        '<svg><image HREF = "&#104;ttp://h"/></svg>',
        '<svg><style>@import "x.css";</style></svg>',
        f'<svg><rect style="fill:url( {base}/x)"/></svg>',
        f'<svg><rect style="fill:u\\72l({base}/x)"/></svg>',
        f"<svg><rect style=\"fill:image-set('{base}/x' 1x)\"/></svg>",
    ]


def svg_data_urls(svg: str) -> list[str]:
    """`svg` as a base64 and as a percent-encoded data: URL."""
    return [
        "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode(),
        "data:image/svg+xml," + quote(svg),
    ]


def spliced_vectors(base: str, count: int, seed: int = 16) -> list[str]:
    """Malformed markup: pieces of every vector cut and spliced at random (fixed seed)."""
    rng = random.Random(seed)
    pieces = [*raw_vectors(base).values(), "<", ">", '"', "'", "</", "<!--", "-->", "<![CDATA[", "&#", "="]
    return [
        "".join(rng.choice(pieces)[: rng.randint(0, 60)] for _ in range(rng.randint(1, 8)))
        for _ in range(count)
    ]


@pytest.fixture
def counting() -> Iterator[CountingServer]:
    """A started CountingServer on 127.0.0.2 (cross-origin to jupyter on 127.0.0.1), stopped after
    the test. Test modules get it with `pytest_plugins = [..., "tests.support.no_fetch"]`."""
    server = CountingServer("127.0.0.2").start()
    try:
        yield server
    finally:
        server.stop()
