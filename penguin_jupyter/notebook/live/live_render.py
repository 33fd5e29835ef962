"""Text → HTML for live widgets: Markdown for assistant text, escaped <pre> for output.

Owns the HTML snippets only (no widgets, no state). Raw HTML in model text is never passed
through: Markdown is rendered with HTML disabled.
"""

from __future__ import annotations

import html

from ..transcript.markdown_html import isolate_dollars

PRE_STYLE = "margin:0;white-space:pre-wrap;word-break:break-word;font-family:var(--jp-code-font-family,monospace);font-size:12px"
MUTED_STYLE = "color:var(--jp-ui-font-color2,#666);font-size:12px"


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
