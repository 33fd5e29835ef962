"""Model-visible text markers (docs/protocol.md "Markers"): `[tag]…[/tag]` blocks and their parsers.

Owns how markers are spelled. Producers write the square form only; parsers also accept
the legacy angle form `<tag>…</tag>` (square tried first), except `[user_steering]`,
which never had one. No escaping is applied to bodies; text a stranger wrote that the harness
puts into a prompt (a cell's error, a variable's values) goes in as `quoted_data`, so it can
neither close the block around it nor start a line that reads as the harness's or the user's.
"""

from __future__ import annotations

import re

TURN_ABORTED = "turn_aborted"
TURN_RETRIED = "turn_retried"
CONTEXT_SUMMARY = "context_summary"
SUMMARY = "summary"
USER_STEERING = "user_steering"
BACKGROUND_TASK_DONE = "background_task_done"
DEVELOPER_INSTRUCTIONS = "developer_instructions"


def marker_block(tag: str, body: str) -> str:
    """`[tag]\\nbody\\n[/tag]`."""
    return f"[{tag}]\n{body}\n[/{tag}]"


DATA_QUOTE = "| "


def quoted_data(text: str) -> str:
    """`text` as data inside a harness block: every line (any line break Python knows, so a
    lone `\r` or U+2028 too) starts with `| `, so no line of it can be `[/tag]`, a fake `[user]`
    or anything else that would read as the block's end or a new speaker."""
    return "\n".join(DATA_QUOTE + line for line in (text.splitlines() or [""]))


def strip_marker_blocks(text: str, tag: str) -> str:
    """Remove every `tag` block (both forms) and any stray unpaired `tag` delimiter."""
    t = re.escape(tag)
    text = re.sub(rf"\[{t}\][\s\S]*?\[/{t}\]", "", text)
    text = re.sub(rf"\[/?{t}\]", "", text)
    text = re.sub(rf"<{t}>[\s\S]*?</{t}>", "", text)
    return re.sub(rf"</?{t}>", "", text)


def starts_with_marker(text: str, tag: str) -> bool:
    return text.startswith(f"[{tag}]") or text.startswith(f"<{tag}>")


# --- compaction summary ----------------------------------------------------------------------


def build_context_summary_text(summary: str) -> str:
    return marker_block(CONTEXT_SUMMARY, summary)


_SUMMARY_PATTERNS = (
    re.compile(r"\[summary\]([\s\S]*?)\[/summary\]"),
    re.compile(r"<summary>([\s\S]*?)</summary>"),
)


def extract_summary(raw: str) -> str:
    """The extraction ladder of docs/engine.md "Compaction": first non-empty `[summary]` pair (square, then angle),
    else what is left once summary tags are stripped, else the raw text; "" means empty."""
    for pattern in _SUMMARY_PATTERNS:
        for match in pattern.finditer(raw):
            inside = strip_marker_blocks(match.group(1), SUMMARY).strip()
            if inside:
                return inside
    return strip_marker_blocks(raw, SUMMARY).strip()


# --- turn transcripts ([turn_aborted] / [turn_retried]) ------------------------------------


def _line(tag: str, body: str, attrs: str = "") -> str:
    return f"  [{tag}{attrs}]{body}[/{tag}]"


def transcribe_user_input(text: str) -> str:
    return _line("user_input", text)


def transcribe_thinking(text: str) -> str:
    return _line("thinking", text)


def transcribe_text(text: str) -> str:
    return _line("text", text)


def transcribe_tool_call(name: str, tool_call_id: str, arguments: str) -> str:
    return _line("tool_call", arguments, f' name="{name}" id="{tool_call_id}"')


def transcribe_tool_call_output(tool_call_id: str, status: str, output: str) -> str:
    return _line("tool_call_output", output, f' id="{tool_call_id}" status="{status}"')


def _turn_block(tag: str, lines: list[str]) -> str:
    return "\n".join([f"[{tag}]", *lines, f"[/{tag}]"])


def build_turn_aborted_block(lines: list[str]) -> str:
    return _turn_block(TURN_ABORTED, lines)


def build_turn_retried_block(lines: list[str]) -> str:
    return _turn_block(TURN_RETRIED, lines)


_SYNTHETIC_BLOCK_PATTERNS = (
    re.compile(r"^\[(turn_aborted|turn_retried)\]\n?([\s\S]*?)\n?\[/\1\]\s*$"),
    re.compile(r"^<(turn_aborted|turn_retried)>\n?([\s\S]*?)\n?</\1>\s*$"),
)


def unwrap_synthetic_block(text: str) -> str | None:
    """Inner lines of a whole-text `[turn_aborted]`/`[turn_retried]` block, else None."""
    for pattern in _SYNTHETIC_BLOCK_PATTERNS:
        match = pattern.match(text)
        if match:
            return match.group(2)
    return None


# --- steering ----------------------------------------------------------------------------------

_STEERING_RE = re.compile(r"^\[user_steering\]\n([\s\S]*?)\n\[/user_steering\]\s*$")


def user_steering_text(text: str) -> str:
    return marker_block(USER_STEERING, text)


def parse_user_steering_text(text: str) -> str | None:
    match = _STEERING_RE.match(text)
    return match.group(1) if match else None


# --- attachment lines --------------------------------------------------------------------------


def attached_image_line(path_or_url: str) -> str:
    return f"[attached image: {path_or_url}]"


def attached_file_line(path: str) -> str:
    return f"[attached file: {path}]"


# --- budget stop -------------------------------------------------------------------------------

BUDGET_STOP = "budget_stop"


def build_budget_stop_text(reason: str) -> str:
    """What the next task's model reads after a task a spending budget stopped (docs/cost.md)."""
    return marker_block(
        BUDGET_STOP,
        f"The previous task was stopped before a model request because it could cross a spending "
        f"budget: {reason}. Its work so far is above; the user may raise the budget or continue.",
    )
