"""The kernel's undo stack: one `TaskJournal` per `%%penguin` Task of this kernel, newest last.

Owns the Task bracket (`begin` when a cell's Task starts, `end` when it ends: the namespace
compared with its baseline, the file journal closed, the commands it ran listed; a Task that
changed nothing undo can put back is not kept, so it offers no Undo), the hook the
namespace-changing tools call first (`before_namespace_change`, kernel_tools/), the per-session
file journals (created under the data root, deleted when the session is disposed), and `undo`:
the most recent not-undone Task (or the one named, if it is that one) put back — notebook,
variables, files — with one report line, a note queued for the model's next request, and the
Task's transcript marked "undone". The stack lives in the kernel's memory: after a kernel
restart there is nothing to undo, and `%penguin undo` says why; only the last `MAX_TASKS` Tasks are
kept. See docs/undo.md.
"""

from __future__ import annotations

import atexit
import itertools
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...environment.file_journal import FILE_JOURNAL_KEY, FileJournal, FileRestore, open_file_journal
from .namespace_journal import NamespaceBaseline, NamespaceReport
from .notebook_journal import CellChange, restore_cells
from .undo_report import model_note, report_line

if TYPE_CHECKING:
    from ...omni import OmniMessage
    from ...session import Session
    from ..link.frontend_bridge import NotebookBridge
    from .transcript_marks import TranscriptDisplay

SHELL_ATTRIBUTE = "_penguin_undo"
MAX_TASKS = 20  # Tasks remembered; an older one is forgotten and its references released
NOTHING_TO_UNDO = (
    "penguin: nothing to undo — no Task of this kernel is left to undo (after a kernel restart the "
    "earlier Tasks' variables cannot be restored: the kernel that held them is gone)"
)


class UndoRefused(Exception):
    """`%penguin undo` cannot run as asked; `str()` is the one line shown."""


@dataclass
class TaskJournal:
    task_id: str
    session_id: str
    cell_id: str | None
    prompt: str
    files: FileJournal | None = None
    namespace: NamespaceBaseline | None = None
    cells: list[CellChange] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    undone: bool = False
    report: str | None = None

    @property
    def changed(self) -> bool:
        """Whether undo has anything to put back: a notebook change, a variable bound, rebound,
        deleted or changed in place, or a file written. A Task that changed none of these (it only
        read, answered or ran commands, whose effects no undo reaches) is not offered Undo."""
        if self.cells or (self.namespace is not None and self.namespace.changed):
            return True
        return self.files is not None and bool(self.files.entries(self.task_id))
    # the cell's transcript: updated when the Task's undo state changes (render.ts shows it)
    transcript: TranscriptDisplay | None = None


