"""A data root someone else prepared is refused, not trusted (issue 25, defect 6).

Written as the second user on a shared machine would attack: a world-writable or foreign
`PENGUIN_HOME`, a `traces` symlink planted to collect the traces, a `.session.lock` symlink
planted to overwrite its target, a `system_config.yaml` planted with an MCP command. Each is
refused with one line naming the path, before anything is written through it or any process
starts; on 838a3dd the traces went through the symlink, the lock's target was overwritten and
the MCP command ran at the session's first run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from penguin_jupyter import create_agent
from penguin_jupyter.omni import user_text
from penguin_jupyter.state import paths
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace.session_lock import LOCK_FILE_NAME
from tests.support.session import allow, collect, configure_model

pytestmark = pytest.mark.security

OTHER_UID = 65534  # nobody
as_root_only = pytest.mark.skipif(os.getuid() != 0, reason="making a file another user's needs root")


async def attempt(root: Path) -> str | None:
    """Open the default agent of `root`, start a session and run one Task; the one-line refusal
    (None when everything was used)."""
    try:
        agent = await create_agent(root=root)
        session = await agent.create_session(workspace_dir=root.parent)
        try:
            await collect(session.run([user_text("hi")], approve=allow))
        finally:
            await session.aclose()
    except Exception as exc:  # the refusal (on old code: nothing refused)
        return str(exc)
    return None


def seeded_root(tmp_path: Path, server: ScriptedModelServer) -> Path:
    """A data root made by penguin itself, with a model."""
    root = tmp_path / "data"
    configure_model(root, server)
    return root


async def test_a_group_writable_data_root_is_refused_and_left_untouched(tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o777)
    refusal = await attempt(root)
    assert refusal == f"refusing {root}: writable by group or others (run: chmod go-w {root})"
    assert os.listdir(root) == []


@as_root_only
async def test_a_data_root_owned_by_another_user_is_refused(tmp_path):
    root = tmp_path / "theirs"
    root.mkdir(mode=0o700)
    os.chown(root, OTHER_UID, OTHER_UID)
    refusal = await attempt(root)
    assert refusal == f"refusing {root}: owned by uid {OTHER_UID}, not by you (uid {os.getuid()})"
    assert os.listdir(root) == []


async def test_a_planted_traces_symlink_is_refused_and_receives_nothing(tmp_path):
    collector = tmp_path / "collector"
    collector.mkdir()
    with ScriptedModelServer([{"text": "hello"}]) as server:
        root = seeded_root(tmp_path, server)
        await create_agent(root=root)
        traces = paths.traces_dir(root, paths.DEFAULT_PROJECT_ID, paths.DEFAULT_AGENT_ID)
        traces.rmdir()
        traces.symlink_to(collector, target_is_directory=True)
        refusal = await attempt(root)
    assert refusal == f"refusing {traces}: it is a symlink (nothing under the data root is followed)"
    assert list(collector.rglob("*")) == []


async def test_a_planted_session_lock_symlink_is_not_followed(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    with ScriptedModelServer([{"text": "hello"}]) as server:
        root = seeded_root(tmp_path, server)
        agent = await create_agent(root=root)
        session = await agent.create_session(workspace_dir=tmp_path)
        session_id = str(session.session_id)
        await collect(session.run([user_text("hi")], approve=allow))
        await session.aclose()
        lock = paths.session_scratchpad_dir(root, paths.DEFAULT_PROJECT_ID, paths.DEFAULT_AGENT_ID, session_id)
        lock = lock / LOCK_FILE_NAME
        lock.unlink()
        lock.symlink_to(precious)
        with pytest.raises(Exception) as refused:
            resumed = await agent.resume_session(session_id)
            await resumed.aclose()
    assert str(refused.value) == f"refusing {lock}: it is a symlink (nothing under the data root is followed)"
    assert precious.read_text() == "keep me\n"


def plant_mcp_command(root: Path, marker: Path) -> Path:
    config = paths.system_config_path(root, paths.DEFAULT_PROJECT_ID, paths.DEFAULT_AGENT_ID)
    doc = yaml.safe_load(config.read_text(encoding="utf-8"))
    doc.setdefault("tools", {})["mcpServers"] = [
        {"name": "planted", "config": {"command": "sh", "args": ["-c", f"touch {marker}"]}}
    ]
    config.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return config


def _foreign(root: Path) -> Path:
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.lchown(Path(directory) / name, OTHER_UID, OTHER_UID)
    os.chown(root, OTHER_UID, OTHER_UID)
    return root


PLANTS = {
    "config-writable-by-others": lambda root, config: (config.chmod(0o666), config)[1],
    "root-writable-by-group": lambda root, config: (root.chmod(0o770), root)[1],
    "root-of-another-user": lambda root, config: _foreign(root),
}


@pytest.mark.parametrize("plant", list(PLANTS))
async def test_a_planted_system_config_starts_no_mcp_process(tmp_path, plant):
    if plant == "root-of-another-user" and os.getuid() != 0:
        pytest.skip("making a file another user's needs root")
    marker = tmp_path / "mcp_started"
    with ScriptedModelServer([{"text": "hello"}]) as server:
        root = seeded_root(tmp_path, server)
        await create_agent(root=root)
        config = plant_mcp_command(root, marker)
        named = PLANTS[plant](root, config)
        refusal = await attempt(root)
    assert not marker.exists(), "the planted MCP command ran"
    assert server.requests == []
    assert refusal is not None and refusal.startswith(f"refusing {named}: "), refusal


@as_root_only
def test_a_file_of_another_user_under_the_data_root_is_neither_truncated_nor_written(tmp_path):
    from penguin_jupyter.private_files import UnsafePathError, write_private_bytes

    scratch = tmp_path / "scratchpad"
    scratch.mkdir(mode=0o700)
    planted = scratch / "image.png"
    planted.write_bytes(b"theirs")
    os.chown(planted, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafePathError, match=f"refusing {planted}: owned by uid {OTHER_UID}"):
        write_private_bytes(planted, b"ours")
    assert planted.read_bytes() == b"theirs"


@pytest.mark.kernel
def test_a_cell_on_a_group_writable_data_root_says_so_in_one_line(tmp_path):
    from tests.support.kernel import KernelHarness, kernel_env

    root = tmp_path / "shared"
    root.mkdir()
    root.chmod(0o775)
    kernel = KernelHarness(str(tmp_path), kernel_env({"PENGUIN_HOME": str(root)}))
    try:
        kernel.execute("%load_ext penguin_jupyter")
        result = kernel.execute("%%penguin\nSay hello", timeout=120)
    finally:
        kernel.close()
    assert result.reply["content"]["status"] == "ok"
    assert result.stderr == (
        f"penguin: could not start a session: refusing {root}: writable by group or others "
        f"(run: chmod go-w {root})\n"
    )
    assert os.listdir(root) == []


def test_a_planted_config_lock_symlink_is_not_followed(tmp_path):
    from penguin_jupyter.private_files import UnsafePathError
    from penguin_jupyter.state import add_model
    from penguin_jupyter.state.file_lock import lock_file_for

    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    root = tmp_path / "data"
    add_model(root, "default_project", provider="openai", model_id="a", api_key="sk-aaaaaaaaaa")
    lock = lock_file_for(paths.project_config_path(root, "default_project"))
    lock.unlink()
    lock.symlink_to(precious)
    with pytest.raises(UnsafePathError) as refused:
        add_model(root, "default_project", provider="openai", model_id="b")
    assert str(refused.value) == f"refusing {lock}: it is a symlink (nothing under the data root is followed)"
    assert precious.read_text() == "keep me\n"
