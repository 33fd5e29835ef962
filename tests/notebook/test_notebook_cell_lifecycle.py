"""A `Cell`'s life without a kernel (plain-text view, real Session, scripted model server): entering
makes it the running cell, its settings hold while it runs and end with its exit, exit tears
everything down even when the body fails, and a second cell cannot enter while one runs."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from penguin_jupyter.notebook.runtime.approval import CELL_ENDED_NOTE
from penguin_jupyter.notebook.runtime.cell import Cell
from penguin_jupyter.notebook.runtime.kernel_runtime import ALREADY_RUNNING, CellAlreadyRunning, KernelRuntime
from penguin_jupyter.notebook.runtime.options import parse_cell_options
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.session import configure_model


@pytest.fixture
async def runtime(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdout", io.StringIO())
    with ScriptedModelServer([{"text": "Done."}, {"text": "Again."}]) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        runtime = KernelRuntime(None)
        runtime.sessions.python_timeout_s = 30  # `%penguin python-timeout 30`
        await runtime.sessions.start_new(str(tmp_path), None)
        yield runtime
        runtime.dispose()


def _cell(runtime: KernelRuntime, options: str) -> Cell:
    session = runtime.sessions.session
    assert session is not None
    return Cell(runtime, session, parse_cell_options(options), "Do it.")


async def test_a_cells_settings_hold_while_it_runs_and_end_with_it(runtime):
    cell = _cell(runtime, "--approve read-only --python-timeout 2.5")
    assert runtime.current is None and runtime.python_timeout_ms() == 30_000
    async with cell:
        assert runtime.current is cell
        assert runtime.python_timeout_ms() == 2500  # the cell's option wins while it runs
        await cell.run_task()
    assert runtime.current is None
    assert runtime.python_timeout_ms() == 30_000  # ended with the cell
    assert cell.approval.ended and cell.approval.mode == "read-only"
    assert cell.record.status() == "completed"
    assert [m.payload.text for m in cell.record.messages if m.kind == "text"] == ["Do it.", "Done."]
    assert runtime.sessions.last_usage is not None


async def test_exit_tears_down_even_when_the_body_fails(runtime):
    cell = _cell(runtime, "")
    with pytest.raises(RuntimeError, match="boom"):
        async with cell:
            raise RuntimeError("boom")
    assert runtime.current is None and cell.approval.ended
    assert cell.feed is not None and not cell.feed.attached
    later = _cell(runtime, "--approve allow-all")  # the kernel goes on
    async with later:
        await later.run_task()
    assert later.record.status() == "completed"


async def test_a_second_cell_cannot_enter_while_one_runs(runtime):
    first, second = _cell(runtime, ""), _cell(runtime, "")
    async with first:
        with pytest.raises(CellAlreadyRunning, match=ALREADY_RUNNING):
            runtime.enter(second)
        assert runtime.current is first


async def test_open_rows_are_denied_at_exit(runtime):
    from penguin_jupyter.notebook.live.approval_row import ApprovalRow

    cell = _cell(runtime, "")
    async with cell:
        row = ApprovalRow(cell.loop, "exec_command")
        cell.approval.asker.open_rows.append(row)
    assert row.future.result() == "deny" and CELL_ENDED_NOTE in row.status.value


async def test_a_cell_is_built_without_effects_and_started_by_open(runtime):
    """The constructor keeps what the cell is given; `open()` (or entering) starts the rest."""
    announced = set(runtime.sessions.sandbox_announced)
    cell = _cell(runtime, "--approve auto")
    assert not cell.opened and not hasattr(cell, "view") and not hasattr(cell, "approval")
    assert runtime.sessions.sandbox_announced == announced  # no once-per-kernel line used up
    cell.open()
    assert cell.opened and cell.approval.mode in ("auto", "ask") and cell.info["approval_mode"] == cell.mode
    view = cell.view
    cell.open()  # once
    assert cell.view is view
    async with cell:
        await cell.run_task()
    assert cell.record.status() == "completed"
