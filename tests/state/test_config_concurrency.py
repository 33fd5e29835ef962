"""Concurrent writes of data-root config files: nothing lost, never a half-written file.

Real processes and real threads race `add_model` on one project config (issue 17 point 2).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

from penguin_jupyter.state import add_model, load_project_config, set_vault_value
from penguin_jupyter.state.vault import load_vault

PER_WRITER = 100

_WRITER = """
import sys
from penguin_jupyter.state import add_model
root, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()  # start line: both writers begin together
for i in range(count):
    add_model(root, "default_project", provider="p", model_id=f"{tag}-{i}", base_url="http://x/v1")
"""


def _model_ids(root: Path) -> set[str]:
    return {m.model_id for m in load_project_config(root, "default_project").models}


def test_two_processes_add_models_concurrently_and_none_is_lost(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path), tag, str(PER_WRITER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    ids = _model_ids(tmp_path)
    assert len(ids) == 2 * PER_WRITER
    assert ids == {f"{t}-{i}" for t in "ab" for i in range(PER_WRITER)}
    config = tmp_path / "default_project" / ".project_config.toml"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    leftovers = [p.name for p in config.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_two_threads_add_models_concurrently_without_errors_or_losses(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def writer(tag: str) -> None:
        start.wait()
        for i in range(PER_WRITER):
            try:
                add_model(tmp_path, "default_project", provider="p", model_id=f"{tag}-{i}")
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=writer, args=(tag,)) for tag in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(_model_ids(tmp_path)) == 2 * PER_WRITER


def test_readers_never_see_a_half_written_config_while_a_writer_rewrites_it(tmp_path: Path) -> None:
    add_model(tmp_path, "default_project", provider="p", model_id="seed", api_key="k" * 5000)
    path = tmp_path / "default_project" / ".project_config.toml"
    done = threading.Event()
    bad: list[str] = []

    def reader() -> None:
        while not done.is_set():
            text = path.read_text(encoding="utf-8")
            try:
                tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                bad.append(str(exc))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(60):
            add_model(tmp_path, "default_project", provider="p", model_id=f"m-{i}", api_key="k" * 5000)
    finally:
        done.set()
        thread.join()
    assert bad == []
    assert len(_model_ids(tmp_path)) == 61


def test_vault_updates_from_threads_are_serialized(tmp_path: Path) -> None:
    vault = tmp_path / "agent_state" / ".vault.toml"
    threads = [
        threading.Thread(target=lambda n=n: [set_vault_value(vault, f"K{n}_{i}", "v") for i in range(40)])
        for n in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(load_vault(vault)) == 80
    assert stat.S_IMODE(os.stat(vault).st_mode) == 0o600
