"""The notebook tools: `read_notebook` (r), `insert_cell`, `edit_cell`, `run_cell`, `delete_cell` (rw).

Owns the tool definitions (names and arguments are a contract) and what each call does through
the kernel's NotebookLink: the live notebook through the frontend bridge when it is connected,
otherwise (`read_notebook` only) the saved .ipynb, marked as possibly stale. Also owns
`cell_preview`, what an approval card shows of the cell edit_cell / delete_cell / run_cell names
(its source as the frontend holds it at approval time, else the saved file's, saying so); the
source an edit_cell card showed is the edit's precondition — the frontend applies the edit only
if the cell still holds it, otherwise the call is refused in one line. Approval, timeouts and
truncation are the Environment's; the bridge protocol is frontend_bridge.py's. See
docs/notebook-tools.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import BeforeValidator, Field

from ...environment.registry import ToolRegistration, declaration_of, declare
from ...environment.tool_arguments import (
    DESCRIBE,
    AnyText,
    CallDescription,
    CellRef,
    Headline,
    NewText,
    NonBlankText,
    OnBad,
    ShownInFull,
    Unusable,
)
from ...environment.tool_declaration import (
    ArgumentsT,
    DeclaredTool,
    SavedRule,
    ToolArguments,
    ToolDeclaration,
)
from ...environment.types import BuiltinTool, ToolExecutionContext, ToolFailed, ToolResult
from ...omni import OmniMessage, ToolCallPayload, partial_tool_call_output, read_call_arguments
from ..kernel_shapes import JsonObject, json_objects
from ..link.frontend_bridge import REQUEST_TIMEOUT_S, BridgeError, PageGone
from ..link.notebook_file import NotebookFileError, read_saved_cells
from ..transcript.cell_sources import CellPreview
from ..transcript.transcript_model import edit_cell_result
from ..undo.notebook_journal import CellChange, cell_label, cell_source, read_cell
from ..undo.task_bracket import before_namespace_change, note_cell_change
from .cell_outputs import cells_text, error_text
from .notebook_outline import notebook_answer, resolve_cell_id

if TYPE_CHECKING:
    from ..link.notebook_link import NotebookLink

log = logging.getLogger(__name__)
RUN_GRACE_S = 2.0
EXPANDED_CELL_MAX = 3_000  # characters of one `{cell:ID}` expansion
PREVIEW_TIMEOUT_S = 5.0
_CELL_ID = Field(description="The cell's id, as read_notebook lists it.")


def _cell_index(value: object) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    raise Unusable


class ReadNotebookArguments(ToolArguments):
    start: Annotated[
        int | None, Field(ge=0), BeforeValidator(_cell_index),
        OnBad("Invalid '{name}': expected a cell index ≥ 0 (got {got_repr})."),
    ] = None
    end: Annotated[
        int | None, Field(ge=0), BeforeValidator(_cell_index),
        OnBad("Invalid '{name}': expected a cell index ≥ 0 (got {got_repr})."),
    ] = None
    cell_ids: Annotated[
        list[NonBlankText] | None,
        Field(description="Ids of cells to read in full (the outline's short ids work too)."),
        OnBad("Invalid '{name}': expected a list of cell ids (got {got_repr})."),
    ] = None


class InsertCellArguments(ToolArguments):
    cell_type: Annotated[
        Literal["code", "markdown"], OnBad('Invalid "cell_type": expected "code" or "markdown" (got {got_repr}).')
    ]
    source: Annotated[AnyText, Field(description="The cell's full source."), ShownInFull(), Headline()]
    index: Annotated[
        int | None, Field(ge=0, description="Optional position (0 = top)."), BeforeValidator(_cell_index),
        OnBad('Invalid "index": expected a cell index ≥ 0 (got {got_repr}).'),
    ] = None
    description: Annotated[CallDescription, DESCRIBE] = None


class EditCellArguments(ToolArguments):
    cell_id: Annotated[NonBlankText, _CELL_ID, CellRef()]
    source: Annotated[AnyText, Field(description="The new full source."), NewText(), Headline()]
    description: Annotated[CallDescription, DESCRIBE] = None


class RunCellArguments(ToolArguments):
    cell_id: Annotated[NonBlankText, _CELL_ID, CellRef(), Headline()]
    description: Annotated[CallDescription, DESCRIBE] = None


class DeleteCellArguments(ToolArguments):
    cell_id: Annotated[NonBlankText, _CELL_ID, CellRef(), Headline()]


def _declaration(
    name: str,
    description: str,
    arguments: type[ArgumentsT],
    permission: Literal["r", "rw"],
    timeout_ms: int,
    saved_rule: SavedRule | None = None,
) -> ToolDeclaration[ArgumentsT]:
    return ToolDeclaration(name, description, arguments, permission, timeout_ms, max_output_length=32_000, saved_rule=saved_rule, in_kernel=True)


READ_NOTEBOOK = _declaration(
    "read_notebook",
    "Read this notebook's cells as the user sees them now (unsaved edits included). A small notebook "
    "comes whole; a large one as an outline, one line per cell (index, id, type, first line, outputs). "
    "`start`/`end` (cell indexes, end exclusive) or `cell_ids` give those cells in full: source and "
    "outputs (text cut to a budget, errors as short tracebacks, plots as images). The running "
    "%%penguin cell is marked. Every answer is bounded and says what it left out.",
    ReadNotebookArguments,
    "r",
    30_000,
)
INSERT_CELL = _declaration(
    "insert_cell",
    "Insert a new cell into this notebook, unexecuted. By default it goes below the running %%penguin "
    "cell, after the cells you already inserted in this task, so your cells read top to bottom. Put "
    "work the user keeps here (loading, cleaning, the final plots), then run it with run_cell: "
    "Restart & Run All then reproduces the analysis.",
    InsertCellArguments,
    "rw",
    30_000,
    saved_rule="never",  # changes the notebook: "Always allow (this session)" only
)
EDIT_CELL = _declaration(
    "edit_cell",
    "Replace the whole source of an existing cell (the user sees the diff before approving). Outputs "
    "are kept until the cell runs again. The running %%penguin cell cannot be edited.",
    EditCellArguments,
    "rw",
    30_000,
    saved_rule="never",  # changes the notebook: "Always allow (this session)" only
)
RUN_CELL = _declaration(
    "run_cell",
    "Run a cell of this notebook as a notebook cell, while your %%penguin cell keeps running: its "
    "outputs and execution count appear in the notebook and are returned to you. Fails with the error "
    "if the cell raised. %%penguin cells cannot be run this way.",
    RunCellArguments,
    "rw",
    300_000,
    saved_rule="never",  # changes the notebook: "Always allow (this session)" only
)
DELETE_CELL = _declaration(
    "delete_cell",
    "Delete a cell from this notebook (for example one you inserted by mistake). The running "
    "%%penguin cell cannot be deleted.",
    DeleteCellArguments,
    "rw",
    30_000,
    saved_rule="never",  # changes the notebook: "Always allow (this session)" only
)
for _declared in (READ_NOTEBOOK, INSERT_CELL, EDIT_CELL, RUN_CELL, DELETE_CELL):
    declare(_declared)  # `registry.declaration_of` answers for them from import on


class _NotebookTool(DeclaredTool[ArgumentsT]):

    def __init__(self, link: NotebookLink) -> None:
        self.link = link

    async def run(self, arguments: ArgumentsT, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        try:
            async for item in self._run(arguments, ctx):
                yield item
        except (BridgeError, NotebookFileError) as exc:
            raise ToolFailed(f"{self.name} failed: {exc}") from None

    def _run(self, arguments: ArgumentsT, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        raise NotImplementedError

    async def _request(self, op: str, ctx: ToolExecutionContext, **kwargs: object) -> JsonObject:
        if self.link.bridge is None:
            raise ToolFailed(f"{self.name} failed: no notebook frontend is connected")
        result = await self.link.bridge.request(op, signal=ctx.signal, timeout_s=REQUEST_TIMEOUT_S, **kwargs)
        return result if isinstance(result, dict) else {}

    def _target_cell(self, cell_id: str, verb: str) -> str:
        """The `cell_id` argument (an outline's short id made whole); refused when naming the
        running %%penguin cell."""
        cell_id = resolve_cell_id(cell_id, self.link.sources)
        if cell_id == self.link.task.running_cell_id:
            raise ToolFailed(
                f"{self.name} refused: cell {cell_id} is the running %%penguin cell (this Task); it cannot be {verb}."
            )
        return cell_id


class ReadNotebookTool(_NotebookTool[ReadNotebookArguments]):
    declaration = READ_NOTEBOOK

    async def _run(self, arguments: ReadNotebookArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        start, end = arguments.start, arguments.end
        note = ""
        result: JsonObject | None = None
        if self.link.live:
            try:
                result = await self._request("read", ctx)
            except PageGone:  # the page went away: the saved file still answers
                result = None
        if result is not None:
            cells = json_objects(result.get("cells"))
            self.link.remember_sources(cells)
            if result.get("dirty"):
                note = "(live notebook; it has unsaved changes)"
        else:
            path = self.link.file_path()
            if not path:
                raise NotebookFileError("no notebook frontend is connected and the notebook's file is unknown")
            cells = read_saved_cells(path)
            note = f"(read from the saved file {path}: no notebook frontend is connected, so unsaved edits are missing and it may be stale)"
        answer = notebook_answer(
            cells, self.link.task.running_cell_id, note=note, start=start, end=end, cell_ids=arguments.cell_ids
        )
        yield partial_tool_call_output("delta", answer.text, ctx.tool_call_id)
        if answer.images:
            yield ToolResult(images=answer.images)


class InsertCellTool(_NotebookTool[InsertCellArguments]):
    declaration = INSERT_CELL

    async def _run(self, arguments: InsertCellArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        cell_type, source, index = arguments.cell_type, arguments.source, arguments.index
        task = self.link.task
        async with self.link.insert_lock:  # calls of one turn run concurrently: keep their order
            after = task.inserted[-1] if task.inserted else task.running_cell_id
            request: dict[str, object] = {"cell_type": cell_type, "source": source, "session_id": task.session_id}
            if index is not None:
                request["index"] = index
            elif after:
                request["after_id"] = after
            result = await self._request("insert", ctx, **request)
            cell_id = str(result.get("id", ""))
            task.inserted.append(cell_id)
            note_cell_change(
                self.link.shell, CellChange("insert", cell_id, label=cell_label(result.get("index"), source))
            )
        self.link.sources[cell_id] = source
        hint = " Run it with run_cell." if cell_type == "code" else ""
        yield partial_tool_call_output(
            "delta", f"Inserted a {cell_type} cell with id {cell_id} at index {result.get('index')}.{hint}", ctx.tool_call_id
        )


class EditCellTool(_NotebookTool[EditCellArguments]):
    declaration = EDIT_CELL

    async def _run(self, arguments: EditCellArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        cell_id, source = self._target_cell(arguments.cell_id, "edited"), arguments.source
        request: dict[str, object] = {"cell_id": cell_id, "source": source}
        shown = self.link.approved_sources.pop(ctx.tool_call_id, None)
        if shown is not None:  # the card showed the diff against this: apply only onto it
            request["expected_source"] = shown
        result = await self._request("edit", ctx, **request)
        old = str(result.get("old_source", ""))
        note_cell_change(
            self.link.shell, CellChange("edit", cell_id, source=old, label=cell_label(result.get("index"), old))
        )
        self.link.sources[cell_id] = source
        text = edit_cell_result(cell_id, result.get("index"), old, source)
        yield partial_tool_call_output("delta", text, ctx.tool_call_id)


class RunCellTool(_NotebookTool[RunCellArguments]):
    declaration = RUN_CELL

    async def _run(self, arguments: RunCellArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        cell_id = self._target_cell(arguments.cell_id, "run")
        current = await _live_source(self.link, cell_id)
        if (current if current is not None else self.link.sources.get(cell_id, "")).lstrip().startswith("%%penguin"):
            raise ToolFailed(f"run_cell refused: cell {cell_id} is a %%penguin cell; ask the user to run it.")
        before = await read_cell(self.link.bridge, cell_id)  # undo puts its outputs back
        before_namespace_change(self.link.shell)
        shown = current if current is not None else cell_source(before) or self.link.sources.get(cell_id)
        change = CellChange("run", cell_id, cell=before, label=cell_label(None, shown))
        note_cell_change(self.link.shell, change)
        try:
            result = await self._request("run", ctx, cell_id=cell_id)
            change.label = cell_label(result.get("index"), shown)
        except BridgeError:
            if ctx.signal is not None and ctx.signal.aborted:
                await self._stop(cell_id)
                yield ToolResult(stop_reason="aborted")
                return
            raise
        outputs = result.get("outputs") or []
        cell = {
            "index": result.get("index"),
            "id": cell_id,
            "cell_type": "code",
            "source": self.link.sources.get(cell_id, ""),
            "execution_count": result.get("execution_count"),
            "outputs": outputs,
        }
        rendered = cells_text([cell], None)
        errors = [o for o in json_objects(outputs) if o.get("output_type") == "error"]
        if result.get("status") != "ok" or errors:
            head = f"Cell {cell_id} raised: " + (error_text(errors[-1]).splitlines()[0] if errors else "an error")
            raise ToolFailed(head + "\n\n" + rendered.text)
        head = f"Ran cell {cell_id} (execution count {cell['execution_count']})."
        yield partial_tool_call_output("delta", head + "\n\n" + rendered.text, ctx.tool_call_id)
        yield ToolResult(stop_reason="completed", images=rendered.images or None)

    async def _stop(self, cell_id: str) -> None:
        """Stop the agent-run cell; give it a moment to unwind so the kernel stays usable."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RUN_GRACE_S
        while self.link.running.is_running(cell_id) and loop.time() < deadline:
            self.link.running.interrupt(cell_id)
            await asyncio.sleep(0.1)


class DeleteCellTool(_NotebookTool[DeleteCellArguments]):
    declaration = DELETE_CELL

    async def _run(self, arguments: DeleteCellArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        cell_id = self._target_cell(arguments.cell_id, "deleted")
        before = await read_cell(self.link.bridge, cell_id)  # undo puts it back whole
        result = await self._request("delete", ctx, cell_id=cell_id)
        index = result.get("index")
        label = cell_label(index, cell_source(before) if before is not None else result.get("source"))
        change = CellChange("delete", cell_id, cell=before, index=index if isinstance(index, int) else None, label=label)
        note_cell_change(self.link.shell, change)
        self.link.sources.pop(cell_id, None)
        if cell_id in self.link.task.inserted:
            self.link.task.inserted.remove(cell_id)
        text = f"Deleted cell {cell_id} (it was at index {result.get('index')})."
        source = result.get("source")
        if isinstance(source, str):  # the static card (and the model) see what went
            text += " Its source was:\n" + source
        yield partial_tool_call_output("delta", text, ctx.tool_call_id)


async def _live_source(link: NotebookLink, cell_id: str) -> str | None:
    """The cell's source as the frontend holds it now; None when it cannot say."""
    if not link.live or link.bridge is None:
        return None
    try:
        result = await link.bridge.request("source", cell_id=cell_id, timeout_s=PREVIEW_TIMEOUT_S)
    except BridgeError:
        return None
    source = result.get("source") if isinstance(result, dict) else None
    if isinstance(source, str):
        link.sources[cell_id] = source
        return source
    return None


def _saved_preview(link: NotebookLink, cell_id: str, why: str) -> CellPreview:
    """The cell as the saved file holds it (no frontend could say), `why` in its note."""
    path = link.file_path()
    if not path:
        return CellPreview(cell_id, None, live=False, note=f"{why}; the notebook's file is unknown")
    try:
        cells = read_saved_cells(path)
    except NotebookFileError as exc:
        return CellPreview(cell_id, None, live=False, note=f"{why}; {exc}")
    for cell in cells:
        if cell.get("id") == cell_id:
            return CellPreview(cell_id, str(cell.get("source", "")), live=False, note=f"{why}; read from {path}")
    return CellPreview(cell_id, None, live=False, note=f"{why}; the saved file {path} has no such cell")


async def cell_preview(link: NotebookLink | None, tool_call: OmniMessage) -> CellPreview | None:
    """The cell the approval card of a call with a `CellRef` argument shows (edit_cell,
    delete_cell, run_cell; None for other calls). When the call also writes the cell's source (a
    `NewText`: edit_cell), the source its card shows is remembered (by tool call id) as the
    edit's precondition."""
    payload = tool_call.payload
    if link is None or not isinstance(payload, ToolCallPayload):
        return None
    roles = declaration_of(payload.name).roles
    arguments = read_call_arguments(payload.arguments)
    cell_id = arguments.get(roles.cell) if roles.cell and isinstance(arguments, dict) else None
    if not isinstance(cell_id, str) or not cell_id:
        return None
    cell_id = resolve_cell_id(cell_id, link.sources)
    source = await _live_source(link, cell_id)
    if source is not None:
        preview = CellPreview(cell_id, source, live=True)
    else:
        why = "the notebook frontend did not answer" if link.live else "no notebook frontend is connected"
        preview = _saved_preview(link, cell_id, why)
    if roles.new is not None and preview.source is not None:
        link.approved_sources[payload.tool_call_id] = preview.source
    return preview


async def cells_by_id(link: NotebookLink | None, cell_ids: list[str]) -> dict[str, str]:
    """Each named cell (full or short id) as `{cell:ID}` expands it: source and outputs, bounded;
    through the bridge, else the saved file. Cells that cannot be found are left out (one logged line why)."""
    if link is None or not cell_ids:
        return {}
    try:
        if link.live and link.bridge is not None:
            result = await link.bridge.request("read", timeout_s=PREVIEW_TIMEOUT_S)
            cells = json_objects(result.get("cells")) if isinstance(result, dict) else []
        else:
            path = link.file_path()
            cells = read_saved_cells(path) if path else []
    except (BridgeError, NotebookFileError) as exc:
        log.warning("penguin: {cell:…} could not read the notebook: %s", exc)
        return {}
    known = [str(c.get("id") or "") for c in cells]
    out: dict[str, str] = {}
    for cell_id in cell_ids:
        full = resolve_cell_id(cell_id, known)
        cell = next((c for c in cells if c.get("id") == full), None)
        if cell is not None:
            try:
                text = cells_text([cell], None).text
            except (RecursionError, MemoryError) as exc:  # a saved cell's outputs are a stranger's data
                log.warning("penguin: {cell:%s} could not be shown: %s", cell_id, type(exc).__name__)
                continue
            out[cell_id] = text if len(text) <= EXPANDED_CELL_MAX else text[:EXPANDED_CELL_MAX] + "… [cell cut]"
    return out


def notebook_tools(link: NotebookLink | None) -> list[ToolRegistration]:
    """The notebook tools this session registers: all five with a live frontend (run_cell only
    when the kernel has subshells), else `read_notebook` alone, reading the saved file."""
    if link is None:
        return []
    classes: list[type[_NotebookTool[Any]]] = [ReadNotebookTool]
    if link.live:
        classes += [InsertCellTool, EditCellTool, *([RunCellTool] if link.can_run_cells else []), DeleteCellTool]
    return [_registration(cls, link) for cls in classes]


def _registration(cls: type[_NotebookTool[Any]], link: NotebookLink) -> ToolRegistration:
    # (its `definition` is set from its declaration when the class is made: a BuiltinTool)
    return ToolRegistration(cls.declaration, lambda _definition, _services: cast(BuiltinTool, cls(link)))


def notebook_tools_prompt(link: NotebookLink | None) -> str:
    """The system-prompt paragraph that says which notebook tools exist, and when to use them."""
    if link is None:
        return ""
    if not link.live:
        return (
            "Notebook tools: only read_notebook (it reads the saved .ipynb, which may be stale). insert_cell, "
            "edit_cell and run_cell are unavailable because no notebook frontend with the penguin extension is "
            "connected (for example under nbconvert, papermill or VS Code); use propose_cell to hand the user code "
            "to keep, and run_python for quick looks."
        )
    run = (
        "run_cell runs a cell as a real notebook cell while this %%penguin cell keeps running."
        if link.can_run_cells
        else "run_cell is unavailable (the kernel has no subshells: ipykernel >= 7.4 is needed)."
    )
    return (
        "Notebook tools: read_notebook shows the cells as the user sees them; insert_cell, edit_cell and "
        f"delete_cell change the notebook; {run} Prefer insert_cell + run_cell for work the user keeps "
        "(loading, cleaning, models, final plots): it stays in the notebook and Restart & Run All reproduces "
        "it. Use run_python only for quick looks whose results need not survive."
    )
