"""Tolerant Trace reading (docs/traces.md "Layout and writer": the readers).

Owns turning JSONL text back into OmniMessages: blank lines are skipped, a malformed last
line (a crash-torn tail) is ignored silently, malformed middle lines are skipped with one
stderr diagnostic (or raise in strict mode). Writing lives in `writer.py`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..omni import OmniMessage, from_json

log = logging.getLogger(__name__)

_MAX_LISTED_LINES = 20


class TraceParseError(ValueError):
    """A malformed middle line in strict mode."""


@dataclass
class ParsedTrace:
    messages: list[OmniMessage] = field(default_factory=list)
    skipped_lines: list[int] = field(default_factory=list)  # 1-based line numbers
    torn_tail: bool = False


def parse_trace_lines(text: str, *, strict: bool = False, source: str = "<trace>") -> ParsedTrace:
    """Parse JSONL text; the last non-empty line may be torn (ignored), others are skipped."""
    lines = text.split("\n")
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    result = ParsedTrace()
    for position, (number, line) in enumerate(numbered):
        try:
            result.messages.append(from_json(line))
        except ValueError as exc:
            if position == len(numbered) - 1:
                result.torn_tail = True
                continue
            if strict:
                raise TraceParseError(f"malformed Trace line {number} in {source}: {exc}") from None
            result.skipped_lines.append(number)
    return result


def skipped_lines_diagnostic(path: str, numbers: list[int]) -> str:
    """`[trace] skipped N malformed line(s) [l1, l2, …] in <path>` (at most 20 numbers listed)."""
    listed = ", ".join(str(n) for n in numbers[:_MAX_LISTED_LINES])
    if len(numbers) > _MAX_LISTED_LINES:
        listed += ", …"
    return f"[trace] skipped {len(numbers)} malformed line(s) [{listed}] in {path}"


def read_trace(path: str | os.PathLike[str], *, strict: bool = False) -> list[OmniMessage]:
    """All records of one Trace file, tolerant of a torn tail and bad middle lines."""
    text = Path(path).read_bytes().decode("utf-8", errors="replace")
    parsed = parse_trace_lines(text, strict=strict, source=str(path))
    if parsed.skipped_lines:
        log.warning("%s", skipped_lines_diagnostic(str(path), parsed.skipped_lines))
    return parsed.messages
