"""An upgrade that moves what the kernel side relies on (docs/seams.md), simulated in a real kernel
before `%load_ext`: the protection still holds, or the cell says it is off and the work it
guards does not run; `%penguin status` names the seam.

* ipykernel renames `OutStream._flush_buffers` (a renamed copy of ipykernel first on the kernel's
  PYTHONPATH): a configured token printed in two writes 0.3 s apart still reaches iopub only
  redacted, whole (on 3758335 the hold-back sat on that private method, and `split tok-sink-Qm7Vx`
  + `2Lp9Rb4Wc8Zt3Nh end` reached iopub raw, nothing said). After the Task nothing it installed
  is left in place: sys.stdout is the kernel's stream, the display publisher and formatter have
  no penguin wrapper, `threading.Thread.start` and polars were never replaced.
* jupyter_client renames `Session.send`'s `content` parameter: `%load_ext` says the sink is off,
  a `%%penguin` cell says it in one line and sends no request (fail closed).
* IPython renames `DisplayPublisher.publish`'s `data` parameter: `%load_ext` says display
  capture is off, and `run_python` runs no code, so its hostile display never reaches the page (on
  3758335 the wrapper found no bundle to rewrite and passed every remote URL through).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import ExecResult, KernelHarness, kernel_env
from tests.support.run_python_no_fetch import hostile_display_code
from tests.support.session import configure_model
from tests.support.upgrade import renamed_package

pytestmark = [pytest.mark.kernel, pytest.mark.security, pytest.mark.seams]

KEY = "tok-sink-Qm7Vx2Lp9Rb4Wc8Zt3Nh"
VARIABLE = "SINK_TEST_TOKEN"
PLACEHOLDER = f"[redacted:{VARIABLE}]"
LEAK = 8


def _octal(text: str) -> str:
    return "".join(f"\\{ord(ch):03o}" for ch in text)


CUTS = [(_octal(KEY[:cut]), _octal(KEY[cut:])) for cut in (5, 14, 23)]
SPLIT_CODE = f'''\
import os, time
for first, rest in {CUTS!r}:
    os.system("printf 'split %s'; sleep 0.3; printf '%s end\\\\n'" % (first, rest))
time.sleep(0.5)
"ran"
'''
LEFT_IN_PLACE = """\
import sys, threading
pub, fmt = get_ipython().display_pub, get_ipython().display_formatter
print("left in place:", {
    "stdout": type(sys.stdout).__module__, "stderr": type(sys.stderr).__module__,
    "publish": "publish" in vars(pub), "format": "format" in vars(fmt),
    "Thread.start": threading.Thread.start.__module__,
    "polars": vars(__import__("polars").functions.lazy._map_batches_wrapper)["__call__"].__module__.startswith("polars"),
})
"""
SEND_RENAMED = """\
_kernel = get_ipython().kernel
_send = _kernel.session.send
def _send_renamed(stream, msg_or_type, body=None, parent=None, ident=None, buffers=None, track=False,
                  header=None, metadata=None, **legacy):
    return _send(stream, msg_or_type, legacy.pop("content", body), parent, ident, buffers, track, header, metadata)
_kernel.session.send = _send_renamed
"""
PUBLISH_RENAMED = """\
import IPython.core.display_functions as _display_functions
_pub = get_ipython().display_pub
_publish = _pub.publish
def _publish_renamed(bundle, metadata=None, **kwargs):
    return _publish(bundle, metadata, **kwargs)
_pub.publish = _publish_renamed
def _publish_display_data(data, metadata=None, source=None, *, transient=None, **kwargs):
    extra = {"transient": transient} if transient else {}
    get_ipython().display_pub.publish(bundle=data, metadata=metadata, **extra, **kwargs)
