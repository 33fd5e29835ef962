"""Where transcript previews find a notebook cell's current source (the `edit_cell` diff).

Owns the one hook: the kernel's notebook link registers its lookup here when `%load_ext` opens
it, and `transcript_model.diff_preview` asks it. A module of its own, importing nothing, so
registering costs `%load_ext` nothing (the transcript model pulls in the message models).
"""

from __future__ import annotations

from collections.abc import Callable

_lookup: Callable[[str], str | None] | None = None


def set_cell_source_lookup(lookup: Callable[[str], str | None] | None) -> None:
    """Register (or, with None, drop) the function giving a cell id's current source."""
    global _lookup
    _lookup = lookup


def known_cell_source(cell_id: str) -> str | None:
    """The cell's current source as the registered lookup knows it; None when unknown."""
    return _lookup(cell_id) if _lookup is not None else None
