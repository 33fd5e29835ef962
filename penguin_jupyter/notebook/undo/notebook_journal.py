"""The notebook journal: the cells a Task inserted, edited, deleted and ran, and putting them back.

Owns the `CellChange` records the notebook tools append (kernel_tools/notebook_cells.py: an
insert's new id; an edit's previous source; a deleted cell, whole, with its index; a run cell's
previous outputs and execution count; each with the label the report names it by: position and
first line, `cell_label`) and `restore_cells`, which replays them backwards through
the frontend bridge: inserted cells deleted, previous sources set again (`edit`), deleted cells
put back at their index and previous outputs set again (`restore_cell`). Without a connected
frontend nothing is changed and the report says what could not be undone. The bridge protocol is
frontend_bridge.py's; see docs/undo.md "The notebook".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..kernel_shapes import JsonObject
from ..link.frontend_bridge import BridgeError

if TYPE_CHECKING:
    from ..link.frontend_bridge import NotebookBridge

CellOp = Literal["insert", "edit", "delete", "run"]
RESTORE_TIMEOUT_S = 10.0


@dataclass
class CellChange:
    op: CellOp
    cell_id: str
    source: str | None = None  # edit: the source before
    cell: JsonObject | None = None  # delete / run: the cell as it was (nbformat-like)
    index: int | None = None  # delete: where it was
    label: str = ""  # how the user finds the cell: `cell_label` (its position and first line)


LABEL_LINE_CHARS = 40


def cell_label(index: object, source: object) -> str:
    """`cell 7 “import pandas as pd”`: the cell's position (1-based, as a reader counts) and its
    first non-blank line, short — never the raw cell id, which nobody sees in the notebook."""
    where = f"cell {index + 1}" if isinstance(index, int) and not isinstance(index, bool) and index >= 0 else "cell"
    if not isinstance(source, str | list):  # not known
        return where if where != "cell" else "a cell"
    text = source if isinstance(source, str) else "".join(str(part) for part in source)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not first:
        return f"{where} (empty)" if where != "cell" else "an empty cell"
    if len(first) > LABEL_LINE_CHARS:
        first = first[: LABEL_LINE_CHARS - 1] + "…"
    return f"{where} “{first}”"


def cell_source(cell: JsonObject | None) -> str:
    """The source of a cell as the frontend sent it (a string or nbformat's list of lines)."""
    source = (cell or {}).get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


@dataclass
class CellsReport:
    restored: list[str] = field(default_factory=list)  # one short phrase per change undone
    not_restored: list[str] = field(default_factory=list)


def _phrase(change: CellChange) -> str:
    label = change.label or "a cell"
    return {
        "insert": f"removed the inserted {label}",
        "edit": f"source of {label} put back",
        "delete": f"deleted {label} back",
        "run": f"outputs of {label} put back",
    }[change.op]


async def restore_cells(changes: list[CellChange], bridge: NotebookBridge | None) -> CellsReport:
    report = CellsReport()
    if not changes:
        return report
    if bridge is None or not bridge.connected:
        report.not_restored.append(
            f"{len(changes)} notebook change{'s' if len(changes) != 1 else ''} (no notebook frontend with the "
            "penguin extension is connected: reopen the notebook and undo again)"
        )
        return report
    for change in reversed(changes):
        try:
            await _undo_one(change, bridge)
            report.restored.append(_phrase(change))
        except BridgeError as exc:
            report.not_restored.append(f"{_phrase(change)} ({exc})")
    return report


async def _undo_one(change: CellChange, bridge: NotebookBridge) -> None:
    if change.op == "insert":
        await bridge.request("delete", cell_id=change.cell_id, timeout_s=RESTORE_TIMEOUT_S)
    elif change.op == "edit":
        await bridge.request("edit", cell_id=change.cell_id, source=change.source or "", timeout_s=RESTORE_TIMEOUT_S)
    elif change.cell is not None:
        await bridge.request("restore_cell", cell=change.cell, index=change.index, timeout_s=RESTORE_TIMEOUT_S)
    else:
        raise BridgeError("the cell was not read before the change")


async def read_cell(bridge: NotebookBridge | None, cell_id: str) -> JsonObject | None:
    """The whole cell as the frontend holds it now (before a delete or a run), None if it cannot say."""
    if bridge is None or not bridge.connected:
        return None
    try:
        result = await bridge.request("cell", cell_id=cell_id, timeout_s=RESTORE_TIMEOUT_S)
    except BridgeError:
        return None
    cell = result.get("cell") if isinstance(result, dict) else None
    return cell if isinstance(cell, dict) else None