class UndoStack:
    def __init__(self) -> None:
        self.tasks: list[TaskJournal] = []
        self.current: TaskJournal | None = None
        self._file_journals: dict[str, FileJournal] = {}
        self._ids = itertools.count(1)

    # --- the Task bracket ------------------------------------------------------------------
    def begin(self, session: Session, cell_id: str | None, prompt: str, journal_root: Path | None) -> TaskJournal:
        session_id = str(session.session_id)
        task = TaskJournal(f"task-{next(self._ids)}-{secrets.token_hex(3)}", session_id, cell_id, prompt)
        files = self._file_journal(session, journal_root)
        if files is not None:
            files.begin(task.task_id)
            task.files = files
        self.current = task
        return task

    def _file_journal(self, session: Session, journal_root: Path | None) -> FileJournal | None:
        session_id = str(session.session_id)
        journal = self._file_journals.get(session_id)
        if journal is None and journal_root is not None:
            journal = open_file_journal(journal_root, session_id)
            self._file_journals[session_id] = journal
        services = getattr(session.environment, "services", None)
        extra = getattr(services, "extra", None)
        if journal is not None and isinstance(extra, dict):
            extra[FILE_JOURNAL_KEY] = journal
        return journal

    def before_namespace_change(self, namespace: dict[str, object]) -> None:
        """Before the Task's first run_python / run_cell: the variables as they are."""
        task = self.current
        if task is not None and task.namespace is None:
            task.namespace = NamespaceBaseline.take(namespace)

    def note_cell_change(self, change: CellChange) -> None:
        if self.current is not None:
            self.current.cells.append(change)

    def end(self, namespace: dict[str, object], commands: list[str]) -> TaskJournal | None:
        task, self.current = self.current, None
        if task is None:
            return None
        if task.files is not None:
            task.files.end()
        if task.namespace is not None:
            task.namespace.settle(namespace)
        task.commands = commands
        if not task.changed:  # nothing to undo: no Undo button, and `%penguin undo` skips it
            if task.files is not None:
                task.files.discard(task.task_id)
            return None
        self.tasks.append(task)
        for old in self.tasks[:-MAX_TASKS]:  # forgotten: release the objects and saved files it held
            if old.files is not None:
                old.files.discard(old.task_id)
        del self.tasks[:-MAX_TASKS]
        return task

    # --- undo ------------------------------------------------------------------------------
    def top(self) -> TaskJournal | None:
        return next((task for task in reversed(self.tasks) if not task.undone), None)

    def blocked_reason(self, task: TaskJournal) -> str | None:
        """Why `task` cannot be undone now (None when it can)."""
        if task.undone:
            return "this Task was already undone"
        top = self.top()
        if top is not task and top is not None:
            return f"the later Task {summary_of(top.prompt)} must be undone first"
        return None

    def choose(self, task_id: str | None) -> TaskJournal:
        if self.current is not None:
            raise UndoRefused("penguin: a %%penguin Task is running; undo once it has ended")
        if task_id is None:
            top = self.top()
            if top is None:
                raise UndoRefused(NOTHING_TO_UNDO)
            return top
        task = next((t for t in self.tasks if t.task_id == task_id), None)
        if task is None:
            raise UndoRefused(
                f"penguin: this kernel has no record of Task {task_id} (the kernel restarted since it ran, "
                f"so its variables cannot be restored, or it is older than the last {MAX_TASKS} Tasks)"
            )
        reason = self.blocked_reason(task)
        if reason is not None:
            raise UndoRefused(f"penguin: cannot undo that Task: {reason}")
        return task

    async def undo(
        self, task: TaskJournal, namespace: dict[str, object], bridge: NotebookBridge | None, session: Session | None
    ) -> str:
        """Put `task`'s changes back; the report line (also kept on the task)."""
        cells = await restore_cells(task.cells, bridge)
        names = task.namespace.restore(namespace) if task.namespace is not None else NamespaceReport()
        files = task.files.restore(task.task_id) if task.files is not None else FileRestore()
        task.undone = True
        task.namespace = None  # the previous objects are back where they belong (or named)
        task.report = report_line(cells, names, files, task.commands)
        if session is not None and str(session.session_id) == task.session_id:
            session.add_notice(model_note(task.prompt, cells, names, files, task.commands))
        return task.report

    # --- sessions --------------------------------------------------------------------------
    def session_disposed(self, session_id: str) -> None:
        journal = self._file_journals.pop(session_id, None)
        if journal is not None:
            journal.dispose()

    def dispose(self) -> None:
        for session_id in list(self._file_journals):
            self.session_disposed(session_id)


def undo_stack(shell: object) -> UndoStack | None:
    stack = getattr(shell, SHELL_ATTRIBUTE, None) if shell is not None else None
    return stack if isinstance(stack, UndoStack) else None


def ensure_undo_stack(shell: object) -> UndoStack:
    stack = undo_stack(shell)
    if stack is None:
        stack = UndoStack()
        atexit.register(stack.dispose)  # the kernel ends: the file journals go (docs/undo.md)
        if shell is not None:
            setattr(shell, SHELL_ATTRIBUTE, stack)
    return stack


def commands_of(messages: list[OmniMessage]) -> list[str]:
    """The shell commands a Task ran (the argument a tool declares as its `ShellCommand`, not
    those denied), from its recorded messages."""
    from ...environment.registry import declaration_of
    from ...omni import ToolCallOutputPayload, ToolCallPayload
    from ..transcript.transcript_model import parse_arguments

    denied = {
        m.payload.tool_call_id
        for m in messages
        if isinstance(m.payload, ToolCallOutputPayload) and str(m.payload.output).startswith("Tool call denied")
    }
    commands = []
    for m in messages:
        payload = m.payload
        if m.origin or not isinstance(payload, ToolCallPayload):
            continue
        command = declaration_of(payload.name).roles.command
        if command is not None and payload.tool_call_id not in denied:
            commands.append(str((parse_arguments(payload.arguments) or {}).get(command, "")))
    return commands


def summary_of(prompt: str) -> str:
    words = " ".join(prompt.split())
    return f"“{words[:40]}{'…' if len(words) > 40 else ''}”"
