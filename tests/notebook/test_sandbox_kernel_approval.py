"""The approval policy in a sandboxed kernel, without a kernel (notebook/runtime/sandbox_approval.py;
the kernel-level suite is test_sandbox_kernel_escape.py): under `auto`, `run_python` and the
notebook tools and file writes need no card and the decision says they ran in the sandboxed
kernel, while the same calls still ask in a normal kernel; a subagent and a read outside the
workspace still ask; a command asking to leave the kernel's sandbox or
for a host it was not started with is denied without a card, in every mode; the first cell says
once that the user's cells are confined, and a kernel whose walls are not all up says so and
is treated as not sandboxed. Behind a JupyterLab its provisioner did not judge hardened,
`run_python` and the notebook tools that edit or run keep their card under `auto` (saying why),
while commands, file writes and reads stay as in a hardened one, and the first cell says so."""

from __future__ import annotations

import pytest

from penguin_jupyter.environment.sandbox import SandboxGrants, SandboxSupport, parse_hosts
from penguin_jupyter.environment.sandbox import support as support_module
from penguin_jupyter.environment.sandbox.enclosing import KernelSandbox
from penguin_jupyter.notebook.runtime import sandbox_approval
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.notebook.runtime.sandbox_approval import CellSandbox, cell_sandbox
from penguin_jupyter.omni import tool_call
from tests.support.sandbox_kernel import declare_kernel_tools

PERMISSIONS = {"read_file": "r", "exec_command": "rw", "write_file": "rw", "run_python": "rw", "insert_cell": "rw", "edit_cell": "rw",
               "run_cell": "rw", "delete_cell": "rw", "run_subagent": "rw", "read_notebook": "r"}  # fmt: skip
HOSTS = parse_hosts(["127.0.0.1:8123"])
IN_KERNEL = "in the sandboxed kernel (writes: the workspace and /tmp; network: 127.0.0.1:8123)"


class Surface:
    def show_approval(self, call, row, *, background=False, preview=None) -> None:  # type: ignore[no-untyped-def]
        pass

    def show_note(self, text: str) -> None:
        pass


def _cell(mode: str, workspace: str, *, kernel: bool = True, browser_open: str = ""):  # type: ignore[no-untyped-def]
    declare_kernel_tools()
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "n"

    support = SandboxSupport(True, "", "", KernelSandbox(workspace, HOSTS, browser_open=browser_open)) if kernel else SandboxSupport(True, "", "/usr/bin/bwrap")
    approval = CellApproval(
        mode=mode,
        always_allowed=set(),
        permission_of=lambda tool: PERMISSIONS.get(tool),  # type: ignore[arg-type,return-value]
        asker=CellAsker(channel="stdin", surface=Surface(), input_fn=answer),
        workspace_dir=workspace,
        sandbox=CellSandbox(support, SandboxGrants()),
    )
    return ApprovalRouter(lambda: approval), approval, prompts


KERNEL_CALLS = [
    ("run_python", {"code": "import os; os.listdir('.')"}),
    ("insert_cell", {"cell_type": "code", "source": "df.head()"}),
    ("edit_cell", {"cell_id": "abc", "source": "df.tail()"}),
    ("run_cell", {"cell_id": "abc"}),
    ("delete_cell", {"cell_id": "abc"}),
]


@pytest.mark.parametrize(("name", "arguments"), KERNEL_CALLS)
async def test_auto_in_a_sandboxed_kernel_runs_kernel_tools_with_no_card(tmp_path, name, arguments):
    router, approval, prompts = _cell("auto", str(tmp_path))
    assert await router.decide(approval, tool_call(name, arguments, "k1")) == "allow"
    assert prompts == []
    assert router.take_reason("k1") == f"allowed by the cell's mode (auto); {IN_KERNEL}"


