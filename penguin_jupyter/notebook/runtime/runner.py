"""What a `%%penguin` cell executes: its start → its prompt → its `Cell` and Task.

Owns the order of a cell's steps: what it runs in (`cell_start.start_cell`: options, replay,
workspace, rules, the session — each a one-line error on a user's mistake with nothing run and
nothing changed), what it sends (`cell_prompt`), then the `Cell` (the Task's life is
`cell.Cell`'s) and, once it completed, the transcript the notebook remembers for Run All. The
input transformer in `extension.py` rewrites a `%%penguin` cell into `await run_cell(line, body)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cell import Cell, TaskInterrupted
from .cell_prompt import cell_prompt, prompt_too_large
from .cell_start import EMPTY_CELL, CellNotStarted, CellStart, start_cell
from .kernel_runtime import KernelRuntime, kernel_runtime
from .saved_transcript import transcript_bundle_of
from .user_lines import tell

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["EMPTY_CELL", "TaskInterrupted", "current_shell", "run_cell"]


def current_shell() -> InteractiveShell | None:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell: InteractiveShell | None = get_ipython()
    return shell


def _open_cell(runtime: KernelRuntime, start: CellStart, prompt: str, context: str) -> Cell | None:
    """The cell's `Cell`, open, with its start's lines and a line for each rule or protection
    that is off; None (said in one line) when the kernel's sink cannot redact: nothing of the
    Task would be shown redacted, so none of it runs (fail closed)."""
    from ...seams import off_lines
    from ..output.task_sink import SinkUnavailable

    cell = Cell(
        runtime,
        start.session,
        start.opts,
        prompt,
        start.rules,
        context=context,
        source=start.source,
        workspace=start.workspace,
    )
    try:
        cell.open()
    except SinkUnavailable as exc:
        tell(str(exc))
        return None
    for seam_line in off_lines():  # said in every Task's cell while it is off
        cell.show_note(seam_line)
    for notice, problem in runtime.sessions.take_dotenv_notices():  # the first use of a folder's .env
        (cell.show_note if problem else cell.show_info)(notice)
    for start_note in runtime.sessions.take_start_notes():  # the model a provider's key selected
        cell.show_info(start_note)
    for shown in start.lines:  # resumed, the workspace's fallback, a remembered session that failed
        (cell.show_note if shown.problem else cell.show_info)(shown.text)
    return cell


async def run_cell(line: str, body: str) -> None:
    """What a `%%penguin` cell executes (via the input transformer)."""
    shell = current_shell()
    runtime = kernel_runtime(shell)
    try:
        start = await start_cell(runtime, line, body)
    except CellNotStarted as exc:
        tell(str(exc))
        return
    if start is None:  # its saved transcript was shown (Run All reproduces)
        return
    namespace: dict[str, object] = shell.user_ns if shell is not None else {}
    prompt, context = await cell_prompt(shell, start.link, body, namespace, start.cell_id)
    too_large = prompt_too_large(start.session, prompt + context)
    if too_large is not None:
        tell(too_large)
        return
    cell = _open_cell(runtime, start, prompt, context)
    if cell is None:
        return
    async with cell:
        await cell.run_task()
    bundle = transcript_bundle_of(cell.final[1]) if cell.final is not None else None
    if start.link is not None and bundle is not None and cell.final is not None and cell.final[0] == "completed":
        start.link.remember_completed(start.source, bundle)
    if cell.record.interrupted:
        raise TaskInterrupted()
