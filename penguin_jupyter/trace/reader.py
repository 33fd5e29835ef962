"""Tolerant Trace reading (docs/traces.md "Layout and writer": the readers).

Owns turning JSONL text back into OmniMessages: blank lines are skipped, a malformed last
line (a crash-torn tail) is ignored silently, malformed middle lines are skipped with one
stderr diagnostic (or raise in strict mode), and a line holding text that cannot be encoded (a
lone surrogate escape, or bytes that are not UTF-8) is read with U+FFFD in its place, with one
diagnostic too. Whatever the file holds, reading it raises nothing but `OSError` (and
`TraceParseError` in strict mode). Writing lives in `writer.py`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..omni import OmniMessage, parse_wire_line

log = logging.getLogger(__name__)

_MAX_LISTED_LINES = 20


class TraceParseError(ValueError):
    """A malformed middle line in strict mode."""


@dataclass
class ParsedTrace:
    messages: list[OmniMessage] = field(default_factory=list)
    skipped_lines: list[int] = field(default_factory=list)  # 1-based line numbers
    repaired_lines: list[int] = field(default_factory=list)  # read with U+FFFD for what could not be encoded
    torn_tail: bool = False


def parse_trace_lines(text: str, *, strict: bool = False, source: str = "<trace>") -> ParsedTrace:
    """Parse JSONL text; the last non-empty line may be torn (ignored), others are skipped."""
    lines = text.split("\n")
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    result = ParsedTrace()
    for position, (number, line) in enumerate(numbered):
        try:
            message, repaired = parse_wire_line(line)
        except ValueError as exc:
            if position == len(numbered) - 1:
                result.torn_tail = True
                continue
            if strict:
                raise TraceParseError(f"malformed Trace line {number} in {source}: {exc}") from None
            result.skipped_lines.append(number)
            continue
        result.messages.append(message)
        if repaired:
            result.repaired_lines.append(number)
    return result


def _listed(numbers: list[int]) -> str:
    listed = ", ".join(str(n) for n in numbers[:_MAX_LISTED_LINES])
    return listed + ", …" if len(numbers) > _MAX_LISTED_LINES else listed


def skipped_lines_diagnostic(path: str, numbers: list[int]) -> str:
    """`[trace] skipped N malformed line(s) [l1, l2, …] in <path>` (at most 20 numbers listed)."""
    return f"[trace] skipped {len(numbers)} malformed line(s) [{_listed(numbers)}] in {path}"


def repaired_lines_diagnostic(path: str, numbers: list[int]) -> str:
    """`[trace] repaired N line(s) … [l1, …] in <path>`: text that could not be encoded became U+FFFD."""
    return (
        f"[trace] repaired {len(numbers)} line(s) holding text that is not valid Unicode "
        f"(now U+FFFD) [{_listed(numbers)}] in {path}"
    )


def read_trace(path: str | os.PathLike[str], *, strict: bool = False) -> list[OmniMessage]:
    """All records of one Trace file, tolerant of a torn tail and bad middle lines."""
    raw = Path(path).read_bytes()
    text = raw.decode("utf-8", errors="replace")
    parsed = parse_trace_lines(text, strict=strict, source=str(path))
    if "\ufffd" in text:  # bytes that are not UTF-8 were read as U+FFFD
        parsed.repaired_lines = _with_lines_not_utf8(raw, parsed)
    if parsed.skipped_lines:
        log.warning("%s", skipped_lines_diagnostic(str(path), parsed.skipped_lines))
    if parsed.repaired_lines:
        log.warning("%s", repaired_lines_diagnostic(str(path), parsed.repaired_lines))
    return parsed.messages


def _with_lines_not_utf8(raw: bytes, parsed: ParsedTrace) -> list[int]:
    """The repaired lines plus the (1-based) lines read whose bytes are not UTF-8."""
    lines = raw.split(b"\n")
    last = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=0)
    unread = {*parsed.skipped_lines, *([last] if parsed.torn_tail else [])}
    numbers = set(parsed.repaired_lines)
    for number, line in enumerate(lines, start=1):
        if number in unread:
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            numbers.add(number)
    return sorted(numbers)
