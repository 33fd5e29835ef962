"""Text → HTML for live widgets: Markdown for assistant text, escaped <pre> for output.

Owns the HTML snippets only (no widgets, no state). Raw HTML in model text is never passed
through: Markdown is rendered with HTML disabled.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

PRE_STYLE = "margin:0;white-space:pre-wrap;word-break:break-word;font-family:var(--jp-code-font-family,monospace);font-size:12px"
MUTED_STYLE = "color:var(--jp-ui-font-color2,#666);font-size:12px"


_TEXT_BETWEEN_TAGS = re.compile(r"(^|>)([^<]+)")


def isolate_dollars(markup: str) -> str:
    """Wrap each `$` of the text (never inside a tag) in its own span.

    JupyterLab typesets widget HTML with MathJax, which would turn "$3,512 … $3,169" into math;
    MathJax never pairs delimiters across element boundaries, so isolated dollars stay literal.
    """
    return _TEXT_BETWEEN_TAGS.sub(lambda m: m.group(1) + m.group(2).replace("$", "<span>$</span>"), markup)


def markdown_html(text: str) -> str:
    return isolate_dollars(_MARKDOWN.render(text))


def pre_html(text: str, style: str = PRE_STYLE) -> str:
    return f'<pre style="{style}">{html.escape(text)}</pre>'


def muted_html(text: str) -> str:
    return isolate_dollars(f'<span style="{MUTED_STYLE}">{html.escape(text)}</span>')


def note_html(text: str, color: str = "#b26a00") -> str:
    return isolate_dollars(f'<div style="color:{color};font-size:12px">{html.escape(text)}</div>')


def head_tail(text: str, head: int = 15, tail: int = 15) -> tuple[str, int]:
    """The first `head` and last `tail` lines with an elision line; returns (text, hidden count)."""
    lines = text.splitlines()
    hidden = len(lines) - head - tail
    if hidden <= 0:
        return text, 0
    return "\n".join([*lines[:head], f"… {hidden} more lines …", *lines[-tail:]]), hidden
