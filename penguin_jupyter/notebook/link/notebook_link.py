"""The kernel's link to its own notebook: the frontend bridge, the running cell, the saved file.

Owns, per kernel: the `NotebookLink` opened at `%load_ext` (bridge + which thread runs which
agent-run cell), the per-Task cell context (the running `%%penguin` cell's id, the cells this Task
inserted), the cache of cell sources the approval card diffs against, and the two cell-start
decisions that need the notebook: "this cell's Task already completed — show the saved transcript
instead of asking the model again" and "which session did this notebook use last". The notebook
tools (kernel_tools/notebook_cells.py) and the cell runtime call in here; see
docs/notebook-tools.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..kernel_shapes import JsonObject
from ..transcript.cell_sources import set_cell_source_lookup
from ..transcript.saved_images import SavedBundle
from .cell_interrupts import RunningCells
from .frontend_bridge import BridgeError, NotebookBridge, open_bridge, parent_session
from .notebook_file import (
    NotebookFileError,
    locate_notebook,
    normalize_cell_source,
    notebook_file_path,
    notebooks_holding_cell,
)
from .notebook_place import PAGE_HELLO_WAIT_S, notebook_place, page_hello
from .saved_notebook_cache import SAVED_NOTEBOOKS, SavedNotebookCache, SavedNotebookIndex

_LINK_ATTR = "_penguin_notebook_link"  # where `%load_ext` keeps the link, on the shell


@dataclass
class TaskCells:
    """What the notebook tools need to know about the Task that calls them."""

    running_cell_id: str | None = None
    inserted: list[str] = field(default_factory=list)
    session_id: str = ""
    cell_source: str = ""  # the running %%penguin cell as the notebook stores it
    workspace: str = ""


@dataclass(frozen=True)
class SavedLookup:
    """What the cell-start replay check found: the saved transcript bundle of this unchanged,
    completed cell (None: there is none), or, when the saved notebook could not be identified at
    all, why (one clause for the line the cell shows before it asks the model)."""

    bundle: SavedBundle | None = None
    unknown: str | None = None


class NotebookLink:
    """One kernel's view of its notebook (bridge when the frontend has the extension)."""

    def __init__(self, shell: object, bridge: NotebookBridge | None) -> None:
        self.shell = shell
        self.bridge = bridge
        self.running = RunningCells()
        self.running.attach(shell)
        self.task = TaskCells()
        self.sources: dict[str, str] = {}
        self.approved_sources: dict[str, str] = {}  # tool call id → the source its edit_cell card showed
        self.insert_lock = asyncio.Lock()
        self.completed: dict[str, tuple[str, JsonObject]] = {}  # cell id → (source hash, bundle)
        self._metadata_session: str | None = None
        self._located: str | None = None  # the saved notebook found by a running cell's id (see locate_by_cell)
        self.saved_notebooks: SavedNotebookCache = SAVED_NOTEBOOKS
        set_cell_source_lookup(self.known_source)

    # --- what is available --------------------------------------------------------------
    @property
    def live(self) -> bool:
        return self.bridge is not None and self.bridge.connected

    @property
    def can_run_cells(self) -> bool:
        return self.bridge is not None and self.bridge.can_run_cells

    def file_path(self) -> str | None:
        """The saved notebook: named by the host or placed by the page's hello (a remote kernel),
        else found by the running cell's source."""
        named = notebook_place(getattr(self.shell, "user_ns", None), page_hello(self.shell)).notebook
        if named or self._located or not self.task.cell_source:
            return named or self._located
        for directory in dict.fromkeys((self.task.workspace, os.getcwd())):
            found = locate_notebook(directory, self.task.cell_source) if directory else None
            if found:
                return found
        return None

    async def wait_for_frontend(self) -> bool:
        """Before a session is created: give the page that sent this cell (a frontend that sends
        cell ids) a moment to say hello — after `%load_ext` (Run All sends the next cell at once),
        or when it just opened or reloaded; other clients are not waited for."""
        if self.bridge is None:
            return False
        if current_cell_id(self.shell) is None:
            return self.bridge.connected
        return await self.bridge.wait_connected(parent_session(self.shell))

    # --- per Task -----------------------------------------------------------------------
    def begin_task(self, session_id: str, cell_source: str, workspace: str) -> None:
        self.task = TaskCells(
            running_cell_id=current_cell_id(self.shell),
            session_id=session_id,
            cell_source=cell_source,
            workspace=workspace,
        )
        if self.bridge is not None:  # requests go to the page that ran this cell
            self.bridge.follow_task(parent_session(self.shell))

    def remember_sources(self, cells: list[JsonObject]) -> None:
        for cell in cells:
            cell_id = cell.get("id")
            if isinstance(cell_id, str):
                self.sources[cell_id] = str(cell.get("source", ""))

    def known_source(self, cell_id: str) -> str | None:
        return self.sources.get(cell_id)

    # --- the notebook remembers its session --------------------------------------------
    def remembered_session(self) -> str | None:
        """The session id this notebook used last: the one this kernel last put in its metadata,
        else the live metadata the page sent with its hello, else the saved file's. (The hello's
        copy is as old as the page's connection: after this kernel changed the metadata, it is
        stale — it named a long-gone session on every later fresh start, issue 39.)"""
        if self._metadata_session is not None:
            return self._metadata_session
        meta = self.bridge.hello.get("metadata") if self.live and self.bridge is not None else None
        if not isinstance(meta, dict):
            saved = self._saved_index()
            meta = saved.metadata if saved is not None else {}
        value = meta.get("session_id") if isinstance(meta, dict) else None
        return value if isinstance(value, str) and value else None

    async def remember_session(self, session_id: str) -> None:
        """Keep the session id in the notebook's metadata (saved with the notebook)."""
        if not self.live or self.bridge is None or self._metadata_session == session_id:
            return
        try:
            await self.bridge.request("set_metadata", value={"session_id": session_id}, timeout_s=5.0)
            self._metadata_session = session_id
        except BridgeError:
            pass

    # --- Run All reproduces without the model -------------------------------------------
    def saved_completed_bundle(self, cell_source: str) -> SavedBundle | None:
        """The completed transcript bundle this cell already has, if its source is unchanged (as
        data: runtime/saved_transcript.py checks it before showing anything)."""
        return self.saved_transcript(cell_source).bundle

    def saved_transcript(self, cell_source: str) -> SavedLookup:
        """The running cell's saved transcript (`saved_completed_bundle`), or why the saved
        notebook could not be identified: the host did not name it, no page said where it is
        (a gateway kernel whose page's hello did not come in time) and the folder it would be in
        holds no single notebook with this cell id."""
        cell_id = current_cell_id(self.shell)
        if not cell_id:
            return SavedLookup()
        remembered = self.completed.get(cell_id)
        if remembered is not None and remembered[0] == source_hash(cell_source):
            return SavedLookup(SavedBundle(remembered[1]))
        if self.file_path() is None:
            unknown = self.locate_by_cell(cell_id)
            if unknown is not None:
                return SavedLookup(unknown=unknown)
        saved = self._saved_index()
        return SavedLookup(saved.completed_bundle(cell_id, cell_source) if saved is not None else None)

    def locate_by_cell(self, cell_id: str) -> str | None:
        """Identify the saved notebook by the running cell's id in the folder the notebook is in
        (the gateway's `KERNEL_WORKING_DIR`, else the kernel's working directory): exactly one
        notebook there holding that id is this kernel's from now on. Returns None when found,
        else why not (one clause). Copies of a notebook share cell ids: two or more matches are
        not guessed between."""
        place = notebook_place(getattr(self.shell, "user_ns", None), page_hello(self.shell))
        directory = place.directory or os.getcwd()
        found = notebooks_holding_cell(directory, cell_id)
        if len(found) == 1:
            self._located = found[0]
            return None
        told = place.unseen or "this kernel was not told its notebook and no notebook page said where it is"
        if not found:
            return f"{told}, and no saved notebook in {directory} holds this cell"
        names = ", ".join(os.path.basename(path) for path in found[:3])
        return f"{told}, and {len(found)} saved notebooks in {directory} hold this cell ({names})"

    def _saved_index(self) -> SavedNotebookIndex | None:
        """The saved notebook as the cell-start checks see it (parsed again only when the file
        changed); None when there is no readable saved file."""
        path = self.file_path()
        if not path:
            return None
        try:
            return self.saved_notebooks.index(path)
        except NotebookFileError:
            return None

    def remember_completed(self, cell_source: str, bundle: JsonObject) -> None:
        cell_id = current_cell_id(self.shell)
        if cell_id:
            self.completed[cell_id] = (source_hash(cell_source), bundle)


