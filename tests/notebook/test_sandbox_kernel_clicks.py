"""How many clicks a data scientist makes in the sandboxed kernel ("Python 3 (penguin sandbox)"):
the examples' scripted tool calls (as in test_sandbox_clicks.py, which counts `ask` and `auto`
in a normal kernel) routed through the real approval router under `--approve auto` in a kernel
that runs in the sandbox, where `run_python` and the notebook tools need no card either behind a
hardened JupyterLab, and keep it behind one its provisioner did not judge hardened. The counts
are the last two columns of docs/security.md "Clicks"; `examples/explore-data.ipynb` is also run
whole in real kernels (its own demo model inside the kernel; the sandboxed one's provisioner
under a hardened ServerApp) and its cards counted."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from penguin_jupyter.environment.sandbox import SandboxSupport, parse_hosts, sandbox_support
from penguin_jupyter.environment.sandbox.enclosing import KernelSandbox
from penguin_jupyter.testing import explore_entries
from penguin_jupyter.testing.notebook_tools_script import notebook_tools_entries
from tests.notebook.test_sandbox_clicks import DEMO_SCRIPT, clicks
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.paths import REPO_ROOT
from tests.support.sandbox_kernel import (
    KERNEL_NAME,
    declare_kernel_tools,
    hardened_server,
    sandbox_spec_manager,
)


async def kernel_clicks(entries: list[dict[str, Any]], workspace: str, browser_open: str = "") -> int:
    """The cards under `auto` when the kernel itself runs in the sandbox (its browser hardened
    unless `browser_open` says why not)."""
    declare_kernel_tools()
    kernel = KernelSandbox(workspace, parse_hosts(["api.openai.com"]), browser_open=browser_open)
    return await clicks(entries, "auto", workspace, SandboxSupport(True, "", "", kernel))


async def test_clicks_for_the_examples_in_the_sandboxed_kernel(tmp_path):
    (tmp_path / "sales.csv").write_text("month,revenue\n")
    counts = {
        "explore-data": await kernel_clicks(explore_entries(), str(tmp_path)),
        "agent-in-notebook": await kernel_clicks(notebook_tools_entries(), str(tmp_path)),
        "quickstart demo": await kernel_clicks(json.loads(DEMO_SCRIPT.read_text()), str(tmp_path)),
    }
    assert counts == {"explore-data": 0, "agent-in-notebook": 0, "quickstart demo": 0}


async def test_clicks_for_the_examples_in_the_sandboxed_kernel_behind_a_browser_not_hardened(tmp_path):
    """The kernel tools that edit or run ask as in a normal kernel; commands and writes do not."""
    (tmp_path / "sales.csv").write_text("month,revenue\n")
    why = "its pages have no Content-Security-Policy"
    counts = {
        "explore-data": await kernel_clicks(explore_entries(), str(tmp_path), why),
        "agent-in-notebook": await kernel_clicks(notebook_tools_entries(), str(tmp_path), why),
        "quickstart demo": await kernel_clicks(json.loads(DEMO_SCRIPT.read_text()), str(tmp_path), why),
    }
    assert counts == {"explore-data": 2, "agent-in-notebook": 3, "quickstart demo": 0}


def _explore_cells() -> list[str]:
    notebook = json.loads((REPO_ROOT / "examples" / "explore-data.ipynb").read_text())
    return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def _approver(harness: Any, cards: list[str]) -> Any:
    """Click Approve on every card, counting them."""

    def on_message(msg: dict[str, Any], result: Any) -> None:
        if msg["msg_type"] == "comm_open":
            for comm_id in result.buttons("Approve"):
                if comm_id not in cards:
                    cards.append(comm_id)
                    harness.click(comm_id)

    return on_message


def _run_explore(kernel_name: str, mode: str) -> tuple[int, str]:
    """examples/explore-data.ipynb run cell by cell (its own demo model inside the kernel), the
    `%%penguin` cell under `mode`: (cards answered, the final answer's first words)."""
    base = Path(tempfile.mkdtemp(prefix="pj-clicks-", dir="/var/tmp"))
    try:
        shutil.copytree(REPO_ROOT / "examples" / "data", base / "data")
        env = kernel_env({"JPY_SESSION_NAME": str(base / "explore-data.ipynb")})
        if kernel_name == KERNEL_NAME:
            with hardened_server() as server:  # the provisioner judges the browser when the kernel starts
                harness = KernelHarness(str(base), env, kernel_name=KERNEL_NAME, spec_manager=sandbox_spec_manager(), parent=server)
        else:
            harness = KernelHarness(str(base), env)
        cards: list[str] = []
        answer = ""
        try:
            for source in _explore_cells():
                if source.startswith("%%penguin"):
                    source = source.replace("--approve allow-all", f"--approve {mode}")
                    result = harness.execute(source, on_message=_approver(harness, cards), timeout=300)
                    bundle = result.final_bundles()[-1]["application/vnd.penguin.transcript+json"]
                    texts = [m["payload"].get("text", "") for m in bundle["messages"] if m["payload"].get("type") == "text"]
                    answer = texts[-1][:40]
                else:
                    assert harness.execute(source, timeout=120).reply["content"]["status"] == "ok", source
        finally:
            harness.close()
        return len(cards), answer
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.kernel
@pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}")
def test_explore_data_in_real_kernels_ask_auto_and_the_sandboxed_kernel():
    """The notebook itself, in real kernels: 4 cards under ask, 2 under auto (the two run_python),
    none in the sandboxed kernel — and the same answer each time."""
    ask = _run_explore("python3", "ask")
    auto = _run_explore("python3", "auto")
    sandboxed = _run_explore(KERNEL_NAME, "auto")
    assert (ask[0], auto[0], sandboxed[0]) == (4, 2, 0)
    assert ask[1] == auto[1] == sandboxed[1] and ask[1]
