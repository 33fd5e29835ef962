"""What an undo says: the one report line for the user and the note for the model's next request.

Owns the wording only: what was restored (cells, names, files), what was not and why, and the
commands whose effects no undo reaches. The facts come from the journals (namespace_journal.py,
notebook_journal.py, environment/file_journal.py); delivering the note is the session's
background-notice queue (docs/engine.md "Background notices").
"""

from __future__ import annotations

import os

from ...environment.file_journal import FileRestore
from .namespace_journal import NamespaceReport
from .notebook_journal import CellsReport

MAX_LISTED = 8


def _names(items: list[str]) -> str:
    shown = [os.path.basename(i) if os.sep in i else i for i in items[:MAX_LISTED]]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _restored_parts(cells: CellsReport, names: NamespaceReport, files: FileRestore) -> list[str]:
    parts = []
    if cells.restored:
        parts.append(f"cells: {_names(cells.restored)}")
    if names.restored:
        parts.append(f"variables restored: {_names(names.restored)}")
    if names.removed:
        parts.append(f"variables removed: {_names(names.removed)}")
    if files.restored:
        parts.append(f"files restored: {_names(files.restored)}")
    if files.removed:
        parts.append(f"files removed: {_names(files.removed)}")
    return parts


def _not_restored_parts(
    cells: CellsReport, names: NamespaceReport, files: FileRestore, commands: list[str]
) -> list[str]:
    parts = list(cells.not_restored)
    parts += [f"{name} ({why})" for name, why in names.not_restored]
    parts += [f"{os.path.basename(path)} ({why})" for path, why in files.not_restored]
    if commands:
        shown = "; ".join(f"`{' '.join(c.split())[:60]}`" for c in commands[:MAX_LISTED])
        parts.append(f"commands run, their effects not undone: {shown}")
    return parts


def report_line(cells: CellsReport, names: NamespaceReport, files: FileRestore, commands: list[str]) -> str:
    restored = _restored_parts(cells, names, files)
    missing = _not_restored_parts(cells, names, files, commands)
    line = "penguin: undone — " + ("; ".join(restored) if restored else "nothing needed restoring")
    if missing:
        line += " — not undone: " + "; ".join(missing)
    return line


def model_note(
    prompt: str, cells: CellsReport, names: NamespaceReport, files: FileRestore, commands: list[str]
) -> str:
    """The harness note the next request carries, so the model's picture matches the notebook."""
    words = " ".join(prompt.split())
    restored = _restored_parts(cells, names, files)
    missing = _not_restored_parts(cells, names, files, commands)
    note = (
        f"[The user undid the previous Task (“{words[:200]}”): its changes to the notebook, the kernel's "
        "variables and the workspace files were reverted. "
        + ("Restored: " + "; ".join(restored) + ". " if restored else "")
        + ("Not undone: " + "; ".join(missing) + ". " if missing else "")
        + "Do not assume anything that Task produced still exists.]"
    )
    return note
