"""Markdown → safe HTML, the one renderer for model text in live widgets and static transcripts.

Owns the markdown-it configuration (CommonMark + tables; raw HTML escaped), the compact table
markup (tables are most of a long answer's HTML bytes) and the dollar isolation that keeps
JupyterLab's MathJax from typesetting prices as math. Every rendering passes
`no_fetch_html.safe_html`, so a remote image becomes a click-to-open placeholder and nothing in
model text makes the browser load anything.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from .no_fetch_html import safe_html

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
_TEXT_BETWEEN_TAGS = re.compile(r"(^|>)([^<]+)")
_TABLE = re.compile(r"<table\b[^>]*>.*?</table>", re.DOTALL)
_NEWLINE_AFTER_TABLE_TAG = re.compile(r"(</?(?:table|thead|tbody|tr|th|td)\b[^>]*>)\n")
_OPTIONAL_END_TAG = re.compile(r"</(?:td|th|tr)>")
_ALIGN = re.compile(r'<(td|th) (?:style="text-align:|align=")(left|right|center)"?>')


def isolate_dollars(markup: str) -> str:
    """Wrap each `$` of the text (never inside a tag) in its own span.

    JupyterLab typesets widget and text/html output with MathJax, which would turn
    "$3,512 … $3,169" into math; MathJax never pairs delimiters across element boundaries,
    so isolated dollars stay literal.
    """
    return _TEXT_BETWEEN_TAGS.sub(lambda m: m.group(1) + m.group(2).replace("$", "<span>$</span>"), markup)


def compact_tables(markup: str) -> str:
    """The tables of rendered Markdown without the bytes HTML does not need.

    markdown-it writes a newline after every table tag and closes every cell and row; HTML
    closes a cell at the next cell, row or section tag and a row at the next row or section
    tag, so `</td>`, `</th>` and `</tr>` (and the newlines) go. The browser, JupyterLab's
    sanitizer and GitHub's renderer build the same table from either form; a 100 KB Markdown
    table's HTML shrinks from ~2.1× to ~1.1× its text (docs/notebook-streaming.md). A column's
    alignment becomes the cell's `align=right` attribute instead of a `style` (unquoted: a third
    of the bytes on every cell once the bundle is JSON, where each quote takes two; GitHub, which
    strips styles, keeps it). Only for markup rendered from Markdown,
    where cell text is escaped and tables never nest.
    """

    def compact(match: re.Match[str]) -> str:
        table = _NEWLINE_AFTER_TABLE_TAG.sub(r"\1", match.group(0))
        return _ALIGN.sub(r"<\1 align=\2>", _OPTIONAL_END_TAG.sub("", table))

    return _TABLE.sub(compact, markup)


def markdown_html(text: str) -> str:
    return isolate_dollars(compact_tables(safe_html(_MARKDOWN.render(text))))