def source_hash(source: str) -> str:
    return hashlib.sha256(normalize_cell_source(source).encode()).hexdigest()


def current_cell_id(shell: object) -> str | None:
    """The notebook cell id of the execution in progress (JupyterLab sends it; nbclient does not)."""
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:  # a kernel without a parent message: no cell id
        return None
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    value = metadata.get("cellId") if isinstance(metadata, dict) else None
    return value if isinstance(value, str) and value else None


def link_of(shell: object) -> NotebookLink | None:
    link = getattr(shell, _LINK_ATTR, None) if shell is not None else None
    return link if isinstance(link, NotebookLink) else None


async def wait_page_hello(shell: object, timeout_s: float = PAGE_HELLO_WAIT_S) -> Mapping[str, object] | None:
    """The page's hello, waited for (bounded, once per kernel) when a notebook page sent the
    running cell and the host did not name the notebook (a remote kernel: Restart & Run All
    sends the cells right after `%load_ext`, before the page's hello is in); None when the host
    named the notebook (docs/notebook-runtime.md "Remote kernels")."""
    if notebook_file_path(getattr(shell, "user_ns", None)):
        return None
    link = link_of(shell)
    bridge = link.bridge if link is not None else None
    if bridge is None:
        return None
    if current_cell_id(shell) is not None:  # the page that sent this cell, once per page
        await bridge.wait_connected(session=parent_session(shell), timeout_s=timeout_s)
    return page_hello(shell)


def open_link(shell: object) -> NotebookLink | None:
    """Create the kernel's NotebookLink (and open the bridge) once; None outside a kernel."""
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    link = link_of(shell)
    if link is None:
        link = NotebookLink(shell, open_bridge(shell))
        setattr(shell, _LINK_ATTR, link)
    elif link.bridge is None or link.bridge.closed:
        link.bridge = open_bridge(shell)
    return link
