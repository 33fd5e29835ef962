"""Where transcript previews find a notebook cell's current source (the `edit_cell` diff).

Owns the one hook: the kernel's notebook link registers its lookup here when `%load_ext` opens
it, and `transcript_model.diff_preview` asks it; and `CellPreview`, the cell an approval card
shows (fetched by kernel_tools/notebook_cells.py `cell_preview`). A module of its own, importing
next to nothing, so registering costs `%load_ext` nothing (the transcript model pulls in the
message models).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

_lookup: Callable[[str], str | None] | None = None


def set_cell_source_lookup(lookup: Callable[[str], str | None] | None) -> None:
    """Register (or, with None, drop) the function giving a cell id's current source."""
    global _lookup
    _lookup = lookup


def known_cell_source(cell_id: str) -> str | None:
    """The cell's current source as the registered lookup knows it; None when unknown."""
    return _lookup(cell_id) if _lookup is not None else None


@dataclass(frozen=True)
class CellPreview:
    """A notebook cell as an approval card shows it (delete_cell, run_cell, edit_cell's diff):
    its source as the frontend holds it now (`live`), else as the saved file has it; `source`
    is None when neither could be read, and `note` says so."""

    cell_id: str
    source: str | None
    live: bool
    note: str = ""

    def label(self) -> str:
        if self.source is None:
            return f"cell {self.cell_id}: its source could not be read ({self.note})"
        if self.live:
            return f"cell {self.cell_id} as the notebook holds it now"
        return f"cell {self.cell_id} as the saved file holds it ({self.note})"
