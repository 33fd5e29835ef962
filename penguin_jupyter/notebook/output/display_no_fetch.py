"""Nothing a `run_python` call displays fetches by itself: the rewrite of its display bundles.

Owns `no_fetch_bundle`, which turns one mimebundle published by code the model runs with
`run_python` into one the browser can render without loading anything: an allow-list of MIME
types kept as they are (plain text, LaTeX, JSON, base64 rasters), `text/html` rebuilt by
`safe_html`, `text/markdown` rendered by `markdown_html`, an SVG kept only when it references
nothing outside itself, and every other type (JavaScript, widget views, plotly/bokeh/vega/
geojson payloads...) dropped with a visible one-line note. Routing the bundle here is
output_router's job; what the model receives (displayed.py) is made from the original bundle.
See docs/no-fetch.md.
"""

from __future__ import annotations

import base64
import html
import re

from ..transcript.markdown_html import markdown_html
from ..transcript.no_fetch_html import PLACEHOLDER_STYLE, is_inline_image, safe_html

# Rendered by JupyterLab without loading anything: text, a JSON tree, a base64 image in a data:
# URL, and LaTeX (typeset by the same MathJax as any `$…$` in HTML text; JupyterLab 4's loads
# nothing for `\style{…url()…}`, `\require{URL}` or `\unicode[font]`, and `\href` is a link).
KEPT_AS_IS = frozenset(
    {
        "text/plain",
        "text/latex",
        "application/json",
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/bmp",
    }
)
_RASTERS = frozenset(mime for mime in KEPT_AS_IS if mime.startswith("image/"))
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
HTML = "text/html"
MARKDOWN = "text/markdown"
SVG = "image/svg+xml"
PLAIN = "text/plain"
_LABELS = {"application/vnd.jupyter.widget-view+json": "widget"}
# What safe_html removes that a user would miss in silence: active or embedded content.
_ACTIVE_HTML = re.compile(r"<\s*(?:script|iframe|frame|object|embed|applet)\b", re.IGNORECASE)
# What is_inline_image does not look for because an <img> never runs it, but an SVG inlined
# into a page by some frontend would: scripts, event handlers, foreign HTML.
_SVG_ACTIVE = re.compile(r"<\s*(?:script|foreignObject)\b|\bon[a-z]+\s*=", re.IGNORECASE)
# `<IPython.core.display.Javascript object>`: a repr that says nothing, replaced by the note.
_EMPTY_REPR = re.compile(r"^<[\w.]+ object>$|^<.* at 0x[0-9a-fA-F]+>$")


def _is_base64(value: object) -> bool:
    """A raster as a frontend puts it into a `data:` URL: base64 text (or bytes, which the kernel
    encodes to base64 itself)."""
    return isinstance(value, bytes | bytearray) or (isinstance(value, str) and bool(_BASE64.match(value)))


def _text(value: object) -> str | None:
    if isinstance(value, list):  # nbformat-style multi-line strings
        value = "".join(str(v) for v in value)
    return value if isinstance(value, str) else None


def svg_is_self_contained(svg: str) -> bool:
    """True when an SVG document loads nothing and runs nothing wherever it is shown."""
    if _SVG_ACTIVE.search(svg):
        return False
    return is_inline_image(
        "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
    )


def not_shown_note(parts: list[str]) -> str:
    """The one line that says what of a run_python display is not shown live, and why."""
    return (
        f"penguin: not shown live ({'; '.join(parts)}): it could load from the network. "
        "Run the code in a cell of your own to see it."
    )


def _note_html(note: str) -> str:
    return f'<div class="pg-remote" style="{PLACEHOLDER_STYLE}">{html.escape(note, quote=False)}</div>'


def _rich_parts(data: dict[str, object], out: dict[str, object], not_shown: list[str]) -> None:
    """The HTML, Markdown and SVG of `data`, made safe into `out`; what goes, named in `not_shown`."""
    if HTML in data:
        markup = _text(data[HTML])
        if markup is None:
            not_shown.append(HTML)
        else:
            out[HTML] = safe_html(markup)
            if _ACTIVE_HTML.search(markup):
                not_shown.append("scripts and embedded pages of its HTML")
    if MARKDOWN in data:
        markdown = _text(data[MARKDOWN])
        if markdown is None:
            not_shown.append(MARKDOWN)
        else:
            if HTML not in out:  # a frontend prefers the HTML of a bundle
                out[HTML] = markdown_html(markdown)
            if _text(data.get(PLAIN)) is None:
                out[PLAIN] = markdown
    if SVG in data:
        svg = _text(data[SVG])
        if svg is not None and svg_is_self_contained(svg):
            out[SVG] = data[SVG]
        else:
            not_shown.append("an SVG that references outside resources")
            if svg is not None and HTML not in out:
                out[HTML] = safe_html(svg)  # the placeholders naming what it references


def _add_note(out: dict[str, object], note: str) -> None:
    plain = _text(out.get(PLAIN))
    if plain is None or not plain.strip() or _EMPTY_REPR.match(plain.strip()):
        out[PLAIN] = note
    else:
        out[PLAIN] = plain.rstrip("\n") + "\n" + note
    if HTML in out:
        out[HTML] = (_text(out[HTML]) or "") + _note_html(note)


def no_fetch_bundle(
    data: dict[str, object], metadata: dict[str, object] | None = None
) -> tuple[dict[str, object], dict[str, object] | None]:
    """(data, metadata) of a display made fetch-free; `metadata` loses the dropped types' entries.

    A bundle of kept types only comes back as it was (rasters must be base64). Anything dropped
    is named in one note, added to the `text/plain` and (when there is one) the `text/html`
    kept, so the frontend shows it whichever of the two it picks.
    """
    out: dict[str, object] = {}
    not_shown: list[str] = []
    _rich_parts(data, out, not_shown)
    for mime, value in data.items():
        if mime in _RASTERS and not _is_base64(value):
            not_shown.append(f"{mime} that is not base64")
        elif mime in KEPT_AS_IS:
            out[mime] = value
        elif mime not in (HTML, MARKDOWN, SVG):
            not_shown.append(_LABELS.get(mime, str(mime)))
    if not_shown:
        _add_note(out, not_shown_note(not_shown))
    if metadata is None:
        return out, None
    dropped = set(data) - set(out)
    return out, {key: value for key, value in metadata.items() if key not in dropped}
