"""Undo's journals on real objects and real files (issue 30, docs/undo.md): in-place changes of
pandas / numpy / polars objects and containers are seen by the bounded fingerprint and restored
from the copy under the limit or named above it; the file journal is private, skips credential
files, is pruned by age and deleted with its session; without a frontend the notebook part says
what it could not undo."""

from __future__ import annotations

import asyncio
import os
import stat
import time

import numpy as np
import pandas as pd
import polars as pl
import pytest

from penguin_jupyter.environment.file_journal import (
    OWNER_LOCK,
    FileJournal,
    open_file_journal,
    prune_old_journals,
)
from penguin_jupyter.notebook.undo.fingerprint import COPY_LIMIT_BYTES
from penguin_jupyter.notebook.undo.namespace_journal import NamespaceBaseline
from penguin_jupyter.notebook.undo.notebook_journal import CellChange, restore_cells
from penguin_jupyter.notebook.undo.undo_stack import MAX_TASKS, TaskJournal, UndoRefused, UndoStack


def _round_trip(namespace: dict, change) -> tuple[NamespaceBaseline, object]:
    baseline = NamespaceBaseline.take(namespace)
    change(namespace)
    baseline.settle(namespace)
    return baseline, baseline.restore(namespace)


def test_small_objects_changed_in_place_are_restored_from_the_copy():
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    arr = np.arange(10.0)
    frame = pl.DataFrame({"a": [1, 2, 3]})
    items, table, tags = [1, 2], {"k": 1}, {"t"}
    ns = {"df": df, "arr": arr, "frame": frame, "items": items, "table": table, "tags": tags}

    def change(ns):
        ns["df"].loc[1, "a"] = 99
        ns["arr"][3] = -1
        ns["frame"].insert_column(1, pl.Series("c", [7, 8, 9]))
        ns["items"].append(3)
        ns["table"]["k"] = 2
        ns["tags"].add("u")

    baseline, report = _round_trip(ns, change)
    assert sorted(baseline.mutated) == ["arr", "df", "frame", "items", "table", "tags"]
    assert sorted(report.restored) == sorted(baseline.mutated) and report.not_restored == []
    assert ns["df"].equals(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    assert ns["arr"][3] == 3.0 and ns["frame"].columns == ["a"]
    # containers come back in place: other references see the old contents again
    assert ns["items"] is items and items == [1, 2] and table == {"k": 1} and tags == {"t"}


def test_large_objects_are_fingerprinted_not_copied_and_named():
    rows = COPY_LIMIT_BYTES // 8 * 4
    big = pd.DataFrame({"v": np.arange(rows, dtype=np.float64)})
    ns = {"big": big, "arr": np.zeros(rows), "same": pd.DataFrame({"v": np.arange(rows, dtype=np.float64)})}
    baseline = NamespaceBaseline.take(ns)
    assert baseline.copies == {}
    del big["v"]
    ns["arr"][rows - 1] = 1.0  # the last element is always in the sample
    baseline.settle(ns)
    assert sorted(baseline.mutated) == ["arr", "big"]
    report = baseline.restore(ns)
    assert dict(report.not_restored) == {
        "big": "changed in place — not restored (too large to copy)",
        "arr": "changed in place — not restored (too large to copy)",
    }


def test_bound_rebound_and_deleted_names_come_back_by_reference():
    keep = pd.DataFrame({"a": [1]})
    ns = {"x": keep, "y": 2, "_hidden": 1}

    def change(ns):
        ns["x"] = "rebound"
        del ns["y"]
        ns["df2"] = pd.DataFrame()
        ns["_"] = "ipython's"

    _, report = _round_trip(ns, change)
    assert ns["x"] is keep and ns["y"] == 2 and "df2" not in ns and ns["_"] == "ipython's"
    assert report.removed == ["df2"] and sorted(report.restored) == ["x", "y"]


def test_a_name_changed_again_after_the_task_is_left_alone():
    ns = {"x": 1}
    baseline = NamespaceBaseline.take(ns)
    ns["x"] = 2
    ns["new"] = "task"
    baseline.settle(ns)
    ns["x"] = 3  # the user's own cell, after the Task
    ns["new"] = "user"
    report = baseline.restore(ns)
    assert ns == {"x": 3, "new": "user"}
    assert dict(report.not_restored) == {"x": "changed again after the Task", "new": "changed again after the Task"}


def test_file_journal_is_private_skips_credentials_and_restores_bytes(tmp_path):
    workspace = tmp_path / "work"
    workspace.mkdir()
    data = workspace / "data.bin"
    data.write_bytes(b"\x00\xff old \r\n")
    env = workspace / ".env"
    env.write_bytes(b"KEY=value\n")
    journal = open_file_journal(tmp_path / "undo", "session-1")
    journal.begin("task-1")
    for path in (data, env, workspace / "created.txt"):
        journal.before_write(str(path), str(workspace))
    journal.before_write(str(data), str(workspace))  # a second write of the same path keeps the first content
    journal.end()
    saved = [p for p in (tmp_path / "undo").rglob("*") if p.is_file() and p.name != OWNER_LOCK]
    assert [p.read_bytes() for p in saved] == [b"\x00\xff old \r\n"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in saved} == {0o600}
    assert {stat.S_IMODE(p.parent.stat().st_mode) for p in saved} == {0o700}
    data.write_bytes(b"new")
    env.write_bytes(b"KEY=other\n")
    (workspace / "created.txt").write_text("made by the task")
    done = journal.restore("task-1")
    assert data.read_bytes() == b"\x00\xff old \r\n" and not (workspace / "created.txt").exists()
    assert done.not_restored == [(str(env), "a .env file is never journaled")]
    assert not (tmp_path / "undo" / "session-1" / "task-1").exists()
    journal.dispose()
    assert not (tmp_path / "undo" / "session-1").exists()
    assert journal.restore("task-1").restored == []


def test_old_journals_are_pruned(tmp_path):
    old, fresh = tmp_path / "session-old", tmp_path / "session-new"
    old.mkdir()
    fresh.mkdir()
    past = time.time() - 2 * 24 * 3600
    os.utime(old, (past, past))
    prune_old_journals(tmp_path)
    assert not old.exists() and fresh.exists()
    assert isinstance(open_file_journal(tmp_path, "session-x"), FileJournal)


def test_without_a_frontend_the_notebook_part_says_what_it_could_not_undo():
    changes = [CellChange("insert", "c1"), CellChange("edit", "c2", source="old")]
    report = asyncio.run(restore_cells(changes, None))
    assert report.restored == []
    assert report.not_restored == [
        "2 notebook changes (no notebook frontend with the penguin extension is connected: reopen the "
        "notebook and undo again)"
    ]


def test_the_stack_forgets_tasks_beyond_its_limit_and_releases_their_objects(tmp_path):
    stack = UndoStack()
    files = open_file_journal(tmp_path / "undo", "session-1")
    target = tmp_path / "kept.txt"
    target.write_text("before")
    for n in range(MAX_TASKS + 5):
        stack.current = TaskJournal(f"task-{n}-000000", "session-1", None, f"Task {n}", files=files)
        files.begin(stack.current.task_id)
        files.before_write(str(target))
        stack.before_namespace_change({"big": [n]})
        stack.end({"big": [n], "new": n}, [])
    assert len(stack.tasks) == MAX_TASKS and stack.tasks[0].task_id == "task-5-000000"
    assert sorted(p.name for p in (tmp_path / "undo" / "session-1").iterdir() if p.name != OWNER_LOCK) == sorted(
        t.task_id for t in stack.tasks
    )
    with pytest.raises(UndoRefused, match="older than the last 20 Tasks"):
        stack.choose("task-0-000000")


class _Page:
    """What restore_cells needs of a connected notebook page: it answers every request (a
    stand-in; the real page's bridge is exercised by tests/browser/test_browser_undo.py)."""

    connected = True

    def __init__(self) -> None:
        self.requests: list[str] = []

    async def request(self, op: str, **_args: object) -> dict:
        self.requests.append(op)
        return {}


def test_the_report_names_cells_by_position_and_first_line_never_by_id():
    """Issue 39: the line listed raw cell UUIDs nobody sees in the notebook."""
    from penguin_jupyter.environment.file_journal import FileRestore
    from penguin_jupyter.notebook.undo.namespace_journal import NamespaceReport
    from penguin_jupyter.notebook.undo.notebook_journal import cell_label
    from penguin_jupyter.notebook.undo.undo_report import report_line

    assert cell_label(5, "\n  ## Penguins by species\nmore") == "cell 6 “## Penguins by species”"
    assert cell_label(0, ["import pandas as pd\n", "x = 1"]) == "cell 1 “import pandas as pd”"
    assert cell_label(2, "") == "cell 3 (empty)" and cell_label(None, None) == "a cell"
    assert cell_label(1, "x" * 80) == "cell 2 “" + "x" * 39 + "…”"
    changes = [
        CellChange("insert", "3f2a9c1e-0b7d-4f7e-9a51-6c0d2e7b8a11", label=cell_label(5, "## Penguins")),
        CellChange("edit", "a9e1", source="a = 1", label=cell_label(2, "a = 1")),
        CellChange("run", "b7c2", cell={"source": "print(1)"}, label=cell_label(3, "print(1)")),
        CellChange("delete", "c0d3", cell={"source": "old"}, index=4, label=cell_label(4, "old")),
    ]
    page = _Page()
    cells = asyncio.run(restore_cells(changes, page))  # type: ignore[arg-type]
    assert page.requests == ["restore_cell", "restore_cell", "edit", "delete"]  # newest first
    line = report_line(cells, NamespaceReport(), FileRestore(), [])
    assert line == (
        "penguin: undone — cells: deleted cell 5 “old” back, outputs of cell 4 “print(1)” put back, "
        "source of cell 3 “a = 1” put back, removed the inserted cell 6 “## Penguins”"
    )
    assert "3f2a9c1e" not in line


def test_a_task_that_changed_nothing_is_not_offered_undo(tmp_path):
    """Issue 39: Undo was offered on a Task that changed nothing ("undone — nothing needed
    restoring", its transcript then marked undone)."""
    stack = UndoStack()
    files = open_file_journal(tmp_path / "undo", "session-1")
    changed = TaskJournal("task-1-000000", "session-1", None, "Bind z", files=files)
    stack.current = changed
    files.begin(changed.task_id)
    stack.before_namespace_change({"x": 1})
    assert stack.end({"x": 1, "z": 5}, []) is changed
    for n, (namespace, commands) in enumerate([({"x": 1, "z": 5}, []), ({"x": 1, "z": 5}, ["ls -la"])], start=2):
        quiet = TaskJournal(f"task-{n}-000000", "session-1", None, "Look", files=files)
        stack.current = quiet
        files.begin(quiet.task_id)
        stack.before_namespace_change(namespace)  # it ran code that changed nothing
        assert stack.end(dict(namespace), commands) is None
    assert stack.tasks == [changed] and stack.choose(None) is changed
