"""The sandboxed kernel's escape suite (docs/security.md "The sandboxed kernel"): "Python 3 (penguin
sandbox)" started through its kernelspec with jupyter_client's KernelManager (its provisioner
asks for ipc), `--approve auto`, the scripted model calling `run_python` with hostile code
(tests/support/sandbox_kernel_suite.py, on the command suite's fixtures):

* no card at all; a write inside the workspace succeeds; writes to $HOME,
  ~/.ipython/profile_default/startup, .git/hooks and .git/config fail (read-only);
* ~/.ssh and ~/.aws are hidden (empty), the data root shows only this kernel's slice (no other
  session's trace), and no secret reaches any output;
* a 127.0.0.1 counting server gets 0 requests (urllib through the proxy, a raw socket, curl,
  pip's --index-url, a kubeconfig exec plugin, git's core.fsmonitor), a Unix socket cannot be
  made, while the model — on 127.0.0.1 too, through the proxy — answers every request;
* a `setsid` shell daemon and a double-forked Python daemon stop when the kernel does, and no
  process of them is left; a symlink made inside widens nothing;
* `write_file` to $HOME or .git/hooks, allowed with no card, fails in the kernel's view;
* a command runs in the kernel's sandbox with no card; `unsandboxed: true` and a host the kernel
  was not started with are denied without a card, saying why;
* the user's own cell is confined too; an interrupt reaches the kernel; the header says
  "kernel: sandboxed" and the first cell says, once, that the user's cells are confined;
* what the session wrote is published into the real data root and the slice is removed.

Run as the user running the tests (root in CI) and as the ordinary user `pjsandbox` (made by
scripts/setup.sh), whose own kernel runs bubblewrap in a user namespace. The control
(`test_the_same_code_escapes_a_normal_kernel`) runs the same attempts in a normal kernel, where
they succeed: each assertion here can fail.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from penguin_jupyter.environment.sandbox import sandbox_support
from tests.support.ordinary_user import run_suite_as_ordinary_user
from tests.support.sandbox_kernel_suite import _codes, run_kernel_suite
from tests.support.sandbox_suite import CountingServer, _layout, secrets_in

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}"),
]

READ_ONLY = "Read-only file system"
HIDDEN = "No such file or directory"


def _assert_confined(observed: dict[str, Any]) -> None:
    outputs, files = observed["outputs"], observed["files"]
    assert observed["transport"] == "ipc"
    assert observed["first_status"] == "ok", observed["first_stderr"]
    assert observed["cards_in_auto"] == 0, "auto asked in the sandboxed kernel"
    # the model still answers: every scripted turn was requested through the proxy
    assert observed["answer"][-1] == "Tried everything." and observed["model_requests"] == len(_codes(1, _FAKE)) + 6
    assert outputs["inside"] == "written\n" and files["inside"]
    for call_id in ("home", "startup", "hook", "gitconfig"):
        assert READ_ONLY in outputs[call_id] and "WROTE" not in outputs[call_id], call_id
    for escaped in ("home_pwned", "startup", "hook", "daemon_wrote", "via_link", "fsmonitor_ran", "kube_ran", "command_pwned",
                    "outside_ok", "user_cell", "wf_home", "wf_hook"):  # fmt: skip
        assert not files[escaped], escaped
    assert "alias" not in observed["git_config"] and observed["authorized_keys"] == "ssh-ed25519 AAAA the-owner\n"
    assert outputs["ssh"].count(HIDDEN) == 2 and "ssh folder: []" in outputs["ssh"]
    listing = [line for line in outputs["data_root"].splitlines() if not line.startswith("FileNotFoundError")]
    assert HIDDEN in outputs["data_root"] and not any("session-other" in line for line in listing), listing
    for call_id, text in outputs.items():
        assert not secrets_in(text), (call_id, text)
    assert all(leak is None or not secrets_in(leak) for leak in observed["leaks"].values()), observed["leaks"]
    assert observed["hits"] == [], f"the counting server was reached: {observed['hits']}"
    assert "403" in outputs["network"] and "Connection refused" in outputs["network"]
    assert "Operation not permitted" in outputs["unix"]
    assert READ_ONLY in outputs["wf_home"] and READ_ONLY in outputs["wf_hook"]  # write_file: the kernel's view
    assert READ_ONLY in outputs["symlink"] and HIDDEN in outputs["symlink"]
    # the daemons beat while the kernel ran and stopped with it
    assert all(observed["beats_running"].values()), observed["beats_running"]
    assert observed["beats_after"] == observed["beats_later"] and observed["daemon_processes"] == []
    statement = "allowed by the cell's mode (auto); in the sandboxed kernel (writes: the workspace and /tmp; network: 127.0.0.1:"
    for call_id, decision in observed["decisions"].items():
        if call_id in ("unsandboxed", "hosts"):
            assert decision["decision"] == "deny", call_id
        else:
            assert decision["decision"] == "allow" and decision["reason"].startswith(statement), decision
    assert "nothing it starts can leave it (unsandboxed: true)" in observed["decisions"]["unsandboxed"]["reason"]
    assert "evil.example cannot be added while it runs" in observed["decisions"]["hosts"]["reason"]
    assert "[sandboxed: writes only in the workspace and /tmp; network: 127.0.0.1:" in outputs["command"] and files["command"]
    # the user's own cell, an interrupt, what the kernel says about itself
    assert READ_ONLY in observed["user_cell"] and HIDDEN in observed["user_cell"]
    assert observed["interrupt"]["ename"] == "KeyboardInterrupt" and observed["interrupt"]["elapsed"] < 20
    assert "kernel: sandboxed" in observed["widget_texts"]
    assert observed["first_stderr"].count("this kernel runs in the penguin sandbox, and so do your own cells") == 1
    assert "sandbox: this kernel runs in it, your own cells too" in observed["config"]
    assert "browser: hardened" in observed["config"]  # its provisioner judged the (hardened) server
    # published, cleaned up
    assert "2020/01/01/session-other.jsonl" in observed["traces"] and len(observed["traces"]) == 2
    assert observed["published_has_outputs"] and observed["slices_left"] == []


_FAKE = {"home": Path("/h"), "data": Path("/d"), "workspace": Path("/w")}


def _base() -> Path:
    return Path(tempfile.mkdtemp(prefix="pj-kernel-escape-", dir="/var/tmp"))


def test_escape_suite_in_the_sandboxed_kernel_with_approve_auto():
    base = _base()
    try:
        observed = run_kernel_suite(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert observed["user"] == os.getuid()
    _assert_confined(observed)


@pytest.mark.skipif(os.getuid() != 0, reason="already an ordinary user: the other test is this run")
def test_escape_suite_in_the_sandboxed_kernel_as_an_ordinary_user():
    _assert_confined(run_suite_as_ordinary_user("tests.support.sandbox_kernel_suite", _base()))


def test_the_same_code_escapes_a_normal_kernel():
    """The control: the suite's attempts, run as a user cell in the ordinary `python3` kernel,
    write $HOME and the git hooks, read the ssh key and another session's trace, and reach the
    counting server."""
    from tests.support.kernel import KernelHarness, kernel_env

    base = _base()
    counting = CountingServer()
    try:
        layout = _layout(base, counting.port)
        codes = dict(_codes(counting.port, layout))
        env = {"HOME": str(layout["home"]), "PENGUIN_HOME": str(layout["data"])}
        harness = KernelHarness(str(layout["workspace"]), kernel_env(env))
        try:
            out = {name: harness.execute(codes[name]).stdout for name in ("home", "hook", "ssh", "data_root", "network")}
        finally:
            harness.close()
    finally:
        counting.close()
        shutil.rmtree(base, ignore_errors=True)
    assert "WROTE" in out["home"] and "WROTE" in out["hook"]
    assert secrets_in(out["ssh"]) and secrets_in(out["data_root"])
    assert len(counting.hits) >= 2, counting.hits
