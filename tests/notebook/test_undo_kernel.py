"""Undo a Task in a real kernel (issue 30): `%%penguin` cells against the ScriptedModelServer, the
Task's run_python code binding, rebinding, deleting and mutating variables and its file tools
writing, editing and creating files; `%penguin undo` puts them back, a second undo reverts the
Task before, and the next model request carries the undo note (read from `server.requests`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model, request_messages

pytestmark = pytest.mark.kernel
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"

SETUP = (
    "x = 1\n"
    "y = 2\n"
    "keep_ref = lst = [1, 2, 3]\n"
    "big = list(range(20_000))\n"
)
TASK_CODE = (
    "import pandas as pd\n"
    "df2 = pd.DataFrame({'a': [1, 2]})\n"
    "x = 10\n"
    "del y\n"
    "lst.append(4)\n"
    "big.append(-1)\n"
)
EDITED = "alpha\r\nbeta ünïcode \u202e\nlast line without newline".encode()
OVERWRITTEN = b"# old report\n\x00binary \xff\xfe\x01\n"
ENV_FILE = b"TOKEN=local-value\n"


def _call(call_id: str, name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "id": call_id, "arguments": arguments}]}


def _ok(result) -> None:
    assert result.reply["content"]["status"] == "ok", (result.stderr, result.of_type("error"))


def _undo_states(result) -> list[dict]:
    return [b[TRANSCRIPT_MIME].get("undo") for b in result.final_bundles()]


def test_undo_restores_variables_and_files_and_tells_the_model(tmp_path):
    script = [
        # Task 0: binds z
        _call("call_z", "run_python", description="Bind z", code="z = 5"),
        {"text": "z is bound."},
        # Task 1: variables and files
        _call("call_py", "run_python", description="Change variables", code=TASK_CODE),
        {
            "tool_calls": [
                {"name": "write_file", "id": "call_new", "arguments": {"file_path": "new.txt", "content": "brand new\n"}},
                {"name": "write_file", "id": "call_over", "arguments": {"file_path": "report.md", "content": "# new\n"}},
                {"name": "edit_file", "id": "call_edit", "arguments": {"file_path": "data.txt", "old_string": "beta", "new_string": "BETA"}},
                {"name": "write_file", "id": "call_env", "arguments": {"file_path": ".env.local", "content": "TOKEN=changed\n"}},
                {"name": "exec_command", "id": "call_cmd", "arguments": {"cmd": "echo hi > from_command.txt"}},
            ]
        },
        {"text": "Done."},
        # Task 2: after the undos
        {"text": "Understood."},
    ]
    with ScriptedModelServer(script) as server:
        root = Path(os.environ["PENGUIN_HOME"])
        configure_model(root, server)
        work = tmp_path / "work"
        work.mkdir()
        (work / "data.txt").write_bytes(EDITED)
        (work / "report.md").write_bytes(OVERWRITTEN)
        os.chmod(work / "report.md", 0o640)
        (work / ".env.local").write_bytes(ENV_FILE)
        kernel = KernelHarness(str(work), kernel_env({"JPY_SESSION_NAME": str(work / "undo.ipynb")}))
        try:
            _ok(kernel.execute("%load_ext penguin_jupyter"))
            _ok(kernel.execute(SETUP))
            _ok(kernel.execute("%%penguin --approve allow-all\nBind z."))
            task = kernel.execute("%%penguin --approve allow-all\nChange things.")
            _ok(task)
            journal = sorted((root / "default_project").rglob("undo/*/*/*"))
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in journal}
            dir_modes = {stat.S_IMODE(p.parent.stat().st_mode) for p in journal}
            journaled = sorted(p.read_bytes() for p in journal)
            first = kernel.execute("%penguin undo")
            check = kernel.execute(
                "print(x, y, 'df2' in globals(), lst, lst is keep_ref, len(big), 'z' in globals())"
            )
            second = kernel.execute("%penguin undo")
            after_second = kernel.execute("print('z' in globals(), x, y)")
            third = kernel.execute("%penguin undo")
            nxt = kernel.execute("%%penguin --approve allow-all\nWhat now?")
            _ok(nxt)
            session_dirs = [p for p in (root / "default_project").rglob("undo/*") if p.is_dir()]
            _ok(kernel.execute("%penguin new"))
            left_after_new = [p for p in session_dirs if p.exists()]
            kernel.km.restart_kernel(now=True)
            kernel.kc.wait_for_ready(timeout=90)
            _ok(kernel.execute("%load_ext penguin_jupyter"))
            restarted = kernel.execute("%penguin undo")
        finally:
            kernel.close()

    # the journal: the previous bytes of the two existing files written, private, no credential file
    assert journaled == sorted([EDITED, OVERWRITTEN])
    assert set(modes.values()) == {0o600} and dir_modes == {0o700}

    # first undo: the report line says what came back and what did not
    _ok(first)
    line = first.stdout.strip()
    assert line.startswith("penguin: undone — "), line
    assert "variables restored: x, y" in line
    assert "variables removed: pd, df2" in line
    assert "files restored: data.txt, report.md" in line
    assert "files removed: new.txt" in line
    assert "big (changed in place — not restored (too large to copy))" in line
    assert ".env.local (a .env.local file is never journaled)" in line
    assert "commands run, their effects not undone: `echo hi > from_command.txt`" in line
    assert "\n" not in line
    # the variables: x, y back by reference, df2 gone, the list restored in place, big reported
    assert check.stdout == "1 2 False [1, 2, 3] True 20001 True\n"
    # the files: byte for byte, the mode kept, the created one removed, the command's left
    assert (work / "data.txt").read_bytes() == EDITED
    assert (work / "report.md").read_bytes() == OVERWRITTEN
    assert stat.S_IMODE((work / "report.md").stat().st_mode) == 0o640
    assert not (work / "new.txt").exists()
    assert (work / ".env.local").read_bytes() == b"TOKEN=changed\n"
    assert (work / "from_command.txt").exists()
    # the undone Task's transcript is re-shown marked "undone" with the report line
    marks = [s for s in _undo_states(first) if s and s["state"] == "undone"]
    assert marks and marks[-1]["note"] == line
    assert any("undone" in b["text/plain"].splitlines()[0] for b in first.final_bundles())
    # and the Task before is the Undo button's target again
    assert any(s and s["state"] == "available" for s in _undo_states(first))

    # second undo reverts the Task before; a third has nothing left
    assert second.stdout.strip() == "penguin: undone — variables removed: z"
    assert after_second.stdout == "False 1 2\n"
    assert third.stdout == "" and "nothing to undo" in third.stderr

    # the next request tells the model, as a harness notice, what was undone
    last = request_messages(server.requests[-1])
    role, text = last[-1]
    assert role == "user" and text.startswith("What now?"), last[-1]
    notes = text.split("[The user undid the previous Task")[1:]
    assert len(notes) == 2, text
    assert "“Change things.”" in notes[0] and "variables removed: pd, df2" in notes[0]
    assert "Not undone:" in notes[0] and "echo hi > from_command.txt" in notes[0]
    assert "“Bind z.”" in notes[1]

    # the session's journal is deleted when the session is disposed
    assert session_dirs and left_after_new == []
    # after a kernel restart there is nothing to undo, and it says why
    assert "after a kernel restart" in restarted.stderr and restarted.stdout == ""


def test_undo_button_target_moves_and_refuses_an_older_task(tmp_path):
    """Only the most recent not-undone Task can be undone by id (the transcript's button)."""
    script = [
        _call("a", "run_python", description="a", code="a = 1"),
        {"text": "ok"},
        _call("b", "run_python", description="b", code="b = 2"),
        {"text": "ok"},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(tmp_path), kernel_env())
        try:
            _ok(kernel.execute("%load_ext penguin_jupyter"))
            first = kernel.execute("%%penguin --approve allow-all\nBind a.")
            second = kernel.execute("%%penguin --approve allow-all\nBind b.")
            first_id = _undo_states(first)[-1]["task_id"]
            second_id = _undo_states(second)[-1]["task_id"]
            refused = kernel.execute(f"%penguin undo --task {first_id}")
            bad = kernel.execute("%penguin undo --task")
            done = kernel.execute(f"%penguin undo --task {second_id}")
            again = kernel.execute(f"%penguin undo --task {second_id}")
            check = kernel.execute("print('a' in globals(), 'b' in globals())")
        finally:
            kernel.close()
    # the second Task's cell shows only its own transcript (the first one's button is disabled
    # through the bridge, tested in the browser); undoing the first by id is refused, saying why
    assert {s["task_id"] for s in _undo_states(second)} == {second_id}
    assert "the later Task “Bind b.” must be undone first" in refused.stderr and refused.stdout == ""
    assert bad.stderr.strip() == "penguin: usage: %penguin undo [--task ID]"
    assert done.stdout.strip() == "penguin: undone — variables removed: b"
    assert "already undone" in again.stderr
    assert check.stdout == "True False\n"
    assert json.dumps(_undo_states(done)).count('"undone"') >= 1
