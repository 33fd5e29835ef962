"""Nothing fetches by itself: the allow-list pass over every HTML string a transcript shows.

Owns `safe_html` (rebuilds an HTML fragment from an allow-list of tags and attributes, so no
element or attribute that makes a browser load a URL survives), `image_html` (inline `data:`
raster images, a placeholder for anything else) and `placeholder_html` (the visible
"🖼 image from HOST — click to open" link that replaces a remote resource). The live widgets
(Markdown via `markdown_html`, tool images) and the saved `text/html` (`transcript_html`) share
these; the labextension has the same pass in `labextension/src/nofetch.ts`. Escaping of plain
strings stays with the callers. See docs/no-fetch.md.
"""

from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

# data: URLs that render inline: rasters, and SVGs without references of their own.
_RASTER_DATA = re.compile(r"^data:image/(?:png|jpeg|jpg|gif|webp);base64,[A-Za-z0-9+/=\s]*$", re.IGNORECASE)
_SVG_DATA = re.compile(r"^data:image/svg\+xml(?:;charset=[\w-]+)?(;base64)?,(.*)$", re.IGNORECASE | re.DOTALL)
_SVG_MAX_CHARS = 2_000_000
# In an SVG: an attribute that names anything but a fragment of the same document, a CSS url()
# or image-set() to anything but a fragment, an @import, or a CSS escape (which could spell one).
_SVG_REFERENCE = re.compile(
    r"""(?<![\w-])(?:href|src|srcset|poster|background|data|action)\s*=(?!\s*["']?\s*\#)"""
    r"""|url\((?!\s*["']?\s*\#)|image-set|@import|\\[0-9a-f]""",
    re.IGNORECASE,
)
_SAFE_HREF = re.compile(r"^(?:https?://|mailto:|#)", re.IGNORECASE)

