"""Fixtures the environment tests share: `home`, a home folder outside /tmp (the sandbox's /tmp
is its own) holding a credential, with HOME and PENGUIN_HOME pointing at it."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sandbox_env import SECRET


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home folder outside /tmp (the sandbox's /tmp is its own) with credentials in it."""
    folder = Path(tempfile.mkdtemp(prefix="pj-sandbox-home-", dir="/var/tmp"))
    (folder / ".ssh").mkdir()
    (folder / ".ssh" / "id_rsa").write_text(SECRET)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("PENGUIN_HOME", str(folder / ".penguin" / "data"))
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)
