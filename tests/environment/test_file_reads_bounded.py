"""Undo's journal and the file tools read only regular files, with a bounded read (issue 36,
defect 11).

As an attacker (a cloned repository ships `notes.md -> /dev/zero`, or a FIFO; one approved
`write_file` / `edit_file` is enough), each call runs in a child process capped at 512 MiB of
address space and 60 s, with the real tools and the real journal:
* on 3758335 `stat()` followed the link (size 0), passed the 64 MB check, and the journal's,
  `write_file`'s (previous content, for the diff) and `edit_file`'s unbounded reads ran out of
  memory; a FIFO hung the call until the child was killed;
* now the journal keeps the link as a link (never reading its target) and says a FIFO is not
  journaled, `write_file` writes without a diff, and `edit_file` refuses in one line naming
  what the path is.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

MEMORY_CAP = 512 * 1024 * 1024

CHILD = r"""
import asyncio, json, sys
from pathlib import Path
from penguin_jupyter.environment.file_journal import FILE_JOURNAL_KEY, open_file_journal
from penguin_jupyter.interfaces import EnvironmentServices
from tests.support.env import final, make_env, run_call, tool_entry

workspace, journals = sys.argv[1], Path(sys.argv[2])
journal = open_file_journal(journals, "session-1")
journal.begin("task-1")
env = make_env(
    workspace, tool_entry("write_file"), tool_entry("edit_file"),
    services=EnvironmentServices(extra={FILE_JOURNAL_KEY: journal}),
)
out = {}
for name, args in (
    ("write_file", {"file_path": "notes.md", "content": "# Notes\n"}),
    ("edit_file", {"file_path": "table.md", "old_string": "a", "new_string": "b"}),
):
    payload = final(asyncio.run(run_call(env, name, args)))
    out[name] = [payload.output, payload.stop_reason]
journal.end()
out["journal"] = [[Path(e.path).name, e.link, e.skipped, e.saved is not None] for e in journal.entries("task-1")]
print(json.dumps(out))
"""


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _run(workspace: Path, journals: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(workspace), str(journals)],
            env=env, capture_output=True, text=True, timeout=60, preexec_fn=_cap,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail("a file tool hung on a FIFO")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_symlink_to_dev_zero_is_journaled_as_a_link_and_never_read(tmp_path):
    workspace = tmp_path / "repo"
    workspace.mkdir()
    os.symlink("/dev/zero", workspace / "notes.md")
    os.symlink("/dev/zero", workspace / "table.md")
    out = _run(workspace, tmp_path / "undo")
    output, stop = out["write_file"]
    assert output.startswith('Overwrote "notes.md"') and "\n" not in output and stop == "completed"
    assert out["edit_file"] == ['Cannot edit "table.md": it is a character device, not a regular file.', "failed"]
    assert out["journal"] == [["notes.md", "/dev/zero", None, False]]
    assert (workspace / "notes.md").read_text() == "# Notes\n"


def test_a_fifo_is_not_opened_by_the_journal_or_the_file_tools(tmp_path):
    workspace = tmp_path / "repo"
    workspace.mkdir()
    os.mkfifo(workspace / "notes.md")
    os.mkfifo(workspace / "table.md")
    out = _run(workspace, tmp_path / "undo")
    output, stop = out["write_file"]
    assert output.startswith('Overwrote "notes.md"') and stop == "completed"
    assert out["edit_file"] == ['Cannot edit "table.md": it is a FIFO (named pipe), not a regular file.', "failed"]
    assert out["journal"] == [["notes.md", None, "it was a FIFO (named pipe), not a regular file: not journaled", False]]
    assert (workspace / "notes.md").read_text() == "# Notes\n"
