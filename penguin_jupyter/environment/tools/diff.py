"""Unified-diff helpers for edit_file and write_file (docs/tools.md "edit_file", docs/tools.md "write_file"): line
splitting, hunk headers, line hygiene, and the LCS line diff with 3-line-context hunks."""

from __future__ import annotations

from dataclasses import dataclass

CONTEXT = 3
DIFF_LINE_CHARS = 2000


def split_lines(text: str) -> list[str]:
    """Lines like `cat -n`: a trailing newline ends the last line ("" has none)."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def diff_line(prefix: str, line: str) -> str:
    if line.endswith("\r"):
        line = line[:-1]
    if len(line) > DIFF_LINE_CHARS:
        line = line[:DIFF_LINE_CHARS] + "… [line truncated]"
    return prefix + line


def hunk_header(old_start: int, old_count: int, new_start: int, new_count: int) -> str:
    if old_count == 0:
        old_start -= 1
    if new_count == 0:
        new_start -= 1
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@"


@dataclass(frozen=True)
class LineDiff:
    hunks: list[str]
    added: int
    removed: int
    rendered_lines: int


def _lcs_ops(old: list[str], new: list[str]) -> list[tuple[str, str]]:
    n, m = len(old), len(new)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = table[i], table[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if old[i] == new[j] else max(below[j], row[j + 1])
    ops: list[tuple[str, str]] = []
    i = j = 0
    while i < n and j < m:
        if old[i] == new[j]:
            ops.append((" ", old[i]))
            i += 1
            j += 1
        elif table[i + 1][j] >= table[i][j + 1]:
            ops.append(("-", old[i]))
            i += 1
        else:
            ops.append(("+", new[j]))
            j += 1
    ops.extend(("-", line) for line in old[i:])
    ops.extend(("+", line) for line in new[j:])
    return ops


def line_diff(old: list[str], new: list[str], middle_limit: int = 250_000) -> LineDiff | None:
    """LCS diff grouped into hunks; None when the trimmed middle is too large to diff."""
    prefix = 0
    while prefix < len(old) and prefix < len(new) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < len(old) - prefix and suffix < len(new) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    mid_old = old[prefix : len(old) - suffix]
    mid_new = new[prefix : len(new) - suffix]
    if len(mid_old) * len(mid_new) > middle_limit:
        return None
    ops = [(" ", line) for line in old[:prefix]] + _lcs_ops(mid_old, mid_new)
    ops += [(" ", line) for line in old[len(old) - suffix :]]
    return _group(ops)


def _group(ops: list[tuple[str, str]]) -> LineDiff:
    changes = [k for k, (tag, _) in enumerate(ops) if tag != " "]
    added = sum(1 for tag, _ in ops if tag == "+")
    removed = sum(1 for tag, _ in ops if tag == "-")
    # old/new line numbers (1-based) at each op index
    old_no, new_no = [], []
    o = n = 1
    for tag, _ in ops:
        old_no.append(o)
        new_no.append(n)
        if tag != "+":
            o += 1
        if tag != "-":
            n += 1
    groups: list[tuple[int, int]] = []
    for k in changes:
        if groups and k - groups[-1][1] - 1 < 2 * CONTEXT:
            groups[-1] = (groups[-1][0], k)
        else:
            groups.append((k, k))
    hunks: list[str] = []
    rendered = 0
    for first, last in groups:
        start = max(0, first - CONTEXT)
        end = min(len(ops) - 1, last + CONTEXT)
        body = ops[start : end + 1]
        old_count = sum(1 for tag, _ in body if tag != "+")
        new_count = sum(1 for tag, _ in body if tag != "-")
        lines = [hunk_header(old_no[start], old_count, new_no[start], new_count)]
        lines += [diff_line(tag, text) for tag, text in body]
        rendered += len(lines)
        hunks.append("\n".join(lines))
    return LineDiff(hunks, added, removed, rendered)
