"""The per-kernel runtime: the one object that knows which `%%penguin` cell is running.

Owns, for one IPython shell: the session state (`NotebookSessions`), the approval router (the
only source of the approve functions handed to `session.run`) and the running `Cell` (set
by entering a cell, cleared by its exit, and nowhere else), which also switches the redaction
at the kernel's sink on for the cell (`task_sink`). The run_python limit in force is
read here: the running cell's `--python-timeout`, else `%penguin python-timeout`, else the
tool's default. Stored on the shell, so every cell and line command of a kernel shares it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .approval_router import ApprovalRouter, CellApproval
from .kernel_sessions import NotebookSessions, default_python_timeout_ms

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...redaction import Redactor
    from ..output.task_sink import TaskSink

SHELL_ATTRIBUTE = "_penguin_runtime"
ALREADY_RUNNING = "penguin: another %%penguin cell is still running in this kernel"


class CellAlreadyRunning(RuntimeError):
    """A second `%%penguin` cell started while one runs in the same kernel."""


class RunningCell(Protocol):
    """What the runtime reads of the running cell (`cell.Cell`): its approval state, the
    redactor its sink uses and its `--python-timeout`."""

    approval: CellApproval
    redactor: Redactor
    python_timeout_s: float | None


class KernelRuntime:
    def __init__(self, shell: InteractiveShell | None) -> None:
        self.shell = shell
        self.sessions = NotebookSessions(shell=shell, python_timeout_ms=self.python_timeout_ms)
        self.router = ApprovalRouter(self._running_approval)
        self.current: RunningCell | None = None
        self._sink: TaskSink | None = None  # the running cell's redaction at the kernel's sink

    def _running_approval(self) -> CellApproval | None:
        return self.current.approval if self.current is not None else None

    def open_sink(self, cell: RunningCell) -> None:
        """Register `cell`'s request at the kernel's sink before its first widget exists, so even
        the header's first state is redacted (a sink a cell never entered is closed first)."""
        if self.current is not None and self.current is not cell:
            return  # that cell's sink stays; enter() refuses this one
        from ..output.task_sink import open_task  # (loaded with the first Task, not by %load_ext)

        if self._sink is not None:
            self._sink.close()
        self._sink = open_task(getattr(self.shell, "kernel", None), cell.redactor)

    def enter(self, cell: RunningCell) -> None:
        if self.current is not None and self.current is not cell:
            raise CellAlreadyRunning(ALREADY_RUNNING)
        self.current = cell
        if self._sink is None:
            self.open_sink(cell)

    def leave(self, cell: RunningCell) -> None:
        if self.current is cell:
            self.current = None
            if self._sink is not None:
                self._sink.close()
                self._sink = None

    def python_timeout_ms(self) -> int:
        """run_python's limit now: the running cell's option, else the kernel's, else the default."""
        from ..kernel_tools.run_python import seconds_to_ms

        seconds = self.current.python_timeout_s if self.current is not None else None
        if seconds is None:
            seconds = self.sessions.python_timeout_s
        return default_python_timeout_ms() if seconds is None else seconds_to_ms(seconds)

    def dispose(self) -> None:
        """Unload: the current session (its commands and subagents) goes."""
        self.sessions.drop_session()


def kernel_runtime(shell: InteractiveShell | None) -> KernelRuntime:
    """The shell's runtime (created on first use); without a shell, a fresh one per call."""
    runtime = getattr(shell, SHELL_ATTRIBUTE, None) if shell is not None else None
    if isinstance(runtime, KernelRuntime):
        return runtime
    runtime = KernelRuntime(shell)
    if shell is not None:
        setattr(shell, SHELL_ATTRIBUTE, runtime)
    return runtime


def drop_kernel_runtime(shell: InteractiveShell) -> None:
    runtime = getattr(shell, SHELL_ATTRIBUTE, None)
    if isinstance(runtime, KernelRuntime):
        runtime.dispose()
        setattr(shell, SHELL_ATTRIBUTE, None)
