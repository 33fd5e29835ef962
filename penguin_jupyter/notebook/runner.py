"""What a `%%penguin` cell executes: options → prompt → workspace → Session → `Cell`.

Owns the steps before a cell's Task starts, each a one-line error on a user's mistake (bad
option, empty body, missing workspace, a Session that cannot start) with nothing run and
nothing changed. The Task's life is `cell.Cell`'s. The input transformer in `extension.py`
rewrites a `%%penguin` cell into `await run_cell(line, body)`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from .cell import Cell, TaskInterrupted
from .kernel_runtime import ALREADY_RUNNING, KernelRuntime, kernel_runtime
from .kernel_sessions import SessionStartError
from .options import CellOptions, OptionError, parse_cell_options
from .workspace import resolve_workspace

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..session import Session

EMPTY_CELL = "penguin: the cell has no task — write what the agent should do below the %%penguin line"

__all__ = ["EMPTY_CELL", "TaskInterrupted", "current_shell", "run_cell"]


class CellNotStarted(Exception):
    """A step before the Task failed; `str()` is the one line shown. Nothing ran."""


def current_shell() -> InteractiveShell | None:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell: InteractiveShell | None = get_ipython()
    return shell


def namespace_of(shell: InteractiveShell | None) -> dict[str, object]:
    return shell.user_ns if shell is not None else {}


def _options(line: str, body: str) -> CellOptions:
    try:
        opts = parse_cell_options(line)
    except OptionError as exc:
        raise CellNotStarted(str(exc)) from None
    if not body.strip():
        raise CellNotStarted(EMPTY_CELL)
    return opts


def _workspace(opts: CellOptions, namespace: dict[str, object]) -> str:
    workspace = resolve_workspace(opts.workspace, namespace)
    if opts.workspace and not os.path.isdir(workspace):
        raise CellNotStarted(f"penguin: --workspace directory does not exist: {workspace}")
    return workspace


async def _session(runtime: KernelRuntime, opts: CellOptions, workspace: str) -> Session:
    if runtime.current is not None:
        raise CellNotStarted(ALREADY_RUNNING)
    try:
        return await runtime.sessions.session_for(opts, workspace)
    except SessionStartError as exc:
        raise CellNotStarted(str(exc)) from None


async def run_cell(line: str, body: str) -> None:
    """What a `%%penguin` cell executes (via the input transformer)."""
    shell = current_shell()
    runtime = kernel_runtime(shell)
    namespace = namespace_of(shell)
    try:
        opts = _options(line, body)
        workspace = _workspace(opts, namespace)
        session = await _session(runtime, opts, workspace)
    except CellNotStarted as exc:
        print(str(exc), file=sys.stderr)
        return
    from .kernel_tools import expand_variables

    cell = Cell(runtime, session, opts, expand_variables(body.strip(), namespace))
    async with cell:
        await cell.run_task()
    if cell.record.interrupted:
        raise TaskInterrupted()
