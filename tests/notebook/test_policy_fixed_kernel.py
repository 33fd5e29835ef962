"""The administrator's policy is fixed for the life of the kernel (issue 36, defect 3), in a real
kernel against the scripted model server.

As an attacker (one approved `run_python`, or any cell of a shared notebook): the kernel was
started with `PENGUIN_POLICY` naming a policy that disables `exec_command` and caps cells at
`ask`; a cell sets `os.environ["PENGUIN_POLICY"] = os.devnull`, then a `--approve allow-all`
cell lets the model call `exec_command`. On 3758335 the policy was re-read from the kernel's
`os.environ` at every cell: the empty file lifted it, `exec_command` was offered and ran with no
click (the file it wrote appeared). Now where the policy is read from was decided when the kernel
started: the tool is not offered, the call is denied, nothing is written, the cell says it runs
under `ask`, and `%penguin config` names the policy and says the path was fixed at kernel start.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model

pytestmark = pytest.mark.kernel


def test_changing_penguin_policy_in_the_kernel_does_not_lift_the_policy(tmp_path):
    folder = tmp_path / "nb"
    folder.mkdir()
    policy = tmp_path / "policy.toml"
    policy.write_text('max_approve = "ask"\ndisabled_tools = ["exec_command"]\n')
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "printf pwned > pwned.txt"}}]},
        {"text": "Done."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(folder), kernel_env({"PENGUIN_POLICY": str(policy)}))
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            lifted = kernel.execute('import os\nos.environ["PENGUIN_POLICY"] = os.devnull')
            cell = kernel.execute("%%penguin --approve allow-all\nWrite the file", timeout=180)
            config = kernel.execute("%penguin config")
            requests = list(server.requests)
        finally:
            kernel.close()
    assert lifted.reply["content"]["status"] == "ok"
    assert cell.reply["content"]["status"] == "ok", cell.stderr
    assert not (folder / "pwned.txt").exists(), "the disabled exec_command ran"
    offered = [tool["function"]["name"] for tool in requests[0].get("tools", [])]
    assert "exec_command" not in offered and "read_file" in offered
    assert f"the administrator's policy ({policy}) allows at most --approve ask" in cell.stderr
    assert f"administrator's policy: {policy}" in config.stdout
    assert "fixed when the kernel started" in config.stdout and "PENGUIN_POLICY" in config.stdout
