"""A live kernel's undo journal is never pruned by another kernel (issue 36, defect 12).

As an attacker (or just a second notebook): a kernel has journaled a file for a Task that is
more than 24 hours old — a notebook left open over a weekend — and another process starts a
session. On 3758335 that process deleted every journal older than 24 hours without asking whether
its kernel still ran, and Undo then failed with a bare `No such file or directory`. Now a journal
holds an owner lock while its kernel lives: the other process leaves it alone (and Undo restores
the file), a journal whose process is gone is pruned, and when a journal's data is missing all
the same, Undo says which file and why in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from penguin_jupyter.environment.file_journal import open_file_journal
from tests.support.paths import REPO_ROOT

OPEN_ANOTHER = "import sys; from pathlib import Path; from penguin_jupyter.environment.file_journal import open_file_journal; open_file_journal(Path(sys.argv[1]), sys.argv[2])"


def _another_process_opens(parent: Path, session_id: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    subprocess.run([sys.executable, "-c", OPEN_ANOTHER, str(parent), session_id], env=env, check=True, timeout=60)


def _age(folder: Path, seconds: float) -> None:
    past = time.time() - seconds
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (past, past), follow_symlinks=False)


def test_another_process_never_prunes_a_live_journal_and_prunes_a_dead_ones(tmp_path):
    parent = tmp_path / "undo"
    data = tmp_path / "work" / "results.csv"
    data.parent.mkdir()
    data.write_text("before\n")
    journal = open_file_journal(parent, "session-live")
    journal.begin("task-1")
    journal.before_write(str(data), str(data.parent))
    journal.end()
    data.write_text("after the task\n")
    _age(parent / "session-live", 3 * 24 * 3600)  # the notebook stayed open over a long weekend

    _another_process_opens(parent, "session-other")  # a second kernel starts a session
    assert (parent / "session-live").is_dir(), "a live kernel's journal was pruned by another process"
    done = journal.restore("task-1")
    assert done.restored == [str(data)] and data.read_text() == "before\n"

    # The other process has exited: its journal is pruned at the next open, however fresh.
    assert (parent / "session-other").is_dir()
    open_file_journal(parent, "session-third")
    assert not (parent / "session-other").exists()
    assert (parent / "session-live").is_dir()
    journal.dispose()


def test_missing_journal_data_is_said_plainly(tmp_path):
    parent = tmp_path / "undo"
    data = tmp_path / "work" / "model.json"
    data.parent.mkdir()
    data.write_text('{"a": 1}\n')
    journal = open_file_journal(parent, "session-1")
    journal.begin("task-1")
    journal.before_write(str(data), str(data.parent))
    journal.end()
    for saved in (parent / "session-1" / "task-1").iterdir():
        saved.unlink()  # deleted behind the kernel's back (an older version's pruning, a cleanup)
    done = journal.restore("task-1")
    assert done.restored == []
    [(path, why)] = done.not_restored
    assert path == str(data)
    assert why == f"its previous content, kept in the undo journal {parent / 'session-1'}, was deleted"
    assert "No such file" not in why and "\n" not in why
    journal.dispose()
