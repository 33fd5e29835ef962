"""How a `%%penguin` cell starts: the one place that decides what it runs in.

Owns the choice, in this order: the cell's options (a bad one, or an empty body, is one line and
nothing runs); what the notebook says (the page's hello, the saved transcript of this unchanged
cell, the session the notebook used last — one visit to the link); **replay** — Run All
reproduces: a completed, unchanged cell shows its saved transcript and runs no session (what
validates; `--rerun` asks again; a saved notebook that cannot be identified — a gateway kernel no
page answered — is said in one line before the model is asked); the workspace and the rule files (all read, or nothing
starts); then **the session**: the one `--session` names, a **new** one (`--new`, another
`--workspace` or `--model`, none yet), the one the notebook used last (**remembered**: a fresh
kernel resumes it when this data root recorded it; a failure says so and starts a new one), else
the current one, **continued**. Each step's failure is one line with nothing run and nothing
changed (`CellNotStarted`). Creating, resuming and swapping sessions — all or nothing — is
kernel_sessions.py's; what the cell then sends is cell_prompt.py's; the Task is cell.py's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...state.errors import ConfigError
from ..link.notebook_link import NotebookLink, SavedLookup, current_cell_id, link_of, wait_page_hello
from ..transcript.saved_images import SavedBundle
from .cell_rules import CellRules, cell_rules
from .kernel_runtime import ALREADY_RUNNING, KernelRuntime
from .kernel_sessions import NotebookSessions, SessionStartError
from .options import CellOptions, OptionError, parse_cell_options
from .saved_transcript import penguin_cell_source, show_saved_transcript, unknown_notebook_line
from .user_lines import tell
from .workspace import choose_workspace, resolve_workspace

if TYPE_CHECKING:
    from ...session import Session

EMPTY_CELL = "penguin: the cell has no task — write what the agent should do below the %%penguin line"
RESUMED_LINE = "penguin: resumed session {session_id}, which this notebook used last (--new starts fresh)"


class CellNotStarted(Exception):
    """A step before the Task failed; `str()` is the one line shown. Nothing ran."""


@dataclass(frozen=True)
class CellLine:
    """A line the cell shows above its Task: information, or a problem (`problem`)."""

    text: str
    problem: bool = False


@dataclass(frozen=True)
class NotebookFacts:
    """What the notebook says at a cell's start (all None without a link, but the cell id)."""

    hello: Mapping[str, object] | None = None  # the page's hello, when the host did not name the notebook
    saved: SavedBundle | None = None  # this unchanged cell's completed transcript, as saved
    unknown: str | None = None  # why the saved notebook could not be identified (a gateway kernel)
    remembered: str | None = None  # the session the notebook used last (asked in a fresh kernel only)
    cell_id: str | None = None  # the running cell's id (JupyterLab sends it)


@dataclass(frozen=True)
class CellStart:
    """What a cell runs in: its session, options, workspace and rules, and the lines to show
    (after the ones the session's start queued: kernel_sessions.py's `take_*`)."""

    session: Session
    opts: CellOptions
    workspace: str
    rules: CellRules
    source: str  # the cell as the notebook stores it
    link: NotebookLink | None
    cell_id: str | None
    lines: list[CellLine] = field(default_factory=list)


async def start_cell(runtime: KernelRuntime, line: str, body: str) -> CellStart | None:
    """Decide what the cell runs in; None when it showed its saved transcript instead.
    Raises `CellNotStarted` (one line) when a step fails."""
    opts = _options(line, body)
    shell = runtime.shell
    namespace: dict[str, object] = shell.user_ns if shell is not None else {}
    source = penguin_cell_source(line, body)
    sessions = runtime.sessions
    fresh = sessions.session is None and not opts.new and not opts.session_id
    link = link_of(shell)
    notebook = await _notebook_facts(shell, link, opts, source, fresh)
    if notebook.saved is not None and _replayed(sessions, notebook.saved, opts, namespace, notebook.hello):
        return None
    if notebook.unknown is not None:  # never a silent model call instead of a replay
        tell(unknown_notebook_line(notebook.unknown))
    workspace, why = _workspace(opts, namespace, notebook.hello)
    rules = _rules(workspace)
    session, lines, fallback = await _session(runtime, opts, workspace, notebook.remembered)
    if why and str(session.workspace_dir) == workspace:  # the notebook's folder could not be used
        lines.append(CellLine(why, problem=True))
    if fallback is not None:
        lines.append(fallback)
    return CellStart(session, opts, workspace, rules, source, link, notebook.cell_id, lines)


