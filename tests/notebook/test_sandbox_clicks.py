"""How many clicks a data scientist makes: every tool call of the examples' scripted models
(penguin_jupyter/testing: `examples/explore-data.ipynb`, `examples/agent-in-notebook.ipynb`, and
the quickstart's demo script) routed through the real approval router with the tools' real
permissions, under `--approve ask` and `--approve auto` (with a sandbox that can start). The
counts are the figures docs/security.md "Sandbox" reports; the sandboxed kernel's column is
test_sandbox_kernel_clicks.py."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from penguin_jupyter.environment.defaults import default_tool_config
from penguin_jupyter.environment.sandbox import SandboxGrants, SandboxSupport
from penguin_jupyter.notebook.kernel_tools import kernel_tools
from penguin_jupyter.notebook.kernel_tools.notebook_cells import (
    DeleteCellTool,
    EditCellTool,
    InsertCellTool,
    ReadNotebookTool,
    RunCellTool,
)
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.notebook.runtime.sandbox_approval import CellSandbox
from penguin_jupyter.omni import tool_call
from penguin_jupyter.testing import explore_entries
from penguin_jupyter.testing.notebook_tools_script import notebook_tools_entries

DEMO_SCRIPT = Path(__file__).parents[2] / "penguin_jupyter" / "testing" / "demo_script.json"


def _permissions() -> dict[str, Any]:
    link = SimpleNamespace(live=True, can_run_cells=True)
    notebook = [cls(link) for cls in (ReadNotebookTool, InsertCellTool, EditCellTool, RunCellTool, DeleteCellTool)]
    kernel = [r.declaration for r in kernel_tools(SimpleNamespace(user_ns={}))]  # type: ignore[arg-type]
    tools = {d.name: d.permission for d in kernel}
    tools.update({t.name: t.definition.permission for t in notebook})
    tools.update({entry.name: entry.permission for entry in default_tool_config().builtin or []})
    return tools


class _Surface:
    def show_approval(self, call, row, *, background=False, preview=None) -> None:  # type: ignore[no-untyped-def]
        pass

    def show_note(self, text: str) -> None:
        pass


async def clicks(
    entries: list[dict[str, Any]], mode: str, workspace: str, support: SandboxSupport | None = None
) -> int:
    """The cards a human answers (Approve each) for every tool call of the script; `support`: the
    sandbox the commands run in (default: bwrap, available)."""
    permissions = _permissions()
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(prompt)
        return "y"

    approval = CellApproval(
        mode=mode,
        always_allowed=set(),
        permission_of=permissions.get,
        asker=CellAsker(channel="stdin", surface=_Surface(), input_fn=answer),  # type: ignore[arg-type]
        workspace_dir=workspace,
        sandbox=CellSandbox(support or SandboxSupport(True, "", "/usr/bin/bwrap"), SandboxGrants()),
    )
    router = ApprovalRouter(lambda: approval)
    for entry in entries:
        if entry.get("unless_tools"):  # the headless path: in JupyterLab the page tools are offered
            continue
        for call in entry.get("tool_calls", []):
            assert await router.decide(approval, tool_call(call["name"], call["arguments"], call["id"])) == "allow"
    return len(asked)


async def test_clicks_for_the_examples_in_ask_and_auto(tmp_path):
    (tmp_path / "sales.csv").write_text("month,revenue\n")
    demo = json.loads(DEMO_SCRIPT.read_text())
    counts = {
        name: (await clicks(entries, "ask", str(tmp_path)), await clicks(entries, "auto", str(tmp_path)))
        for name, entries in (
            ("explore-data", explore_entries()),
            ("agent-in-notebook", notebook_tools_entries()),
            ("quickstart demo", demo),
        )
    }
    # explore-data: inspect_variables, run_python ×2, propose_cell — auto asks for run_python only
    # agent-in-notebook: read_notebook, insert_cell ×2, run_cell — auto asks for the notebook edits
    # quickstart: ls -la (sandboxed), read_file, write_file — auto asks for the write only
    assert counts == {"explore-data": (4, 2), "agent-in-notebook": (4, 3), "quickstart demo": (3, 1)}
