"""The notebook journal: the cells a Task inserted, edited, deleted and ran, and putting them back.

Owns the `CellChange` records the notebook tools append (kernel_tools/notebook_cells.py: an
insert's new id; an edit's previous source; a deleted cell, whole, with its index; a run cell's
previous outputs and execution count) and `restore_cells`, which replays them backwards through
the frontend bridge: inserted cells deleted, previous sources set again (`edit`), deleted cells
put back at their index and previous outputs set again (`restore_cell`). Without a connected
frontend nothing is changed and the report says what could not be undone. The bridge protocol is
frontend_bridge.py's; see docs/undo.md "The notebook".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

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
    cell: dict[str, Any] | None = None  # delete / run: the cell as it was (nbformat-like)
    index: int | None = None  # delete: where it was


@dataclass
class CellsReport:
    restored: list[str] = field(default_factory=list)  # one short phrase per change undone
    not_restored: list[str] = field(default_factory=list)


def _phrase(change: CellChange) -> str:
    return {
        "insert": f"removed inserted cell {change.cell_id}",
        "edit": f"source of cell {change.cell_id}",
        "delete": f"deleted cell {change.cell_id} back",
        "run": f"outputs of cell {change.cell_id}",
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


async def read_cell(bridge: NotebookBridge | None, cell_id: str) -> dict[str, Any] | None:
    """The whole cell as the frontend holds it now (before a delete or a run), None if it cannot say."""
    if bridge is None or not bridge.connected:
        return None
    try:
        result = await bridge.request("cell", cell_id=cell_id, timeout_s=RESTORE_TIMEOUT_S)
    except BridgeError:
        return None
    cell = result.get("cell") if isinstance(result, dict) else None
    return cell if isinstance(cell, dict) else None