def _options(line: str, body: str) -> CellOptions:
    try:
        opts = parse_cell_options(line)
    except OptionError as exc:
        raise CellNotStarted(str(exc)) from None
    if not body.strip():
        raise CellNotStarted(EMPTY_CELL)
    return opts


async def _notebook_facts(
    shell: object, link: NotebookLink | None, opts: CellOptions, source: str, fresh: bool
) -> NotebookFacts:
    """Everything the cell's start asks the notebook, asked together."""
    cell_id = current_cell_id(shell)
    if link is None:
        return NotebookFacts(cell_id=cell_id)
    hello = await wait_page_hello(shell)
    saved = SavedLookup() if opts.rerun else link.saved_transcript(source)
    return NotebookFacts(
        hello=hello,
        saved=saved.bundle,
        unknown=saved.unknown,
        remembered=link.remembered_session() if fresh else None,
        cell_id=cell_id,
    )


def _replayed(
    sessions: NotebookSessions,
    saved: SavedBundle,
    opts: CellOptions,
    namespace: dict[str, object],
    hello: Mapping[str, object] | None,
) -> bool:
    """Show the saved transcript (Run All reproduces without the model); False, with the line
    saying why, when it does not validate: the cell then asks the model as usual."""
    redactor = sessions.redactor_for(resolve_workspace(opts.workspace, namespace, hello=hello))
    refused = show_saved_transcript(saved, redactor)
    if refused is not None:
        tell(refused)
    return refused is None


def _workspace(
    opts: CellOptions, namespace: dict[str, object], hello: Mapping[str, object] | None
) -> tuple[str, str | None]:
    workspace, why = choose_workspace(opts.workspace, namespace, hello=hello)
    if opts.workspace and not os.path.isdir(workspace):
        raise CellNotStarted(f"penguin: --workspace directory does not exist: {workspace}")
    return workspace, why


def _rules(workspace: str) -> CellRules:
    """The policy and rule files, all read or the cell does not start (one line: file, rule, field)."""
    try:
        return cell_rules(workspace)
    except ConfigError as exc:
        raise CellNotStarted(f"penguin: {exc} — nothing was run") from None


async def _session(
    runtime: KernelRuntime, opts: CellOptions, workspace: str, remembered: str | None
) -> tuple[Session, list[CellLine], CellLine | None]:
    """The cell's session — the remembered one, else as the options say —, the line saying it
    resumed the remembered one, and the line saying that one could not be resumed."""
    if runtime.current is not None:
        raise CellNotStarted(ALREADY_RUNNING)
    sessions = runtime.sessions
    fallback: CellLine | None = None
    # A session this data root never recorded (a colleague's notebook, a demo's data root that
    # is gone) is no one's loss: a new session starts without a warning about it.
    if remembered and await sessions.has_session(remembered):
        try:
            session = await sessions.resume(remembered)
            return session, [CellLine(RESUMED_LINE.format(session_id=remembered))], None
        except SessionStartError as exc:
            fallback = CellLine(f"{exc} — starting a new session instead", problem=True)
    try:
        session = await _by_options(sessions, opts, workspace)
    except SessionStartError as exc:
        raise CellNotStarted(str(exc)) from None
    return session, [], fallback


async def _by_options(sessions: NotebookSessions, opts: CellOptions, workspace: str) -> Session:
    """`--session ID` (resumed unless current); a new session for `--new`, another workspace or
    model, or none yet; else the current one, continued."""
    current = sessions.session
    if opts.session_id:
        if current is not None and str(current.session_id) == opts.session_id:
            return current
        return await sessions.resume(opts.session_id)
    if (
        opts.new
        or current is None
        or (opts.workspace is not None and str(current.workspace_dir) != workspace)
        or (opts.model is not None and (current.provider, current.model_id) != opts.model)
    ):
        return await sessions.start_new(workspace, opts.model or sessions.model)
    return current
