"""Running an escape suite as an ordinary user (root's CI runs the sandbox as root; the suites
must hold for a user without privileges too): the user `pjsandbox` that scripts/setup.sh creates,
an interpreter that user can run with this environment's packages, and the suite module run under
`runuser` in a clean environment, its `SUITE-RESULT` line read back. Used by the command sandbox's
and the sandboxed kernel's escape tests."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO_ROOT

TEST_USER = "pjsandbox"


def python_for(user: str, base: Path) -> str | None:
    """An interpreter `user` can run with this environment's packages: this one when it can reach
    it, else the system's python of the same version with a venv whose .pth adds our packages."""
    check = "import penguin_jupyter, ipykernel, jupyter_client"
    if runs_as(user, [sys.executable, "-c", check]):
        return sys.executable
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is None:
        return None
    venv = base / "venv"
    if subprocess.run(["runuser", "-u", user, "--", system, "-m", "venv", "--without-pip", str(venv)], check=False).returncode:
        return None
    python = str(venv / "bin" / "python")
    purelib = subprocess.run(
        ["runuser", "-u", user, "--", python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    if not purelib:
        return None
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "penguin-test-packages.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python if runs_as(user, [python, "-c", check]) else None


def runs_as(user: str, argv: list[str]) -> bool:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT), "HOME": "/nonexistent"}
    done = subprocess.run(["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv],
                          capture_output=True, check=False, cwd="/")  # fmt: skip
    return done.returncode == 0


def run_suite_as_ordinary_user(suite_module: str, base: Path) -> dict[str, Any]:
    """Run `python -m suite_module base/suite` as TEST_USER (skips without the user or a Python it
    can run); what the suite observed. `base` is removed afterwards; the result's "user" is
    checked to be TEST_USER's uid."""
    try:
        account = pwd.getpwnam(TEST_USER)
    except KeyError:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"no user {TEST_USER} (scripts/setup.sh creates it)")
    try:
        os.chown(base, account.pw_uid, account.pw_gid)
        python = python_for(TEST_USER, base)
        if python is None:
            pytest.skip(f"no Python that {TEST_USER} can run with this environment's packages")
        env = {
            "PATH": f"{os.path.dirname(python)}:/usr/local/bin:/usr/bin:/bin",
            "PYTHONPATH": str(REPO_ROOT),
            "HOME": str(base),
            "LANG": "C.UTF-8",
        }
        done = subprocess.run(
            ["runuser", "-u", TEST_USER, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()),
             python, "-m", suite_module, str(base / "suite")],
            capture_output=True, text=True, cwd=str(REPO_ROOT), timeout=900, check=False,
        )  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("SUITE-RESULT ")]
    assert lines, f"the suite did not finish as {TEST_USER}: {done.stderr[-3000:]}"
    observed: dict[str, Any] = json.loads(lines[-1].removeprefix("SUITE-RESULT "))
    assert observed["user"] == account.pw_uid
    return observed
