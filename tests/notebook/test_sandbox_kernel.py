"""Starting "Python 3 (penguin sandbox)" (penguin_jupyter/kernel_sandbox/): it fails closed with one
line where no sandbox can start — through the provisioner (the line JupyterLab shows) and through
the kernelspec's argv alone — a client that launches the argv itself over TCP still reaches the
kernel (the launcher's relay), and the installed package lists the kernelspec. The escape suite
is test_sandbox_kernel_escape.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from penguin_jupyter.environment.sandbox import SandboxSupport, sandbox_support
from penguin_jupyter.environment.sandbox import support as support_module
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.paths import REPO_ROOT
from tests.support.sandbox_kernel import KERNEL_NAME, KERNELS_DIR, installed, sandbox_spec_manager

LINE = (
    "Python 3 (penguin sandbox) cannot start: {reason}. Nothing was started; pick another kernel, "
    "or fix this and try again."
)


def test_the_provisioner_refuses_with_one_line_where_no_sandbox_starts(monkeypatch, tmp_path):
    reason = "bubblewrap is not installed (apt-get install bubblewrap)"
    monkeypatch.setattr(support_module, "_support", SandboxSupport(False, reason))
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=sandbox_spec_manager())
    with pytest.raises(RuntimeError) as raised:
        km.start_kernel(cwd=str(tmp_path), env=kernel_env())
    assert str(raised.value) == LINE.format(reason=reason)
    assert not km.has_kernel


def test_the_kernelspecs_argv_alone_refuses_with_one_line(tmp_path):
    connection = tmp_path / "kernel.json"
    connection.write_text(json.dumps({"transport": "tcp", "ip": "127.0.0.1", "key": "k", "signature_scheme": "hmac-sha256",
                                      "shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5}))  # fmt: skip
    env = kernel_env({"PENGUIN_BWRAP": "none"})
    done = subprocess.run(
        [sys.executable, "-m", "penguin_jupyter.kernel_sandbox", "-f", str(connection)],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == LINE.format(reason="turned off (PENGUIN_BWRAP=none)")


@pytest.mark.kernel
@pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}")
def test_a_client_that_launches_the_argv_over_tcp_reaches_the_kernel(tmp_path):
    """VS Code or an older client: no provisioner, a TCP connection file; the launcher relays."""
    spec_dir = tmp_path / "kernels" / "tcp-sandbox"
    spec_dir.mkdir(parents=True)
    spec = json.loads((KERNELS_DIR / KERNEL_NAME / "kernel.json").read_text())
    spec["metadata"].pop("kernel_provisioner")
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    km = KernelManager(kernel_name="tcp-sandbox", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")]))
    workspace = Path(tempfile.mkdtemp(prefix="pj-tcp-", dir="/var/tmp"))
    km.start_kernel(cwd=str(workspace), env=kernel_env())
    outputs: list[dict[str, Any]] = []
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=90)
        assert km.transport == "tcp"
        code = "import socket; print(sorted(n for _, n in socket.if_nameindex()), open('/proc/self/status').read().count('Seccomp:\\t2'))"
        reply = client.execute_interactive(code, timeout=60, output_hook=lambda m: outputs.append(m))
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    text = "".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream")
    assert text.strip() == "['lo'] 1"


@pytest.mark.kernel
@pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}")
def test_a_normal_kernel_is_not_taken_for_a_sandboxed_one(tmp_path):
    """The header and the auto policy need the launcher's marker and the walls: a normal kernel
    has neither (a marker without the walls: tests/kernel_sandbox/)."""
    harness = KernelHarness(str(tmp_path), kernel_env())
    try:
        out = harness.execute(
            "from penguin_jupyter.environment.sandbox.enclosing import kernel_sandbox\nprint(kernel_sandbox())"
        ).stdout
    finally:
        harness.close()
    assert out.strip() == "None"


def test_the_installed_package_lists_the_kernelspec():
    """`pip install -e .` (scripts/setup.sh) installs the kernelspec as shared data and declares
    the provisioner: `jupyter kernelspec list` shows it."""
    if not installed():
        pytest.skip("the installed penguin_jupyter predates the sandboxed kernel (pip install -e . again)")
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"],
        capture_output=True, text=True, timeout=60, check=True, cwd=str(REPO_ROOT), env={**os.environ},
    )  # fmt: skip
    specs = json.loads(listed.stdout)["kernelspecs"]
    assert specs[KERNEL_NAME]["spec"]["display_name"] == "Python 3 (penguin sandbox)"


@pytest.mark.kernel
@pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}")
def test_a_model_key_in_a_hidden_dotenv_is_not_offered_and_the_cell_says_why():
    """The sandboxed kernel hides a folder's `.env` like every credential file: its model key
    never reaches the kernel, and the no-model text says so instead of offering `.env`."""
    workspace = Path(tempfile.mkdtemp(prefix="pj-dotenv-", dir="/var/tmp"))
    (workspace / ".env").write_text("OPENAI_API_KEY=sk-hidden-0123456789abcdef\n")
    env = kernel_env({"JPY_SESSION_NAME": str(workspace / "a.ipynb")})
    harness = KernelHarness(str(workspace), env, kernel_name=KERNEL_NAME, spec_manager=sandbox_spec_manager())
    try:
        harness.execute("%load_ext penguin_jupyter")
        result = harness.execute("%%penguin\nhello", timeout=90)
    finally:
        harness.close()
        subprocess.run(["rm", "-rf", str(workspace)], check=False)
    text = result.stderr
    assert text.startswith("penguin: no model yet"), text
    assert "the .env next to this notebook is hidden from this sandboxed kernel" in text
    assert "put it in a .env file" not in text and "sk-hidden" not in text
