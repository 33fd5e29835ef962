"""Self-contained HTML for a transcript bundle (the `text/html` fallback).

Owns the markup only: inline CSS scoped to `.penguin-transcript-html`, no scripts, every string
escaped, Markdown through markdown-it-py with raw HTML escaped. The body passes
`no_fetch_html.safe_html` as a whole, so nothing in it loads a URL without a click (remote
images are placeholders naming their host; `data:` rasters stay inline).
It renders the blocks of `transcript_model.build_blocks` (a card's strings already show
invisible characters as `⟨U+XXXX⟩`; its command, code or cell source in full, long ones folded
behind "… N more lines"); it is readable without its CSS
(GitHub strips styles) because it leans on `<details>`, `<pre>` and headings.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from .bundle_shape import TranscriptBundle
from .cost_line import cost_text, read_task_cost
from .long_prompts import fold
from .markdown_html import compact_tables, markdown_html
from .no_fetch_html import image_html, safe_html
from .transcript_model import (
    Block,
    EventBlock,
    ImageBlock,
    SubagentGroup,
    TextBlock,
    ThinkingBlock,
    ToolCard,
    build_blocks,
    session_label,
)

OUTPUT_HEAD_LINES = 12
ROOT_CLASS = "penguin-transcript-html"


# The sheet, rule by rule. Each saved %%penguin cell carries the rules its own markup uses (a
# transcript without a diff has no diff colours), so a small Task does not pay for the whole sheet
# (docs/notebook-runtime.md "Saved size"). Our classes all start with `pg-` and are not scoped
# further; element rules (`pre`, `summary`) are scoped to the root so they touch nothing else.
_RULES = (
    ("", f".{ROOT_CLASS}{{font:13px/1.45 system-ui,sans-serif;border:1px solid #8884;border-radius:6px;padding:8px 10px}}"),
    ("<pre", f".{ROOT_CLASS} pre{{white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:6px;background:#8881;font-size:12px}}"),
    ("<summary", f".{ROOT_CLASS} summary{{cursor:pointer;color:#777}}"),
    ("pg-header", ".pg-header{font-weight:600;margin-bottom:6px}"),
    ("pg-meta", ".pg-meta{color:#777;font-weight:400;font-size:12px}"),
    ("pg-undone", ".pg-undone{color:#b26a00}"),
    ("pg-thinking", ".pg-thinking{color:#777;font-style:italic}"),
    ("pg-user", ".pg-user{border-left:3px solid #4a8;padding-left:8px}"),
    ("pg-tool", ".pg-tool{border:1px solid #8885;border-radius:5px;padding:4px 8px;margin:6px 0}"),
    ("pg-tool-title", ".pg-tool-title{font-family:monospace;font-weight:600}"),
    ("pg-event", ".pg-event{color:#a60;font-size:12px;margin:4px 0}"),
    ("pg-subagent", ".pg-subagent{border-left:3px solid #68c;padding-left:8px;margin:6px 0}"),
    ("pg-decision-allow", ".pg-decision-allow{color:#282}"),
    ("pg-decision-deny", ".pg-decision-deny{color:#c33}"),
    ("pg-decision-forbidden", ".pg-decision-forbidden{color:#c33}"),
    ("pg-failed", ".pg-failed{color:#c33}"),
    ("pg-diff-add", ".pg-diff-add{color:#282}"),
    ("pg-diff-del", ".pg-diff-del{color:#c33}"),
    ("pg-usage", ".pg-usage{color:#777;font-size:12px;margin-top:6px}"),
    ("pg-remote", ".pg-remote{display:inline-block;border:1px dashed #8888;border-radius:4px;padding:0 4px;font-size:12px}"),
)


def _sheet(markup: str) -> str:
    """The rules of `_RULES` that `markup` uses (a rule's marker appears in it), in order."""
    return "".join(rule for marker, rule in _RULES if marker in markup)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _collapsible_pre(text: str, *, css: str = "") -> str:
    lines = text.split("\n")
    cls = f' class="{css}"' if css else ""
    if len(lines) <= OUTPUT_HEAD_LINES:
        return f"<pre{cls}>{_e(text)}</pre>"
    head, rest = "\n".join(lines[:OUTPUT_HEAD_LINES]), "\n".join(lines[OUTPUT_HEAD_LINES:])
    more = len(lines) - OUTPUT_HEAD_LINES
    return (
        f"<pre{cls}>{_e(head)}</pre><details><summary>… {more} more line{'s' if more != 1 else ''}"
        f"</summary><pre{cls}>{_e(rest)}</pre></details>"
    )


def _user_text(text: str) -> str:
    """A user message as Markdown; a long one folds after its head, like long tool output."""
    folded = fold(text)
    if not folded.rest:
        return markdown_html(text)
    return (
        f"{markdown_html(folded.head)}<details><summary>{_e(folded.label)}</summary>"
        f"{markdown_html(folded.rest)}</details>"
    )


def _diff(text: str) -> str:
    rows = []
    for line in text.split("\n"):
        if line.startswith(("+++", "---")):
            css = "pg-diff-file"
        else:
            css = "pg-diff-add" if line.startswith("+") else "pg-diff-del" if line.startswith("-") else ""
        rows.append(f'<span class="{css}">{_e(line)}</span>' if css else _e(line))
    return '<pre class="pg-diff">' + "\n".join(rows) + "</pre>"


def _tool_card(card: ToolCard) -> str:
    parts = [f'<div class="pg-tool penguin-tool-card" data-tool-call-id="{_e(card.tool_call_id)}">']
    title = card.title if card.has_call else f"(tool call {card.tool_call_id} not in transcript)"
    parts.append(f'<div><span class="pg-tool-title">{_e(title)}</span>')
    if card.description:
        parts.append(f" — {_e(card.description)}")
    parts.append("</div>")
    if card.command is not None:  # a shell command (its tool's `command` card role)
        where = f" <span class='pg-meta'>in {_e(card.workdir)}</span>" if card.workdir else ""
        parts.append(_collapsible_pre(f"$ {card.command}") + where)
    elif card.diff:
        parts.append(_diff(card.diff))
    elif card.body is not None:  # the whole code / cell source / prompt the call carries
        parts.append(_collapsible_pre(card.body))
    elif card.detail:
        parts.append(f"<div class='pg-meta'>{_e(card.detail)}</div>")
    if card.has_call:
        parts.append(f"<details><summary>arguments</summary><pre>{_e(card.arguments)}</pre></details>")
    if card.call_stop_reason and card.call_stop_reason != "completed":
        parts.append(f"<div class='pg-failed'>call {_e(card.call_stop_reason)} (not executed)</div>")
    if card.decision:
        why = f" — {_e(card.decision_reason)}" if card.decision_reason else ""
        parts.append(f"<div class='pg-decision-{_e(card.decision)}'>approval: {_e(card.decision)}{why}</div>")
    if card.output is not None:
        status = card.output_stop_reason or "completed"
        label = "output" if status == "completed" else f"output ({status})"
        css = "" if status == "completed" else "pg-failed"
        parts.append(f"<div class='pg-meta {css}'>{_e(label)}</div>")
        parts.append(_collapsible_pre(card.output))
        parts.extend(image_html(src) for src in card.images)
    elif card.has_call:
        parts.append("<div class='pg-meta'>no output</div>")
    parts.append("</div>")
    return "".join(parts)


def _block(block: Block) -> str:
    if isinstance(block, ThinkingBlock):
        return (
            "<details class='pg-thinking'><summary>thinking</summary>"
            f"<pre>{_e(block.thinking)}</pre></details>"
        )
    if isinstance(block, TextBlock):
        if block.role == "user":
            who = block.sender or "user"
            return f"<div class='pg-user'><div class='pg-meta'>{_e(who)}</div>{_user_text(block.text)}</div>"
        body = markdown_html(block.text)
        failed = (
            ""
            if block.stop_reason == "completed"
            else f"<div class='pg-failed'>({_e(block.stop_reason)})</div>"
        )
        return f"<div class='pg-text'>{body}{failed}</div>"
    if isinstance(block, ImageBlock):
        return image_html(block.source)
    if isinstance(block, ToolCard):
        return _tool_card(block)
    if isinstance(block, EventBlock):
        return f"<div class='pg-event pg-event-{_e(block.event)}'>{_e(block.text)}</div>"
    if isinstance(block, SubagentGroup):
        model = f" · {block.provider}/{block.model_id}" if block.provider and block.model_id else ""
        inner = "".join(_block(child) for child in block.blocks)
        return (
            f"<details class='pg-subagent' open><summary>subagent {_e(block.session_id)}{_e(model)}</summary>"
            f"{inner}</details>"
        )
    return ""


def _usage(usage: Mapping[str, object] | None) -> str:
    if not usage:
        return ""
    session, request = _counts(usage.get("session")), _counts(usage.get("request"))
    cost = cost_text(read_task_cost(usage.get("cost")))
    return (
        f"<div class='pg-usage'>tokens: session {_e(session.get('total', 0))} total "
        f"({_e(session.get('cache_write', 0))} input, {_e(session.get('cache_read', 0))} cached input, "
        f"{_e(session.get('output', 0))} output) · last request {_e(request.get('total', 0))}"
        f"{' · ' + _e(cost) if cost else ''}</div>"
    )


def _counts(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _undone(undo: object) -> str:
    """The header's mark of a Task the user undid (docs/undo.md), with its report line."""
    if not isinstance(undo, Mapping) or undo.get("state") != "undone":
        return ""
    return f" · <span class='pg-undone'>undone</span><div class='pg-meta'>{_e(str(undo.get('note') or ''))}</div>"


def render_html(bundle: TranscriptBundle) -> str:
    """The whole transcript of a normalized bundle (see `transcript_bundle.read_bundle`)."""
    session = bundle.get("session") or {}
    model = "/".join(str(session[k]) for k in ("provider", "model_id") if session.get(k)) or "unknown model"
    meta = [session_label(session["session_id"]) if session.get("session_id") else ""]
    meta.append(f"approve {session['approval_mode']}" if session.get("approval_mode") else "")
    status = str(bundle.get("status") or "completed")
    header = (
        # No emoji: where no colour-emoji font is installed (server images) it was a missing-glyph box.
        f"<div class='pg-header'>penguin · {_e(model)} · <span class='pg-status-{_e(status)}'>{_e(status)}</span>"
        f"{_undone(bundle.get('undo'))}"
        f"<div class='pg-meta'>{_e(' · '.join(m for m in meta if m))}</div></div>"
    )
    body = "".join(_block(block) for block in build_blocks(bundle.get("messages") or [], bundle.get("tools") or {}))
    safe = compact_tables(safe_html(header + body + _usage(bundle.get("usage"))))
    return f'<div class="{ROOT_CLASS}"><style>{_sheet(safe)}</style>{safe}</div>'