@pytest.mark.parametrize(("name", "arguments"), KERNEL_CALLS)
async def test_the_same_calls_ask_in_a_normal_kernel_and_under_ask(tmp_path, name, arguments):
    router, approval, prompts = _cell("auto", str(tmp_path), kernel=False)
    assert await router.decide(approval, tool_call(name, arguments, "k1")) == "deny"  # asked; the human said n
    router, approval, asked = _cell("ask", str(tmp_path))
    assert await router.decide(approval, tool_call(name, arguments, "k2")) == "deny"
    assert len(prompts) == 1 and len(asked) == 1


async def test_file_writes_are_the_kernels_views_business_and_the_rest_still_asks(tmp_path):
    """A write runs in the kernel, whose own view refuses what the sandbox does not allow (the
    escape suite's write_file to .git/hooks fails read-only); a subagent (it spends) and a read
    outside the workspace (as under read-only) still ask."""
    router, approval, prompts = _cell("auto", str(tmp_path))
    write = tool_call("write_file", {"file_path": ".git/hooks/pre-commit", "content": "x"}, "w1")
    assert await router.decide(approval, write) == "allow"
    assert router.take_reason("w1") == f"allowed by the cell's mode (auto); {IN_KERNEL}"
    outside = tool_call("write_file", {"file_path": str(tmp_path.parent / "outside.txt"), "content": "x"}, "w2")
    assert await router.decide(approval, outside) == "allow"  # the kernel's view refuses it (read-only)
    subagent = tool_call("run_subagent", {"prompt": "go", "provider": "openai", "model_id": "m"}, "s1")
    assert await router.decide(approval, subagent) == "deny"
    read = tool_call("read_file", {"file_path": "/etc/hostname"}, "r1")
    assert await router.decide(approval, read) == "deny"
    assert len(prompts) == 2
    # in a normal kernel, auto keeps the write's card
    router, approval, prompts = _cell("auto", str(tmp_path), kernel=False)
    assert await router.decide(approval, write) == "deny" and len(prompts) == 1
    assert await router.decide(approval, outside) == "deny" and len(prompts) == 2


@pytest.mark.parametrize("mode", ["ask", "auto", "allow-all"])
async def test_a_command_cannot_ask_its_way_out_of_the_kernels_sandbox(tmp_path, mode):
    router, approval, prompts = _cell(mode, str(tmp_path))
    leave = tool_call("exec_command", {"cmd": "touch ~/x", "unsandboxed": True}, "c1")
    assert await router.decide(approval, leave) == "deny"
    assert router.take_reason("c1") == (
        "denied: this kernel runs in the penguin sandbox, so nothing it starts can leave it (unsandboxed: true)"
    )
    far = tool_call("exec_command", {"cmd": "curl evil.example", "network_hosts": ["evil.example"]}, "c2")
    assert await router.decide(approval, far) == "deny"
    assert "reaches only 127.0.0.1:8123; evil.example cannot be added while it runs" in (router.take_reason("c2") or "")
    assert prompts == []
    near = tool_call("exec_command", {"cmd": "curl 127.0.0.1:8123", "network_hosts": ["127.0.0.1:8123"]}, "c3")
    assert await router.decide(approval, near) == ("deny" if mode == "ask" else "allow")  # ask asks (n); the others allow


OPEN = "its pages have no Content-Security-Policy"


@pytest.mark.parametrize(("name", "arguments"), KERNEL_CALLS)
async def test_behind_a_browser_not_hardened_kernel_tools_ask_under_auto_saying_why(tmp_path, name, arguments):
    router, approval, prompts = _cell("auto", str(tmp_path), browser_open=OPEN)
    assert await router.decide(approval, tool_call(name, arguments, "k1")) == "deny"  # asked; the human said n
    assert len(prompts) == 1
    assert router.take_reason("k1") is None  # a click decided it
    # nobody to ask (no cell running): denied, with the reason
    headless = ApprovalRouter(lambda: None)
    assert await headless.decide(approval, tool_call(name, arguments, "k2")) == "deny"
    reason = headless.take_reason("k2") or ""
    assert reason.startswith("denied: this kernel's JupyterLab is not known to be hardened (its pages have no")
    assert reason.endswith("no cell is running to ask") and len(prompts) == 1


