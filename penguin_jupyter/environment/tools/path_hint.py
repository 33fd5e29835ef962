"""The missing-path hint appended by read_file and edit_file (core-behavior.md §4.2)."""

from __future__ import annotations

import os

MAX_LISTED = 8


def _common_prefix_len(a: str, b: str) -> int:
    a, b = a.lower(), b.lower()
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def missing_path_hint(abs_path: str) -> str:
    current = os.path.normpath(abs_path)
    missing_segment = os.path.basename(current)
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return ""
        if os.path.lexists(parent) or os.path.exists(parent):
            break
        missing_segment = os.path.basename(parent)
        current = parent
    ancestor = parent
    if ancestor == os.path.dirname(ancestor):
        return ""
    if not os.path.isdir(ancestor):
        return f' Note: "{ancestor}" exists but is a file, not a directory.'
    head = f' The directory "{ancestor}" exists but has no entry "{missing_segment}".'
    try:
        names = os.listdir(ancestor)
    except OSError:
        return head
    if not names:
        return head + " It is empty."
    ranked = sorted(names, key=lambda n: (-_common_prefix_len(n, missing_segment), n))
    shown = [n + "/" if os.path.isdir(os.path.join(ancestor, n)) else n for n in ranked[:MAX_LISTED]]
    listing = ", ".join(shown)
    if len(names) > MAX_LISTED:
        listing += f" (+{len(names) - MAX_LISTED} more)"
    return head + f" It contains: {listing}."
