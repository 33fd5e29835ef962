"""What a `%%penguin` cell executes: options → prompt → workspace → Session → `Cell`.

Owns the steps before a cell's Task starts, each a one-line error on a user's mistake (bad
option, empty body, missing workspace, a Session that cannot start) with nothing run and
nothing changed. The Task's life is `cell.Cell`'s. The input transformer in `extension.py`
rewrites a `%%penguin` cell into `await run_cell(line, body)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...state.errors import ConfigError
from ..kernel_tools.notebook_file import notebook_file_path
from ..kernel_tools.notebook_place import wait_page_hello
from ..link.notebook_link import NotebookLink, link_of
from .cell import Cell, TaskInterrupted
from .cell_rules import CellRules, cell_rules
from .kernel_runtime import ALREADY_RUNNING, KernelRuntime, kernel_runtime
from .kernel_sessions import SessionStartError
from .options import CellOptions, OptionError, parse_cell_options
from .saved_transcript import (
    penguin_cell_source,
    show_saved_transcript,
    transcript_bundle_of,
    unknown_notebook_line,
)
from .user_lines import tell
from .workspace import choose_workspace, resolve_workspace

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...session import Session

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


def _workspace(
    opts: CellOptions, namespace: dict[str, object], hello: Mapping[str, Any] | None
) -> tuple[str, str | None]:
    workspace, why = choose_workspace(opts.workspace, namespace, hello=hello)
    if opts.workspace and not os.path.isdir(workspace):
        raise CellNotStarted(f"penguin: --workspace directory does not exist: {workspace}")
    return workspace, why


async def _page_hello(shell: InteractiveShell | None, namespace: dict[str, object]) -> Mapping[str, Any] | None:
    """The notebook page's hello, waited for (bounded) only when the host did not name the
    notebook: a remote kernel learns its notebook from the page (docs/notebook-runtime.md
    "Remote kernels")."""
    if notebook_file_path(namespace):
        return None
    return await wait_page_hello(shell)


def _rules(workspace: str) -> CellRules:
    """The policy and rule files, all read or the cell does not start (one line: file, rule, field)."""
    try:
        return cell_rules(workspace)
    except ConfigError as exc:
        raise CellNotStarted(f"penguin: {exc} — nothing was run") from None


async def _session(
    runtime: KernelRuntime, link: NotebookLink | None, opts: CellOptions, workspace: str
) -> tuple[Session, str | None, str | None]:
    """The cell's Session, the line saying it resumed one (information) and a note (a problem);
    in a fresh kernel it continues the session the notebook used last (its metadata says which,
    when this data root recorded it), unless the cell asks for `--new` or `--session`."""
    if runtime.current is not None:
        raise CellNotStarted(ALREADY_RUNNING)
    sessions = runtime.sessions
    fresh = sessions.session is None and not opts.new and not opts.session_id
    remembered = link.remembered_session() if link is not None and fresh else None
    # A session this data root never recorded (a colleague's notebook, a demo's data root that
    # is gone) is no one's loss: a new session starts without a warning about it.
    if remembered and await sessions.has_session(remembered):
        try:
            session = await sessions.resume(remembered)
            resumed = f"penguin: resumed session {remembered}, which this notebook used last (--new starts fresh)"
            return session, resumed, None
        except SessionStartError as exc:
            note: str | None = f"{exc} — starting a new session instead"
    else:
        note = None
    try:
        return await sessions.session_for(opts, workspace), None, note
    except SessionStartError as exc:
        raise CellNotStarted(str(exc)) from None


async def _expanded_prompt(
    shell: InteractiveShell | None, link: NotebookLink | None, body: str, namespace: dict[str, object]
) -> str:
    """The cell body with its `{name}`, `{cell:-1}` and `{cell:ID}` references expanded."""
    from ..kernel_tools.cell_history import previous_cell_text
    from ..kernel_tools.expand import PREVIOUS_CELL, cell_references, expand_variables
    from ..kernel_tools.notebook_cells import cells_by_id

    references = cell_references(body)
    cells = await cells_by_id(link, [ref for ref in references if ref != PREVIOUS_CELL])
    if PREVIOUS_CELL in references:
        previous = previous_cell_text(shell)
        if previous is not None:
            cells[PREVIOUS_CELL] = previous
    return expand_variables(body.strip(), namespace, cells)


def prompt_too_large(session: Session, prompt: str) -> str | None:
    """The one line refusing a prompt larger than the model's context window (estimated tokens
    against the window, both named), before anything is sent or recorded; None when it fits or
    the window is unknown."""
    from ...llm.limits import estimate_text_tokens, usable_context_window
    from ...omni import SessionMetaPayload

    meta = session.meta.payload
    window = usable_context_window(meta.model_context_window) if isinstance(meta, SessionMetaPayload) else None
    if window is None:
        return None
    tokens = estimate_text_tokens(prompt)
    if tokens <= window:
        return None
    return (
        f"penguin: this prompt is about {tokens:,} tokens (estimated), more than the context window of "
        f"{session.provider}/{session.model_id} ({window:,} tokens), so nothing was sent; shorten it, "
        "or point the agent at a file or a variable ({name}) instead of pasting it"
    )


def _open_cell(
    runtime: KernelRuntime, session: Session, opts: CellOptions, prompt: str, rules: CellRules, context: str
) -> Cell | None:
    """The cell's `Cell`, with a line for each rule or protection that is off; None (said in one
    line) when the kernel's sink cannot redact: nothing of the Task would be shown redacted, so
    none of it runs (fail closed)."""
    from ...seams import off_lines
    from .task_sink import SinkUnavailable

    try:
        cell = Cell(runtime, session, opts, prompt, rules, context=context)
    except SinkUnavailable as exc:
        tell(str(exc))
        return None
    for seam_line in off_lines():  # said in every Task's cell while it is off
        cell.show_note(seam_line)
    return cell


def _replayed(
    runtime: KernelRuntime,
    link: NotebookLink | None,
    opts: CellOptions,
    source: str,
    namespace: dict[str, object],
    hello: Mapping[str, Any] | None,
) -> bool:
    """Whether the cell showed its saved transcript instead of asking the model (Run All
    reproduces; what validates); when it did not, the line saying why, if there is one."""
    if link is None or opts.rerun:
        return False
    saved = link.saved_transcript(source)
    if saved.bundle is not None:
        redactor = runtime.sessions.redactor_for(resolve_workspace(opts.workspace, namespace, hello=hello))
        refused = show_saved_transcript(saved.bundle, redactor)
        if refused is None:
            return True
        tell(refused)
    elif saved.unknown is not None:  # never a silent model call instead of a replay
        tell(unknown_notebook_line(saved.unknown))
    return False


async def run_cell(line: str, body: str) -> None:
    """What a `%%penguin` cell executes (via the input transformer)."""
    shell = current_shell()
    runtime = kernel_runtime(shell)
    namespace = namespace_of(shell)
    link = link_of(shell)
    source = penguin_cell_source(line, body)
    try:
        opts = _options(line, body)
        hello = await _page_hello(shell, namespace) if link is not None else None
        if _replayed(runtime, link, opts, source, namespace, hello):
            return
        workspace, why = _workspace(opts, namespace, hello)
        rules = _rules(workspace)
        session, resumed, note = await _session(runtime, link, opts, workspace)
    except CellNotStarted as exc:
        tell(str(exc))
        return
    from ..kernel_tools.cell_history import task_context
    from ..link.notebook_link import current_cell_id

    prompt = await _expanded_prompt(shell, link, body, namespace)
    context = task_context(shell, current_cell_id(shell))
    too_large = prompt_too_large(session, prompt + context)
    if too_large is not None:
        tell(too_large)
        return
    cell = _open_cell(runtime, session, opts, prompt, rules, context)
    if cell is None:
        return
    for notice, problem in runtime.sessions.take_dotenv_notices():  # the first use of a folder's .env
        (cell.show_note if problem else cell.show_info)(notice)
    for start_note in runtime.sessions.take_start_notes():  # the model a provider's key selected
        cell.show_info(start_note)
    if resumed is not None:
        cell.show_info(resumed)
    for line_shown in (why if str(session.workspace_dir) == workspace else None, note):
        if line_shown:
            cell.show_note(line_shown)
    if link is not None:
        link.begin_task(str(session.session_id), source, workspace)
        await link.remember_session(str(session.session_id))
    async with cell:
        await cell.run_task()
    bundle = transcript_bundle_of(cell.final[1]) if cell.final is not None else None
    if link is not None and bundle is not None and cell.final is not None and cell.final[0] == "completed":
        link.remember_completed(source, bundle)
    if cell.record.interrupted:
        raise TaskInterrupted()
