"""A short plain-text summary of a transcript bundle (the `text/plain` representation).

Owns only the summary lines: model, status, session, tool-call counts, notices, the last reply
and token usage. The full transcript is the JSON (labextension) and the HTML.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from .bundle_shape import TranscriptBundle
from .cost_line import cost_text, read_task_cost
from .transcript_model import (
    Block,
    EventBlock,
    SubagentGroup,
    TextBlock,
    build_blocks,
    iter_tool_cards,
    session_label,
)

REPLY_LIMIT = 200


def _walk(blocks: list[Block]) -> list[Block]:
    flat: list[Block] = []
    for block in blocks:
        flat.append(block)
        if isinstance(block, SubagentGroup):
            flat.extend(_walk(block.blocks))
    return flat


def render_text(bundle: TranscriptBundle) -> str:
    """Summary lines of a normalized bundle (see `transcript_bundle.read_bundle`)."""
    session = bundle.get("session") or {}
    blocks = build_blocks(bundle.get("messages") or [], bundle.get("tools") or {})
    model = "/".join(str(session[k]) for k in ("provider", "model_id") if session.get(k)) or "unknown model"
    lines = [f"penguin transcript — {model} — {bundle.get('status') or 'completed'}"]
    undo = bundle.get("undo")
    if isinstance(undo, Mapping) and undo.get("state") == "undone":
        lines[0] += " — undone"
        lines.append(str(undo.get("note") or ""))
    if session.get("session_id"):
        lines.append(session_label(session["session_id"]))
    names = Counter(card.name or "?" for card in iter_tool_cards(blocks))
    if names:
        listed = ", ".join(f"{name} ×{count}" if count > 1 else name for name, count in names.items())
        total = sum(names.values())
        lines.append(f"{total} tool call{'s' if total != 1 else ''}: {listed}")
    flat = _walk(blocks)
    subagents = sum(isinstance(b, SubagentGroup) for b in flat)
    if subagents:
        lines.append(f"{subagents} subagent{'s' if subagents != 1 else ''}")
    lines.extend(b.text for b in blocks if isinstance(b, EventBlock))
    replies = [b for b in blocks if isinstance(b, TextBlock) and b.role == "assistant" and b.text.strip()]
    if replies:
        reply = replies[-1].text.strip()
        lines.append("reply: " + (reply if len(reply) <= REPLY_LIMIT else reply[: REPLY_LIMIT - 1] + "…"))
    usage = bundle.get("usage") or {}
    counts = usage.get("session")
    if counts and isinstance(counts, Mapping):
        lines.append(f"tokens: {counts.get('total', 0)} total, {counts.get('output', 0)} output")
    cost = cost_text(read_task_cost(usage.get("cost")))
    if cost:
        lines.append(cost)
    return "\n".join(lines)
