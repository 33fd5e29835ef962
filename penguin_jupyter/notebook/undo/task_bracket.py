"""Where a `%%penguin` cell and the namespace-changing tools meet the undo stack.

Owns the few calls the rest of the notebook layer makes: `begin_task` / `end_task` (runtime/cell.py
around a Task), `transcript_shown` (the cell's transcript is out: it becomes the Undo button's
target and the previous Task's button is disabled), and `before_namespace_change` (run_python and
run_cell, before the Task's code first touches the namespace) and `note_cell_change` (the notebook
tools). Each is a no-op where no stack exists (outside a kernel). See docs/undo.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .undo_stack import TaskJournal, commands_of, ensure_undo_stack, summary_of, undo_stack

if TYPE_CHECKING:
    from pathlib import Path

    from ...omni import OmniMessage
    from ...session import Session
    from ..link.frontend_bridge import NotebookBridge
    from .notebook_journal import CellChange
    from .transcript_marks import TranscriptDisplay

UNDO_DIR = "undo"


def begin_task(
    shell: object, session: Session, cell_id: str | None, prompt: str, agent_dir: Path | None
) -> TaskJournal | None:
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    root = agent_dir / UNDO_DIR if agent_dir is not None else None
    return ensure_undo_stack(shell).begin(session, cell_id, prompt, root)


def end_task(shell: object, messages: list[OmniMessage]) -> TaskJournal | None:
    stack = undo_stack(shell)
    if stack is None:
        return None
    return stack.end(getattr(shell, "user_ns", {}), commands_of(messages))


async def transcript_shown(shell: object, task: TaskJournal, display: TranscriptDisplay, bridge: NotebookBridge | None) -> None:
    """`task`'s transcript (showing an enabled Undo) is out; the Task before it can no longer be
    undone until this one is: its button says so."""
    task.transcript = display
    stack = undo_stack(shell)
    if stack is None:
        return
    earlier = [t.transcript for t in stack.tasks if t is not task and not t.undone and t.transcript is not None]
    if earlier:
        note = f"undo the later Task {summary_of(task.prompt)} first"
        await earlier[-1].mark("blocked", note, bridge, by_display=False)


def before_namespace_change(shell: object) -> None:
    stack = undo_stack(shell)
    if stack is not None:
        stack.before_namespace_change(getattr(shell, "user_ns", {}))


def note_cell_change(shell: object, change: CellChange) -> None:
    stack = undo_stack(shell)
    if stack is not None:
        stack.note_cell_change(change)
