"""`--approve auto` in "Python 3 (penguin sandbox)" depends on the browser its outputs render in
(docs/security.md "The sandboxed kernel"): a real sandboxed kernel started through its kernelspec
and provisioner, the scripted model calling `run_python`. Under a Jupyter server its provisioner
judges hardened (a real ServerApp, unstarted, with the docs' Content-Security-Policy and the
JavaScript renderer disabled in the page config), `run_python` runs with no card; started with
no server above it (a bare KernelManager, as the Kernel Gateway would be), the browser is
unknown: `run_python` asks as in a normal kernel, saying why, the first cell and the header say
so, `%penguin config` too — even though the environment the test starts it with claims
`hardened` (the provisioner overwrites it)."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from penguin_jupyter.environment.sandbox import sandbox_support
from penguin_jupyter.environment.sandbox.enclosing import BROWSER_VARIABLE
from penguin_jupyter.testing import ScriptedModelServer
from tests.notebook.test_sandbox_kernel_clicks import _approver
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.sandbox_kernel import KERNEL_NAME, hardened_server, sandbox_spec_manager
from tests.support.sandbox_suite import TRANSCRIPT_MIME, _card_texts, _decisions, _outputs
from tests.support.session import configure_model

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}"),
]

SCRIPT = [
    {"tool_calls": [{"name": "run_python", "id": "py", "arguments": {"code": "print('ran', 6 * 7)"}}]},
    {"text": "Done."},
]


def _run(hardened: bool) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="pj-browser-", dir="/var/tmp"))  # not /tmp: the sandbox has its own
    home, data, workspace = base / "home", base / "data", base / "work"
    for folder in (home, data, workspace):
        folder.mkdir()
    env = kernel_env({"HOME": str(home), "PENGUIN_HOME": str(data), BROWSER_VARIABLE: "hardened"})
    try:
        with ScriptedModelServer(SCRIPT) as server:
            configure_model(data, server)
            with hardened_server() if hardened else contextlib.nullcontext() as jupyter:
                harness = KernelHarness(
                    str(workspace), env, kernel_name=KERNEL_NAME, spec_manager=sandbox_spec_manager(), parent=jupyter
                )
            try:
                assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
                cards: list[str] = []
                cell = harness.execute("%%penguin --approve auto\nRun it.", on_message=_approver(harness, cards), timeout=300)
                config = harness.execute("%penguin config").stdout
            finally:
                harness.close()
        bundle = cell.final_bundles()[-1][TRANSCRIPT_MIME]
        return {
            "cards": len(cards),
            "output": _outputs(bundle).get("py", ""),
            "decision": _decisions(bundle).get("py", {}),
            "widgets": "\n".join(_card_texts(cell.messages)),
            "notes": cell.stderr,  # the cell's information lines
            "config": config,
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_behind_a_server_judged_hardened_run_python_needs_no_card():
    seen = _run(hardened=True)
    assert seen["cards"] == 0 and "ran 42" in seen["output"]
    assert "in the sandboxed kernel" in str(seen["decision"].get("reason", ""))
    assert "kernel: sandboxed" in seen["widgets"] and "not hardened" not in seen["widgets"] + seen["notes"]
    assert "browser: hardened" in seen["config"]


def test_with_no_server_to_judge_run_python_asks_and_every_place_says_why():
    seen = _run(hardened=False)
    assert seen["cards"] == 1 and "ran 42" in seen["output"]  # asked, approved, ran in the sandbox
    why = "not known to be hardened (the kernel was not started by a Jupyter server"
    assert f"asked: this kernel's JupyterLab is {why}" in seen["widgets"]  # on the card
    assert "kernel: sandboxed, browser not hardened" in seen["widgets"]  # the live header
    assert seen["notes"].count(f"but its JupyterLab is {why}") == 1 and 'docs/security.md "The sandboxed kernel"' in seen["notes"]
    assert "browser: not hardened (the kernel was not started by a Jupyter server" in seen["config"]
