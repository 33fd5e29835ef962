"""Files a folder supplies are bounded (issue 36, defect 6): the workspace's `.env` and
`.penguin/approvals.toml` — files whoever wrote the folder controls, and git stores symlinks —
are read only when they are regular files under their cap, else refused in one line naming the
file; with the administrator's `read_dotenv = false` the `.env` is not opened at all.

As an attacker, each read runs in a child process capped at 512 MiB of address space and 60 s:
* `.env` and `approvals.toml` as symlinks to `/dev/zero`: on 3758335 a `MemoryError` after
  seconds (the read had no bound); now one line each, nothing read.
* the same files as FIFOs (nobody ever writes): on 3758335 the open blocked until the child was
  killed; now refused before opening.
* a 2 MB `.env`: refused ("larger than 1 MB").
* `read_dotenv = false` with a `.env` holding a credential: on 3758335 the file was still read
  for redaction (its value became a secret of the session's redactor); now it is never opened.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

MEMORY_CAP = 512 * 1024 * 1024

CHILD = r"""
import json, sys
from penguin_jupyter.state.approval_rules import read_workspace_rules
from penguin_jupyter.state.dotenv import workspace_credentials
from penguin_jupyter.state.errors import ConfigError
from penguin_jupyter.state.secrets import collect_secrets

workspace = sys.argv[1]
found = workspace_credentials(workspace)
out = {"dotenv": found.notice(), "keys": dict(found.keys)}
try:
    read_workspace_rules(workspace)
    out["rules"] = None
except ConfigError as exc:
    out["rules"] = str(exc)
out["secrets"] = [secret.name for secret in collect_secrets(workspace=workspace, environ={}).secrets]
print(json.dumps(out))
"""


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _read_in_child(workspace: Path, policy: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("PENGUIN_POLICY", None)
    if policy is not None:
        env["PENGUIN_POLICY"] = str(policy)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(workspace)],
        env=env, capture_output=True, text=True, timeout=60, preexec_fn=_cap,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _folder(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    workspace = tmp_path / name
    (workspace / ".penguin").mkdir(parents=True)
    return workspace, workspace / ".env", workspace / ".penguin" / "approvals.toml"


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_dotenv_and_rules_file_that_are_not_regular_files_are_refused_in_one_line(tmp_path, kind):
    workspace, dotenv, rules = _folder(tmp_path, kind)
    for path in (dotenv, rules):
        if kind == "fifo":
            os.mkfifo(path)
        else:
            os.symlink("/dev/zero", path)
    try:
        out = _read_in_child(workspace)
    except subprocess.TimeoutExpired:
        pytest.fail("reading the folder's files hung (a FIFO was opened)")
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert out["dotenv"] == f"penguin: {dotenv}: cannot read it: it is {what}, not a regular file; nothing read from it"
    assert out["rules"] == f"{rules}: cannot read (it is {what}, not a regular file)"
    assert out["keys"] == {} and out["secrets"] == []


def test_a_dotenv_above_the_cap_is_refused(tmp_path):
    workspace, dotenv, _ = _folder(tmp_path, "big")
    dotenv.write_text("OPENAI_API_KEY=sk-" + "x" * 40 + "\n" + "# padding\n" * 220_000)
    out = _read_in_child(workspace)
    assert out["dotenv"] == f"penguin: {dotenv}: cannot read it: it is larger than 1 MB; nothing read from it"
    assert out["keys"] == {}


def test_read_dotenv_false_means_the_dotenv_is_never_opened(tmp_path):
    workspace, dotenv, _ = _folder(tmp_path, "policy")
    dotenv.write_text("OPENAI_API_KEY=sk-from-the-folder-0123456789\nDB_PASSWORD=hunter2-hunter2\n")
    policy = tmp_path / "policy.toml"
    policy.write_text("read_dotenv = false\n")
    allowed = _read_in_child(workspace)
    assert allowed["keys"] == {"OPENAI_API_KEY": "sk-from-the-folder-0123456789"}
    assert "DB_PASSWORD" in allowed["secrets"]  # without the policy the file is read (and redacted)
    out = _read_in_child(workspace, policy)
    assert out == {"dotenv": None, "keys": {}, "rules": None, "secrets": []}
    os.remove(dotenv)
    os.mkfifo(dotenv)  # were it opened at all, this would hang the child
    assert _read_in_child(workspace, policy) == out
