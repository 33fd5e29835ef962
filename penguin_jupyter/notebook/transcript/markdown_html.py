"""Markdown → safe HTML, the one renderer for model text in live widgets and static transcripts.

Owns the markdown-it configuration (CommonMark + tables; raw HTML escaped) and the dollar
isolation that keeps JupyterLab's MathJax from typesetting prices as math. Every rendering
passes `no_fetch_html.safe_html`, so a remote image becomes a click-to-open placeholder and
nothing in model text makes the browser load anything.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from .no_fetch_html import safe_html

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
_TEXT_BETWEEN_TAGS = re.compile(r"(^|>)([^<]+)")


def isolate_dollars(markup: str) -> str:
    """Wrap each `$` of the text (never inside a tag) in its own span.

    JupyterLab typesets widget and text/html output with MathJax, which would turn
    "$3,512 … $3,169" into math; MathJax never pairs delimiters across element boundaries,
    so isolated dollars stay literal.
    """
    return _TEXT_BETWEEN_TAGS.sub(lambda m: m.group(1) + m.group(2).replace("$", "<span>$</span>"), markup)


def markdown_html(text: str) -> str:
    return isolate_dollars(safe_html(_MARKDOWN.render(text)))