_display_functions.publish_display_data = _publish_display_data
"""


def _pieces(text: str) -> list[str]:
    return [KEY[i : i + LEAK] for i in range(len(KEY) - LEAK + 1) if KEY[i : i + LEAK] in text]


def _leaks(result: ExecResult) -> list[str]:
    found = []
    for msg in result.messages:
        text = json.dumps([msg["content"], msg.get("metadata", {})], default=str)
        if _pieces(text):
            found.append(f"{msg['msg_type']}: {text[:300]}")
    return found


def _kernel(tmp_path: Path, server: ScriptedModelServer, site: Path | None = None, prepare: str = "") -> KernelHarness:
    configure_model(Path(os.environ["PENGUIN_HOME"]), server)
    env = kernel_env({VARIABLE: KEY})
    env.pop("PYTEST_CURRENT_TEST", None)  # ipykernel watches fd 1/2 except under pytest
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(site), env["PYTHONPATH"]])
    kernel = KernelHarness(str(tmp_path), env)
    if prepare:
        assert kernel.execute(prepare).reply["content"]["status"] == "ok"
    return kernel


def _status_line(status: ExecResult, name: str) -> str:
    (line,) = [line.strip() for line in status.stdout.splitlines() if line.strip().startswith(name + ":")]
    return line


def test_a_split_secret_is_held_back_whole_with_ipykernels_flush_buffers_renamed(tmp_path: Path) -> None:
    site = renamed_package(tmp_path, "ipykernel", r"\b_flush_buffers\b", "_drain_buffers", files=("iostream.py",))
    script = [
        {"tool_calls": [{"name": "run_python", "id": "call_split", "arguments": {"description": "Split", "code": SPLIT_CODE}}]},
        {"text": "Done."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _kernel(tmp_path, server, site)
        try:
            which = kernel.execute("import ipykernel.iostream as m; print(hasattr(m.OutStream, '_drain_buffers'))")
            loaded = kernel.execute("%load_ext penguin_jupyter")
            cell = kernel.execute("%%penguin --approve allow-all\nPrint it in two parts", timeout=180)
            status = kernel.execute("%penguin status", timeout=60)
            left = kernel.execute("import polars\n" + LEFT_IN_PLACE, timeout=60)
        finally:
            kernel.close()
    assert which.stdout.strip() == "True", "the kernel runs the renamed ipykernel"
    assert loaded.reply["content"]["status"] == "ok" and not loaded.stderr, loaded.stderr
    assert cell.reply["content"]["status"] == "ok", cell.stderr
    assert not _leaks(cell), "\n".join(_leaks(cell))
    assert cell.stdout.count("split " + PLACEHOLDER + " end") == len(CUTS), cell.stdout
    assert _status_line(status, "kernel.session_send") == "kernel.session_send: on", status.stdout
    shown = left.stdout.split("left in place: ", 1)[1]
    assert shown.strip() == str(
        {
            "stdout": "ipykernel.iostream",
            "stderr": "ipykernel.iostream",
            "publish": False,
            "format": False,
            "Thread.start": "threading",
            "polars": True,
        }
    ), shown


def test_a_session_send_that_changed_shape_fails_closed(tmp_path: Path) -> None:
    with ScriptedModelServer(["Never asked."]) as server:
        kernel = _kernel(tmp_path, server, prepare=SEND_RENAMED)
        try:
            loaded = kernel.execute("%load_ext penguin_jupyter")
            cell = kernel.execute("%%penguin\nSay hello", timeout=120)
            config = kernel.execute("%penguin config", timeout=60)
            status = kernel.execute("%penguin status", timeout=60)
        finally:
            kernel.close()
        requests = len(server.calls)
    off = "penguin: kernel.session_send is off (Session.send does not take"
    assert off in loaded.stderr, loaded.stderr
    assert cell.reply["content"]["status"] == "ok"
    assert cell.stderr.count(off) == 1 and "a %%penguin cell with secrets to protect does not run" in cell.stderr
    assert requests == 0, "nothing of the Task ran"
    assert off in config.stderr and "data root" not in config.stdout, "line commands fail closed too"
    assert _status_line(status, "kernel.session_send").startswith("kernel.session_send: off — Session.send does not take")


def test_a_display_publisher_that_changed_shape_stops_run_python_and_says_so(tmp_path: Path) -> None:
    base = "http://127.0.0.2:8123"
    script: list[Any] = [
        {
            "tool_calls": [
                {"name": "run_python", "id": "call_show", "arguments": {"description": "Show", "code": hostile_display_code(base)}}
            ]
        },
        {"text": "Shown."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _kernel(tmp_path, server, prepare=PUBLISH_RENAMED)
        try:
            loaded = kernel.execute("%load_ext penguin_jupyter")
            cell = kernel.execute("%%penguin --approve allow-all\nShow the report", timeout=180)
            status = kernel.execute("%penguin status", timeout=60)
        finally:
            kernel.close()
        tool_output = json.dumps(server.requests[-1]) if server.requests else ""
    off = "penguin: ipython.display_capture is off (IPython's display publisher or formatter takes other arguments"
    assert off in loaded.stderr, loaded.stderr
    assert cell.reply["content"]["status"] == "ok", cell.stderr
    displays = [
        m["content"]["data"]
        for m in cell.of_type("display_data", "update_display_data")
        if "application/vnd.penguin.transcript+json" not in m["content"]["data"]
    ]
    assert not [d for d in displays if base in json.dumps(d)], "a display of the code reached the page"
    assert cell.stderr.count(off) == 1, cell.stderr
    assert "run_python runs no code" in tool_output, "the model is told why"
    assert _status_line(status, "ipython.display_capture").startswith("ipython.display_capture: off — ")
