"""The missing-path hint appended by read_file and edit_file when a path does not exist.

Owns the walk up to the deepest ancestor that can be stat'ed (following symlinks; any stat
failure keeps walking, up to and including the filesystem root, so a missing top-level
directory is hinted too), the "is a file, not a directory" case, and the listing of the
ancestor's entries ranked by the longest case-insensitive shared prefix with the missing
segment (ties in case-insensitive alphabetical order, lower case first). Only real
directories get a trailing "/" (a symlink is listed by its own name, as the entry it is).
Failure path only: nothing here runs when the path exists.
"""

from __future__ import annotations

import os
import stat

MAX_LISTED = 8


def _shared_prefix_len(name: str, target: str) -> int:
    name = name.lower()
    limit = min(len(name), len(target))
    n = 0
    while n < limit and name[n] == target[n]:
        n += 1
    return n


def _alphabetical(name: str) -> tuple[str, str]:
    """Case-insensitive order; of two names differing only in case, the lower-case one first."""
    return (name.casefold(), name.swapcase())


def _rank(entries: list[os.DirEntry[str]], missing: str) -> list[str]:
    target = missing.lower()
    ranked = sorted(entries, key=lambda e: (-_shared_prefix_len(e.name, target), _alphabetical(e.name)))
    labels = []
    for entry in ranked:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        labels.append(f"{entry.name}/" if is_dir else entry.name)
    return labels


def missing_path_hint(abs_path: str) -> str:
    """Sentences (with a leading space) saying where `abs_path` leaves the filesystem; "" when
    nothing useful can be said."""
    resolved = os.path.normpath(abs_path)
    ancestor = os.path.dirname(resolved)
    missing = os.path.basename(resolved)
    while True:
        try:
            st = os.stat(ancestor)
        except (OSError, ValueError):
            parent = os.path.dirname(ancestor)
            if parent == ancestor:
                return ""
            missing = os.path.basename(ancestor)
            ancestor = parent
            continue
        if not stat.S_ISDIR(st.st_mode):
            return f' Note: "{ancestor}" exists but is a file, not a directory.'
        break
    head = f' The directory "{ancestor}" exists but has no entry "{missing}".'
    try:
        with os.scandir(ancestor) as it:
            entries = list(it)
    except OSError:
        return head
    if not entries:
        return head + " It is empty."
    labels = _rank(entries, missing)
    listing = ", ".join(labels[:MAX_LISTED])
    if len(labels) > MAX_LISTED:
        listing += f" (+{len(labels) - MAX_LISTED} more)"
    return head + f" It contains: {listing}."
