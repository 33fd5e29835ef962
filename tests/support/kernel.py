"""Kernel-level test support: a real ipykernel driven through jupyter_client.

Owns `KernelHarness`: start a kernel (IPC transport; `python3` or another kernelspec) in a directory with a given environment,
execute code, collect iopub traffic, answer stdin prompts, click ipywidgets Buttons the way
a frontend does, and count the widget models the kernel still holds (`open_widgets`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jupyter_client import KernelManager

from tests.support.paths import REPO_ROOT as _REPO_ROOT

REPO_ROOT = str(_REPO_ROOT)


def kernel_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment (private HOME/PENGUIN_HOME from conftest) + the repo on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPO_ROOT, env.get("PYTHONPATH", "")) if p)
    env.update(extra or {})
    return env


@dataclass
class ExecResult:
    reply: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["msg_type"] in types]

    @property
    def stdout(self) -> str:
        return "".join(
            m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == "stdout"
        )

    @property
    def stderr(self) -> str:
        return "".join(
            m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == "stderr"
        )

    @property
    def notes(self) -> str:
        """The plain-text outputs of their own (a cell's information lines above its live view)."""
        return "".join(
            m["content"]["data"]["text/plain"]
            for m in self.of_type("display_data")
            if set(m["content"].get("data", {})) == {"text/plain"}
        )

    def index_of(self, predicate: Callable[[dict[str, Any]], bool]) -> int:
        """Position of the first message `predicate` accepts (-1: none)."""
        return next((i for i, m in enumerate(self.messages) if predicate(m)), -1)

    def buttons(self, description: str) -> list[str]:
        """comm ids of Button models opened with this description."""
        found = []
        for m in self.of_type("comm_open"):
            state = m["content"].get("data", {}).get("state", {})
            if state.get("_model_name") == "ButtonModel" and state.get("description") == description:
                found.append(m["content"]["comm_id"])
        return found

    def final_bundles(self) -> list[dict[str, Any]]:
        """Data of every display / update carrying the static transcript."""
        return [
            m["content"]["data"]
            for m in self.of_type("display_data", "update_display_data")
            if "application/vnd.penguin.transcript+json" in m["content"].get("data", {})
        ]


OPEN_WIDGETS = """\
def _penguin_open_widgets():
    import json, sys
    import ipywidgets
    from comm import get_comm_manager
    teardown = sys.modules.get("penguin_jupyter.notebook.live.live_teardown")
    shared = sys.modules.get("penguin_jupyter.notebook.live.live_shared")
    kept = [m for m in (shared._shared.values() if shared is not None else ()) if m.comm is not None]
    models = ipywidgets.Widget.widgets
    kinds = {}
    for model in models.values():
        kinds[type(model).__name__] = kinds.get(type(model).__name__, 0) + 1
    print(json.dumps({"models": len(models), "comms": len(get_comm_manager().comms), "kinds": kinds, "shared": len(kept),
                      "queued": len(teardown._queue) if teardown is not None else 0}))
_penguin_open_widgets()
del _penguin_open_widgets"""


class KernelHarness:
    def __init__(
        self,
        cwd: str,
        env: dict[str, str] | None = None,
        *,
        kernel_name: str = "python3",
        spec_manager: Any = None,
        parent: Any = None,
    ) -> None:
        # IPC sockets: no TCP port races with other kernels started concurrently on this machine.
        self._sockets = tempfile.mkdtemp(prefix="pjk-")
        extra: dict[str, Any] = {"kernel_spec_manager": spec_manager} if spec_manager is not None else {}
        if parent is not None:  # e.g. the Jupyter server a provisioner judges (sandbox_kernel.hardened_server)
            extra["parent"] = parent
        self.km = KernelManager(kernel_name=kernel_name, transport="ipc", ip=os.path.join(self._sockets, "k"), **extra)
        self.km.start_kernel(cwd=cwd, env=env if env is not None else kernel_env())
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=90)

    def click(self, comm_id: str) -> None:
        """Send what a widget frontend sends when a Button is clicked."""
        msg = self.kc.session.msg(
            "comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
        )
        self.kc.shell_channel.send(msg)

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def execute(
        self,
        code: str,
        *,
        timeout: float = 120.0,
        on_message: Callable[[dict[str, Any], ExecResult], None] | None = None,
        allow_stdin: bool = True,
        on_input: Callable[[str], str] | None = None,
        cell_id: str | None = None,
    ) -> ExecResult:
        """Run `code`; `on_message(msg, result)` sees each iopub message while the cell runs.
        With `cell_id` the request carries it as JupyterLab does (`metadata.cellId`)."""
        result = ExecResult()
        start = time.monotonic()
        msg_id = self._send_execute(code, allow_stdin, cell_id)
        idle = False
        while time.monotonic() - start < timeout and not (idle and result.reply is not None):
            if not idle:
                try:
                    msg = self.kc.get_iopub_msg(timeout=0.2)
                except Exception:
                    msg = None
                if msg is not None and msg.get("parent_header", {}).get("msg_id") == msg_id:
                    result.messages.append(msg)
                    if on_message is not None:
                        on_message(msg, result)
                    if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                        idle = True
            if on_input is not None:
                try:
                    request = self.kc.get_stdin_msg(timeout=0.05)
                except Exception:
                    request = None
                if request is not None and request["msg_type"] == "input_request":
                    result.prompts.append(request["content"]["prompt"])
                    self.kc.input(on_input(request["content"]["prompt"]))
            if result.reply is None:
                try:
                    reply = self.kc.get_shell_msg(timeout=0.05)
                except Exception:
                    reply = None
                if reply is not None and reply.get("parent_header", {}).get("msg_id") == msg_id:
                    result.reply = reply
        result.elapsed = time.monotonic() - start
        if result.reply is None:
            raise TimeoutError(f"cell did not finish within {timeout}s: {code[:80]!r}")
        return result

    def _send_execute(self, code: str, allow_stdin: bool, cell_id: str | None) -> str:
        if cell_id is None:
            return str(self.kc.execute(code, allow_stdin=allow_stdin))
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": allow_stdin,
            "stop_on_error": True,
        }
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def open_widgets(self, timeout: float = 300.0) -> dict[str, Any]:
        """The widget models and comms the kernel holds once the paced teardown has closed what
        it queued (polled, bounded by `timeout`): {"models": n, "comms": n, "kinds": {class name: n},
        "shared": the live views' shared layout/style models among them (live_shared.py)}."""
        deadline = time.monotonic() + timeout
        while True:
            out = self.execute(OPEN_WIDGETS).stdout.strip().splitlines()
            found: dict[str, Any] = json.loads(out[-1]) if out else {}
            if found.get("queued") == 0 or time.monotonic() > deadline:
                return found
            time.sleep(0.5)

    def close(self, *, graceful: bool = False) -> None:
        """Stop the kernel: killed at once, or `graceful` as a frontend's shutdown request (the
        kernel process exits by itself, so its `atexit` hooks run)."""
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=not graceful)
            shutil.rmtree(self._sockets, ignore_errors=True)
