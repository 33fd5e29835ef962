"""Redaction at the sink (output/task_sink.py, output/output_router.py): a real kernel.

A configured secret (a `*_TOKEN` variable in the kernel's environment) reaches the browser only
as `[redacted:SINK_TEST_TOKEN]`, whatever published it on behalf of a Task: `run_python` code
printing it through a subprocess (`os.system`, `subprocess.run` inheriting fd 1/2), a thread's
`print` and its uncaught exception's traceback, `os.write(1/2, …)`, `display(…, metadata=…)`,
the key cut at every position by a subprocess that writes the first part, sleeps past the
kernel's flush interval and writes the rest; a tool name the model invents; an approval row's
reason; a thread the Task started printing after its cell ended. Every iopub message of the
cell (its whole JSON: streams, displays, comm messages with widget state) is searched for any 8
consecutive characters of the key, and so is the notebook a frontend would save from those
messages. The control: the same code in the user's own cell publishes the key as it is (the
user's own outputs are the notebook's).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import ExecResult, KernelHarness, kernel_env
from tests.support.live_text import widget_states
from tests.support.session import configure_model

pytestmark = [pytest.mark.kernel, pytest.mark.security]

KEY = "tok-sink-Qm7Vx2Lp9Rb4Wc8Zt3Nh"
VARIABLE = "SINK_TEST_TOKEN"
PLACEHOLDER = f"[redacted:{VARIABLE}]"
LEAK = 8  # no message may carry this many consecutive characters of the key


def _octal(text: str) -> str:
    """`text` as printf octal escapes (the code itself holds no piece of the key)."""
    return "".join(f"\\{ord(ch):03o}" for ch in text)


# The key cut at every position (before it, inside, after it), the halves written 0.3 s apart:
# longer than the kernel's 0.2 s stream flush, so the first would go out alone if not held back.
CUTS = [(_octal(KEY[:cut]), _octal(KEY[cut:])) for cut in range(len(KEY) + 1)]
LEAKY_CODE = f'''\
import os, subprocess, sys, threading, time
from IPython.display import display
tok = os.environ["{VARIABLE}"]
os.system('printf "system %s\\\\n" "${VARIABLE}"')
subprocess.run([sys.executable, "-c", "import os, sys; sys.stderr.write('subprocess ' + os.environ['{VARIABLE}'] + chr(10))"])
worker = threading.Thread(target=lambda: print("thread print", tok))
worker.start(); worker.join()
def boom():
    raise ValueError("thread failed with " + tok)
worker = threading.Thread(target=boom)
worker.start(); worker.join()
os.write(1, ("fd1 " + tok + "\\n").encode())
os.write(2, ("fd2 " + tok + "\\n").encode())
display({{"text/plain": "a display"}}, raw=True, metadata={{"note": "meta " + tok, tok: "as a key"}})
for first, rest in {CUTS!r}:
    os.system("printf 'split %s'; sleep 0.3; printf '%s end\\n'" % (first, rest))
time.sleep(0.5)
"ran"
'''


def _pieces(text: str) -> list[str]:
    return [KEY[i : i + LEAK] for i in range(len(KEY) - LEAK + 1) if KEY[i : i + LEAK] in text]


def _message_text(msg: dict[str, Any]) -> str:
    buffers = [bytes(b).decode("utf-8", "replace") for b in msg.get("buffers", [])]
    return json.dumps([msg["content"], msg.get("metadata", {}), buffers], default=str)


def _saved_notebook(result: ExecResult) -> str:
    """The notebook a frontend saves from the cell's messages: its outputs and widget state."""
    outputs = [
        nbformat.v4.output_from_msg(m)
        for m in result.messages
        if m["msg_type"] in ("stream", "display_data", "execute_result", "error")
    ]
    cell = nbformat.v4.new_code_cell("%%penguin", outputs=outputs)
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {"state": widget_states(result.messages)}
    }
    return nbformat.writes(notebook)


def _assert_nothing_leaks(result: ExecResult) -> None:
    assert result.reply is not None and result.reply["content"]["status"] == "ok", result.stderr
    leaks = [
        f"{msg['msg_type']}: {_message_text(msg)[:300]}" for msg in result.messages if _pieces(_message_text(msg))
    ]
    assert not leaks, f"{len(leaks)} messages carried a piece of the key:\n" + "\n".join(leaks)
    assert not _pieces(_saved_notebook(result)), "the saved notebook holds the key"


def _kernel(tmp_path: Path, server: ScriptedModelServer) -> KernelHarness:
    configure_model(Path(os.environ["PENGUIN_HOME"]), server)
    notebook_dir = tmp_path / "nb"
    notebook_dir.mkdir(exist_ok=True)
    env = kernel_env({VARIABLE: KEY})
    # ipykernel watches fd 1/2 (a real kernel's subprocess output) except under pytest.
    env.pop("PYTEST_CURRENT_TEST", None)
    kernel = KernelHarness(str(notebook_dir), env)
    assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return kernel


