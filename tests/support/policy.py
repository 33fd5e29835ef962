"""Test support: the administrator's policy for an in-process test.

Where the policy is read from is decided once per process, from the environment the process
was started with (`state/admin_policy.py`), so `monkeypatch.setenv("PENGUIN_POLICY", …)` inside
pytest changes nothing — as it changes nothing for code in a kernel. `policy_named` sets what a
`PENGUIN_POLICY` at process start would have decided; kernel tests pass the variable in the
kernel's environment instead (`tests/support/kernel.py` `kernel_env`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from penguin_jupyter.state import admin_policy


def policy_named(monkeypatch: pytest.MonkeyPatch, path: str | os.PathLike[str]) -> None:
    """The policy file is `path`, as if `PENGUIN_POLICY` had named it when the process started."""
    monkeypatch.setattr(admin_policy, "_FIXED_PATH", (Path(path), True))
