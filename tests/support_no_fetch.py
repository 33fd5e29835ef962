"""Test support for "nothing fetches by itself": a counting HTTP server and a hostile transcript.

Owns `CountingServer` (a real HTTP server on a loopback address other than jupyter's, counting
every request by path) and `hostile_messages` (a Task whose model text and tool output carry
every remote-resource vector the renderers must neutralize, plus `data:` PNGs that must still
render). Used by tests/test_no_fetch_html.py and tests/test_browser_no_fetch.py.
"""

from __future__ import annotations

import base64
import contextlib
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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
    """A real HTTP server (threads) on `host`; `hits` counts requests by path (query dropped)."""

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
    from penguin_jupyter.notebook.transcript_bundle import make_bundle

    return make_bundle(hostile_messages(base), session_info=None, status="completed", usage=None)
