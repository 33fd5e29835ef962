"""The sandbox escape suite (docs/security.md "Sandbox"), in a real kernel under `--approve auto`
with the scripted model calling exec_command as an attacker would (tests/support/sandbox_suite.py):

* a write inside the workspace succeeds with no card; writes to $HOME,
  ~/.ipython/profile_default/startup, .git/hooks and .git/config fail;
* ~/.ssh, ~/.aws, the data root and another session's trace are not readable (hidden: empty);
* requests to a 127.0.0.1 counting server get 0 hits (direct, curl, pip's --index-url, a
  kubeconfig exec plugin, git's core.fsmonitor);
* a `setsid` / double-forked daemon stops beating once its command ended and no process of it
  is left; a symlink made inside pointing out (to ~/.ssh/id_rsa, to ~) widens nothing;
* `git blame --output=~/.ssh/authorized_keys` leaves the file as it was;
* `unsandboxed: true` and a host the project does not allow get a card saying exactly that;
* a subagent's command runs in the sandbox too.

Run twice: as the user running the tests (root in CI) and as an ordinary user (`pjsandbox`,
made by scripts/setup.sh) whose own kernel runs the suite, so bubblewrap runs unprivileged in a
user namespace. Each assertion fails without the sandbox (the same commands run unsandboxed in
`allow-all` write, read and connect: `test_without_the_sandbox_the_same_calls_escape`).
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
from tests.support.sandbox_suite import run_suite, secrets_in

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}"),
]



def _assert_confined(observed: dict[str, Any]) -> None:
    outputs = observed["outputs"]
    assert observed["first_status"] == "ok", observed["first_stderr"]
    assert observed["cards_in_auto"] == 0, "auto asked about a command it runs sandboxed"
    assert "written" in outputs["inside"] and observed["files"]["inside"]
    for escaped in ("home_pwned", "startup", "hook", "daemon_wrote", "via_link", "fsmonitor_ran", "kube_ran", "child_pwned"):
        assert not observed["files"][escaped], escaped
    assert "Read-only file system" in outputs["home"] and "Read-only file system" in outputs["startup"]
    assert "Read-only file system" in outputs["hook"] and "Read-only file system" in outputs["gitconfig"]
    assert "alias" not in observed["git_config"] and "evil" not in observed["git_config"]
    for call_id, text in outputs.items():
        assert not secrets_in(text), (call_id, text)
    assert all(leak is None or not secrets_in(leak) for leak in observed["leaks"].values()), observed["leaks"]
    assert observed["hits"] == [], f"the counting server was reached: {observed['hits']}"
    assert observed["authorized_keys"] == "ssh-ed25519 AAAA the-owner\n"
    assert observed["heartbeat_before"] and observed["heartbeat_before"] == observed["heartbeat_after"]
    assert observed["daemon_processes"] == []
    for call_id, decision in observed["decisions"].items():
        assert decision["decision"] == "allow", call_id
        assert "in the sandbox (writes: the workspace and /tmp; network: none)" in decision["reason"], decision
        assert "[sandboxed: writes only in the workspace and /tmp; network: none]" in outputs[call_id]
    # what needs more gets a card saying exactly what
    assert observed["second_cards"] == 2
    texts = "\n".join(observed["second_card_texts"])
    assert "asked: runs outside the sandbox (unsandboxed: true) with full access to your files and network" in texts
    assert "asked: needs network access to evil.example (not among the project's allowed hosts)" in texts
    assert not observed["files"]["outside_ok"]
    # a subagent's command: sandboxed, no card (the one card was run_subagent's)
    assert observed["third_status"] == "ok" and observed["third_cards"] == 1
    assert observed["files"]["child_inside"]
    assert "allowed by the cell's mode (auto); in the sandbox" in observed["third_text"]
    assert "sandbox: available" in observed["config"]


def _base() -> Path:
    # not under /tmp: the sandbox has its own /tmp, so a home folder there is not what it hides
    return Path(tempfile.mkdtemp(prefix="pj-escape-", dir="/var/tmp"))


def test_escape_suite_in_a_real_kernel_with_approve_auto():
    base = _base()
    try:
        observed = run_suite(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert observed["user"] == os.getuid()
    _assert_confined(observed)


@pytest.mark.skipif(os.getuid() != 0, reason="already an ordinary user: the other test is this run")
def test_escape_suite_as_an_ordinary_user_with_bwrap_in_a_user_namespace():
    _assert_confined(run_suite_as_ordinary_user("tests.support.sandbox_suite", _base()))