_VOID = frozenset({"br", "hr", "img", "input", "col", "wbr"})
# Tags kept as they are (with only the attributes below); everything else is rebuilt away.
_ALLOWED_TAGS = frozenset(
    {
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "b", "i", "u", "s",
        "del", "ins", "mark", "small", "sub", "sup", "code", "pre", "kbd", "samp", "var",
        "blockquote", "q", "abbr", "dfn", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead",
        "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col", "a", "img", "span",
        "div", "details", "summary", "input", "figure", "figcaption", "wbr",
    }
)  # fmt: skip
# A start tag that ends open elements, as an HTML parser does: (the elements it ends, the
# elements it never looks past). So `<td>a<td>b` is two cells here as in the browser.
_SECTIONS = frozenset({"thead", "tbody", "tfoot"})
_IMPLIED_END: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"}) | _SECTIONS),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"}) | _SECTIONS),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table"}) | _SECTIONS),
    "thead": (_SECTIONS | {"tr", "td", "th"}, frozenset({"table"})),
    "tbody": (_SECTIONS | {"tr", "td", "th"}, frozenset({"table"})),
    "tfoot": (_SECTIONS | {"tr", "td", "th"}, frozenset({"table"})),
}
_GLOBAL_ATTRS = frozenset({"class", "title", "lang", "dir"})
_TAG_ATTRS: dict[str, frozenset[str]] = {
    "a": frozenset({"href"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "input": frozenset({"type", "checked", "disabled"}),
    "td": frozenset({"align", "colspan", "rowspan"}),
    "th": frozenset({"align", "colspan", "rowspan", "scope"}),
    "col": frozenset({"span"}),
    "ol": frozenset({"start", "type", "reversed"}),
    "li": frozenset({"value"}),
    "details": frozenset({"open"}),
    "div": frozenset({"data-tool-call-id"}),  # the transcript's tool cards (a label, never loaded)
}
# Elements whose content is never copied (embedded documents, media, code, raw text).
_OPAQUE = frozenset(
    {
        "script", "style", "template", "noscript", "iframe", "frame", "frameset", "object", "embed",
        "applet", "video", "audio", "picture", "svg", "math", "canvas", "head", "title", "textarea",
        "select", "xmp", "noembed", "noframes", "plaintext", "map",
    }
)  # fmt: skip
_URL_ATTRS = frozenset(
    {
        "src", "href", "xlink:href", "srcset", "poster", "background", "data", "action",
        "formaction", "longdesc", "lowsrc", "dynsrc", "ping", "manifest", "codebase", "archive",
        "icon", "profile", "cite", "imagesrcset", "content",
    }
)  # fmt: skip
_CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)|image-set\(\s*['"]([^'"]+)""", re.I)
_EMBEDDED_URL = re.compile(r"""(?:https?:)?//[^\s'"<>)]+""", re.IGNORECASE)
_ABSOLUTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)
# Style declarations kept on allowed elements: these properties, values without functions
# other than colour/var/calc ones (no url(), image-set(), expression()) and no escapes.
_STYLE_PROPS = frozenset(
    {
        "color", "text-align", "max-width", "font-weight", "font-style", "font-size", "font-family",
        "white-space", "word-break", "margin", "padding", "border", "border-left", "border-radius",
        "vertical-align",
    }
)  # fmt: skip
_STYLE_VALUE = re.compile(r"^(?:[#\w\s.,%'\"+\-/!)]|(?:var|rgba?|hsla?|calc)\()*$", re.IGNORECASE)
_MAX_PLACEHOLDERS = 64  # per string; more are counted in one closing note
# Inline, so the live widgets (no transcript CSS there) show the same dashed box.
PLACEHOLDER_STYLE = "border:1px dashed #8888;border-radius:4px;padding:0 4px;font-size:12px"

_KIND = {
    "img": "image", "image": "image", "picture": "image", "source": "media", "video": "video",
    "audio": "audio", "track": "media", "iframe": "page", "frame": "page", "object": "object",
    "embed": "object", "applet": "object", "link": "stylesheet", "style": "style resource",
    "svg": "SVG resource", "use": "SVG resource", "input": "image", "meta": "page",
    "script": "script",
}  # fmt: skip


def _svg_has_references(svg: str) -> bool:
    return bool(_SVG_REFERENCE.search(svg))


def is_inline_image(src: str) -> bool:
    """A `data:` PNG, JPEG, GIF or WebP, or an SVG that references nothing outside itself
    (e.g. a Mermaid diagram): shown inline, it loads nothing."""
    src = src.strip()
    if _RASTER_DATA.match(src):
        return True
    match = _SVG_DATA.match(src)
    if match is None or len(src) > _SVG_MAX_CHARS:
        return False
    try:
        body = match.group(2)
        text = base64.b64decode(body, validate=False).decode("utf-8") if match.group(1) else unquote(body)
    except ValueError:
        return False
    return not _svg_has_references(text)


def url_host(url: str) -> str:
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        host = None
    return host or "an unknown place"


def _label(url: str, kind: str) -> str:
    icon = "🖼" if "image" in kind else "🔗"
    return f"{icon} {kind} from {url_host(url)}"


def placeholder_html(url: str, kind: str = "image") -> str:
    """A visible stand-in for a remote resource; an http(s) URL opens in a new tab on click."""
    url = url.strip()
    box = f'class="pg-remote" style="{PLACEHOLDER_STYLE}"'
    if url.lower().startswith("data:"):  # e.g. an SVG data: URL (it may reference URLs itself)
        mime = html.escape(url[5:].split(",")[0].split(";")[0][:60] or "data")
        return f'<span {box} title="{mime}">🖼 {mime} not shown</span>'
    label = html.escape(_label(url, kind))
    if re.match(r"^https?://", url, re.IGNORECASE):
        href = html.escape(url, quote=True)
        return (
            f'<a {box} href="{href}" title="{href}" target="_blank" rel="noopener noreferrer nofollow">'
            f"{label} — click to open</a>"
        )
    return f'<span {box} title="{html.escape(url[:500], quote=True)}">{label} (not loaded)</span>'


def image_html(src: str) -> str:
    """An image of a transcript: inline when `is_inline_image`, else a placeholder."""
    if is_inline_image(src):
        return f'<img src="{html.escape(src.strip(), quote=True)}" alt="image" style="max-width:100%">'
    return placeholder_html(src)


def _attr_urls(name: str, value: str) -> list[str]:
    """The URLs an attribute would load (best effort; only for naming them in placeholders)."""
    value = value.strip()
    if name == "style":
        return [next(g for g in m.groups() if g) for m in _CSS_URL.finditer(value)]
    if name in ("srcset", "imagesrcset"):
        return [part.strip().split()[0] for part in value.split(",") if part.strip()]
    if name == "srcdoc":
        return _EMBEDDED_URL.findall(value)
    if name == "content":
        match = re.search(r"url\s*=\s*['\"]?([^'\"\s]+)", value, re.IGNORECASE)
        return [match.group(1)] if match else []
    if not value or value.startswith("#") or value.lower().startswith("data:"):
        return []
    if name in _URL_ATTRS or _ABSOLUTE.match(value):
        return [value]
    return []


def _safe_style(value: str) -> str:
    kept = []
    for declaration in value.split(";"):
        prop, _, val = declaration.partition(":")
        prop, val = prop.strip().lower(), val.strip()
        if prop in _STYLE_PROPS and val and "\\" not in val and _STYLE_VALUE.match(val):
            kept.append(f"{prop}:{val}")
    return ";".join(kept)


class _Rebuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.stack: list[str] = []  # allowed elements open in the output
        self.opaque: list[str] = []  # opaque elements being skipped (names, innermost last)
        self.urls: list[tuple[str, str]] = []  # (url, kind) collected inside an opaque element
        self.placeholders = 0
        self.hidden = 0

    # --- output -------------------------------------------------------------------------
    def _placeholders(self, found: list[tuple[str, str]]) -> None:
        seen: set[str] = set()
        inside_link = "a" in self.stack
        for url, kind in found:
            if url in seen:
                continue
            seen.add(url)
            if self.placeholders >= _MAX_PLACEHOLDERS:
                self.hidden += 1
                continue
            self.placeholders += 1
            if inside_link:  # never a link inside a link: the label alone
                label = f"{_label(url, kind)} (not loaded)"
                self.out.append(f'<span class="pg-remote">{html.escape(label)}</span>')
            else:
                self.out.append(placeholder_html(url, kind))

    def _found(self, tag: str, attrs: list[tuple[str, str | None]]) -> list[tuple[str, str]]:
        kind = _KIND.get(tag, "resource")
        found = []
        for name, value in attrs:
            for url in _attr_urls(name.lower(), value or ""):
                background = name.lower() in ("background", "style")
                found.append((url, "background image" if background else kind))
        return found

    # --- parser callbacks ---------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.lower()
        if self.opaque:
            self.urls.extend(self._found(tag, attrs))
            if tag in _OPAQUE and tag not in _VOID:
                self.opaque.append(tag)
            return
        if tag in _OPAQUE:
            self.opaque.append(tag)
            self.urls = self._found(tag, attrs)
            return
        if tag not in _ALLOWED_TAGS:
            self._placeholders(self._found(tag, attrs))
            return
        kept, dropped = self._filter(tag, attrs)
        if kept is None:  # an element that is itself a remote resource: only its placeholder
            self._placeholders(dropped)
            return
        attr_text = "".join(f' {n}="{html.escape(v, quote=True)}"' if v else f" {n}" for n, v in kept)
        self._end_implied(tag)
        self.out.append(f"<{tag}{attr_text}>")
        if tag not in _VOID:
            self.stack.append(tag)
        self._placeholders(dropped)

    def _end_implied(self, tag: str) -> None:
        """Close what `tag`'s start ends implicitly in HTML (see `_IMPLIED_END`)."""
        if tag not in _IMPLIED_END:
            return
        ends, boundary = _IMPLIED_END[tag]
        cut = None
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth] in boundary:
                break
            if self.stack[depth] in ends:
                cut = depth
        while cut is not None and len(self.stack) > cut:
            self.out.append(f"</{self.stack.pop()}>")

    def _filter(
        self, tag: str, attrs: list[tuple[str, str | None]]
    ) -> tuple[list[tuple[str, str]] | None, list[tuple[str, str]]]:
        allowed = _GLOBAL_ATTRS | _TAG_ATTRS.get(tag, frozenset())
        kept: list[tuple[str, str]] = []
        dropped: list[tuple[str, str]] = []
        values = {name.lower(): value or "" for name, value in attrs}
        if tag == "img" and not is_inline_image(values.get("src", "")):
            urls = self._found(tag, attrs) or [(values.get("src", ""), "image")]
            return None, [(u, k) for u, k in urls if u]
        if tag == "input" and values.get("type", "").lower() != "checkbox":
            return None, self._found(tag, attrs)
        for name, value in values.items():
            if name == "href":
                if tag == "a" and _SAFE_HREF.match(value.strip()):
                    kept.append((name, value.strip()))
                continue
            if name == "style":
                style = _safe_style(value)
                if style:
                    kept.append((name, style))
                dropped.extend(self._found(tag, [(name, value)]))
                continue
            if name in allowed:
                kept.append((name, value))
            else:
                dropped.extend(self._found(tag, [(name, value)]))
        if tag == "a" and any(n == "href" for n, _ in kept):
            kept += [("target", "_blank"), ("rel", "noopener noreferrer nofollow")]
        return kept, dropped

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag.lower() not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        tag = tag.lower()
        if self.opaque:
            if tag in self.opaque:
                while self.opaque and self.opaque.pop() != tag:
                    pass
                if not self.opaque:
                    self._placeholders(self.urls)
                    self.urls = []
            return
        if tag in self.stack:
            while self.stack:
                open_tag = self.stack.pop()
                self.out.append(f"</{open_tag}>")
                if open_tag == tag:
                    break

    def handle_data(self, data: str) -> None:
        if self.opaque:
            if self.opaque[-1] == "style" or "svg" in self.opaque:
                self.urls.extend((url, "style resource") for url in _attr_urls("style", data))
            return
        self.out.append(html.escape(data, quote=False))

    def close(self) -> None:
        super().close()
        if self.opaque:
            self.opaque = []
            self._placeholders(self.urls)
        while self.stack:
            self.out.append(f"</{self.stack.pop()}>")
        if self.hidden:
            self.out.append(
                f'<span class="pg-remote">… {self.hidden} more remote resources not loaded</span>'
            )


def safe_html(markup: str) -> str:
    """`markup` rebuilt from the allow-list: nothing in it loads a URL until the user clicks.

    Allowed tags keep only allowed attributes (`href` on links with http(s)/mailto/`#`, `src`
    on images only for `data:` rasters, `style` only with plain declarations); remote images,
    media, frames, objects, stylesheets, SVG and CSS `url()`s become placeholders naming the
    host; unknown elements are dropped, keeping their text (except opaque ones such as
    `<style>`, `<svg>`, `<iframe>`, whose content goes too). Comments and declarations go.
    """
    rebuilder = _Rebuilder()
    try:
        # html.parser (before Python 3.13) asserts on some malformed "<![" sections; in HTML
        # they are bogus comments at most, so they are shown as text.
        rebuilder.feed(markup.replace("<![", "&lt;!["))
        rebuilder.close()
    except AssertionError:  # any other parser failure: the markup as plain text
        return f"<pre>{html.escape(markup, quote=False)}</pre>"
    return "".join(rebuilder.out)