def test_what_run_python_code_prints_by_any_route_reaches_iopub_redacted(tmp_path):
    script = [
        {
            "tool_calls": [
                {"name": "run_python", "id": "call_leak", "arguments": {"description": "Leak", "code": LEAKY_CODE}}
            ]
        },
        {"text": "Done."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _kernel(tmp_path, server)
        try:
            control = kernel.execute(LEAKY_CODE, timeout=60)
            cell = kernel.execute("%%penguin --approve allow-all\nPrint it every way", timeout=120)
        finally:
            kernel.close()
    # The control: the user's own cell publishes the key by every route, untouched.
    assert control.reply["content"]["status"] == "ok", control.stderr
    for route in ("system ", "subprocess ", "thread print ", "thread failed with ", "fd1 ", "fd2 "):
        assert route + KEY in control.stdout + control.stderr, route
    assert any("meta " + KEY in _message_text(m) for m in control.of_type("display_data"))
    assert control.stdout.count("split " + KEY + " end") == len(CUTS)

    _assert_nothing_leaks(cell)
    shown = cell.stdout + cell.stderr
    for route in ("system ", "subprocess ", "thread print ", "thread failed with ", "fd1 ", "fd2 "):
        assert route + PLACEHOLDER in shown, f"{route!r} not shown redacted: {shown!r}"
    assert cell.stdout.count("split " + PLACEHOLDER + " end") == len(CUTS), "each cut key is redacted whole"
    assert "Traceback" in cell.stderr, "the thread's traceback is still shown"
    (display,) = [m for m in cell.of_type("display_data") if m["content"]["data"].get("text/plain") == "a display"]
    assert display["content"]["metadata"] == {"note": "meta " + PLACEHOLDER, PLACEHOLDER: "as a key"}
    assert KEY not in json.dumps(server.requests), "the model reads placeholders as before"


def test_a_tool_name_the_model_invents_reaches_the_widgets_redacted(tmp_path):
    script = [
        {"tool_calls": [{"name": f"lookup_{KEY}", "id": "call_named", "arguments": {}}]},
        {"text": "No such tool."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _kernel(tmp_path, server)
        try:
            named = kernel.execute("%%penguin --approve allow-all\nUse your tool", timeout=120)
        finally:
            kernel.close()
    _assert_nothing_leaks(named)
    named_states = json.dumps(widget_states(named.messages))
    assert f"lookup_{PLACEHOLDER}" in named_states, "the card names the tool, redacted"


def test_an_approval_reason_reaches_the_widgets_redacted(tmp_path):
    outside = tmp_path / f"outside-{KEY}"
    outside.mkdir()
    (outside / "notes.txt").write_text("notes\n")
    script = [
        {"tool_calls": [{"name": "read_file", "id": "call_read", "arguments": {"file_path": str(outside / "notes.txt")}}]},
        {"text": "Denied."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _kernel(tmp_path, server)
        clicked: list[str] = []

        def deny(msg: dict[str, Any], result: ExecResult) -> None:
            if msg["msg_type"] == "comm_open":
                for comm_id in result.buttons("Deny"):
                    if comm_id not in clicked:
                        clicked.append(comm_id)
                        kernel.click(comm_id)

        try:
            asked = kernel.execute("%%penguin --approve read-only\nRead the notes", on_message=deny, timeout=120)
        finally:
            kernel.close()
    _assert_nothing_leaks(asked)
    assert len(clicked) == 1, "the read outside the workspace asked"
    asked_values = [str(s.get("value", "")) for s in widget_states(asked.messages).values()]
    assert any("outside the workspace" in v and PLACEHOLDER in v for v in asked_values), asked_values


LATE_CODE = f'''\
import os, threading, time
def later():
    time.sleep(1.5)
    print("late print", os.environ["{VARIABLE}"])
threading.Thread(target=later, daemon=True).start()
"started"
'''


def test_a_thread_the_task_started_is_redacted_after_its_cell_ended(tmp_path):
    script = [
        {"tool_calls": [{"name": "run_python", "id": "call_late", "arguments": {"description": "Later", "code": LATE_CODE}}]},
        {"text": "Started."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _kernel(tmp_path, server)
        try:
            cell = kernel.execute("%%penguin --approve allow-all\nStart it", timeout=120)
            after = kernel.execute("import time; time.sleep(3)", timeout=60)  # the user's next cell
        finally:
            kernel.close()
    _assert_nothing_leaks(cell)
    _assert_nothing_leaks(after)
    assert "late print " + PLACEHOLDER in cell.stdout + after.stdout


def test_the_headers_first_state_is_redacted(tmp_path):
    """The header's widgets are built before the Task starts: a workspace whose path holds the
    key is shown redacted from the very first comm_open on."""
    workspace = tmp_path / f"ws-{KEY}"
    workspace.mkdir()
    with ScriptedModelServer([{"text": "Hello."}]) as server:
        kernel = _kernel(tmp_path, server)
        try:
            cell = kernel.execute(f"%%penguin --workspace {workspace}\nSay hello", timeout=120)
        finally:
            kernel.close()
    # (the user's own typed code, echoed as execute_input, holds the path as typed)
    cell.messages = [m for m in cell.messages if m["msg_type"] != "execute_input"]
    _assert_nothing_leaks(cell)
    assert f"ws-{PLACEHOLDER}" in json.dumps(widget_states(cell.messages)), "the header shows the workspace, redacted"


def test_what_a_penguin_line_command_prints_is_redacted(tmp_path):
    """`%penguin …` output goes out through the same sink as a Task's: a data root whose path
    holds the key is printed by `%penguin config` as `[redacted:…]`."""
    root = tmp_path / f"root-{KEY}"
    env = kernel_env({VARIABLE: KEY, "PENGUIN_HOME": str(root)})
    env.pop("PYTEST_CURRENT_TEST", None)
    kernel = KernelHarness(str(tmp_path), env)
    try:
        assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
        shown = kernel.execute("%penguin config", timeout=60)
    finally:
        kernel.close()
    shown.messages = [m for m in shown.messages if m["msg_type"] != "execute_input"]
    _assert_nothing_leaks(shown)
    assert f"root-{PLACEHOLDER}" in shown.stdout, shown.stdout