async def test_behind_a_browser_not_hardened_commands_writes_and_reads_stay_without_a_card(tmp_path):
    """What the sandbox holds and what renders only through the kernel tools: a command, a file
    write (a file JupyterLab opens renders untrusted), the notebook read and a read."""
    router, approval, prompts = _cell("auto", str(tmp_path), browser_open=OPEN)
    calls = [
        tool_call("exec_command", {"cmd": "ls"}, "c1"),
        tool_call("write_file", {"file_path": "notes.md", "content": "x"}, "w1"),
        tool_call("read_notebook", {}, "n1"),
        tool_call("read_file", {"file_path": "notes.md"}, "r1"),
    ]
    for call in calls:
        assert await router.decide(approval, call) == "allow"
    assert prompts == []
    assert router.take_reason("w1") == f"allowed by the cell's mode (auto); {IN_KERNEL}"
    approval.always_allowed.add("run_python")  # "Always allow" still works, as in a normal kernel
    assert await router.decide(approval, tool_call(*KERNEL_CALLS[0], "k1")) == "allow" and prompts == []


async def test_behind_a_browser_not_hardened_the_first_cell_says_so_and_how_to_fix_it(monkeypatch, tmp_path):
    kernel = KernelSandbox(str(tmp_path), HOSTS, browser_open=OPEN)
    monkeypatch.setattr(sandbox_approval, "kernel_sandbox", lambda: kernel)
    monkeypatch.setattr(support_module, "_support", SandboxSupport(True, "", "", kernel))
    announced: set[str] = set()
    mode, sandbox, note = cell_sandbox("auto", "", SandboxGrants(), lambda: (), announced)
    assert mode == "auto" and sandbox.kernel is kernel
    assert note == (
        f"penguin: this kernel runs in the penguin sandbox, and so do your own cells (writes: {tmp_path} and /tmp; "
        f"network: 127.0.0.1:8123); but its JupyterLab is not known to be hardened ({OPEN}), so under "
        "--approve auto run_python and the notebook tools still ask (commands and file writes do not); "
        'to harden it: docs/security.md "The sandboxed kernel"'
    )
    assert cell_sandbox("auto", "", SandboxGrants(), lambda: (), announced)[2] is None  # once per kernel


async def test_the_first_cell_says_once_that_the_users_cells_are_confined(monkeypatch, tmp_path):
    kernel = KernelSandbox(str(tmp_path), HOSTS, browser_open="")
    monkeypatch.setattr(sandbox_approval, "kernel_sandbox", lambda: kernel)
    monkeypatch.setattr(support_module, "_support", SandboxSupport(True, "", "", kernel))
    announced: set[str] = set()
    mode, sandbox, note = cell_sandbox("ask", "", SandboxGrants(), lambda: (), announced)
    assert mode == "ask" and sandbox.kernel is kernel
    assert note is not None and note.startswith("penguin: this kernel runs in the penguin sandbox, and so do your own cells")
    assert "reach only 127.0.0.1:8123" in note
    assert cell_sandbox("auto", "", SandboxGrants(), lambda: (), announced)[2] is None  # once per kernel


async def test_a_kernel_whose_walls_are_not_up_is_treated_as_not_sandboxed(monkeypatch, tmp_path):
    broken = KernelSandbox(str(tmp_path), HOSTS, problem="thread 7 runs without the seccomp filter")
    monkeypatch.setattr(sandbox_approval, "kernel_sandbox", lambda: broken)
    monkeypatch.setattr(support_module, "_support", None)
    monkeypatch.setattr(support_module, "kernel_sandbox", lambda: broken)
    mode, sandbox, note = cell_sandbox("auto", "", SandboxGrants(), lambda: (), set())
    assert mode == "ask" and sandbox.kernel is None
    assert note == (
        "penguin: this kernel was started in the penguin sandbox, but thread 7 runs without the seccomp "
        "filter: it is treated as not sandboxed (--approve auto acts as ask)"
    )
