"""The one id rule for agent and project ids: the reference's own table (valid and invalid ids),
the one-line error naming the field, and that a refused id creates nothing anywhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.state import add_model, load_project_config, paths
from penguin_jupyter.state.ids import InvalidIdError, is_valid_id, require_id

VALID = ["default_project", "default_agent", "my-agent", "agent-1", "ABC_123"]
# Only ASCII letters, digits, `_` and `-`: dots, blanks, path separators and any other
# character are refused (the reference's table, plus a trailing-newline and `.. ` variant).
INVALID = [
    "",
    "   ",
    "a b",
    "a\tb",
    " lead",
    "trail ",
    "a/b",
    "a\\b",
    ".",
    "..",
    "...",
    "a.b",
    "v1.0",
    ".hidden",
    "中文ok",
    "emoji😀",
    ".. ",
    "agent\n",
]


def _tree(root: Path) -> list[str]:
    """Every path under `root` (empty when it does not exist)."""
    if not root.exists():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("value", VALID)
def test_valid_ids_are_accepted_for_both_fields(value):
    assert is_valid_id(value)
    assert require_id("agent_id", value) == value
    assert require_id("project_id", value) == value


@pytest.mark.parametrize("value", INVALID)
def test_invalid_ids_are_refused_with_one_line_naming_the_field(value):
    assert not is_valid_id(value)
    with pytest.raises(InvalidIdError) as err:
        require_id("agent_id", value)
    message = str(err.value)
    assert message == f"invalid agent_id {value!r}: use letters, digits, _ and -"
    assert "\n" not in message
    assert isinstance(err.value, ValueError)


def test_non_strings_are_not_ids():
    assert not is_valid_id(None)
    assert not is_valid_id(7)
    with pytest.raises(InvalidIdError, match=r"^invalid project_id None: "):
        require_id("project_id", None)


def test_error_names_the_field_and_the_id():
    with pytest.raises(ValueError, match=r"^invalid agent_id ' lead': use letters, digits, _ and -$"):
        require_id("agent_id", " lead")
    with pytest.raises(ValueError, match=r"^invalid project_id '\.\.': use letters, digits, _ and -$"):
        require_id("project_id", "..")


@pytest.mark.parametrize("value", INVALID)
async def test_create_agent_refuses_a_bad_agent_id_before_creating_anything(tmp_path, value):
    root = tmp_path / "data"
    with pytest.raises(InvalidIdError, match=r"^invalid agent_id "):
        await create_agent(value, root=root)
    assert _tree(tmp_path) == []


@pytest.mark.parametrize("value", INVALID)
async def test_create_agent_refuses_a_bad_project_id_before_creating_anything(tmp_path, value):
    root = tmp_path / "data"
    with pytest.raises(InvalidIdError, match=r"^invalid project_id "):
        await create_agent(project_id=value, root=root)
    assert _tree(tmp_path) == []


async def test_the_default_ids_are_valid_and_create_the_layout(tmp_path):
    agent = await create_agent(root=tmp_path)
    assert (agent.project_id, agent.agent_id) == ("default_project", "default_agent")
    assert agent.agent_dir == tmp_path / "default_project" / "agents" / "default_agent"
    assert (agent.agent_state_dir / "system_config.yaml").is_file()


def test_project_config_refuses_a_project_id_outside_the_data_root(tmp_path):
    root = tmp_path / "nest" / "data"
    root.mkdir(parents=True)
    before = _tree(tmp_path)
    with pytest.raises(InvalidIdError, match=r"^invalid project_id '\.\.'"):
        add_model(root, "..", provider="local", model_id="m", base_url="http://127.0.0.1:1/v1")
    with pytest.raises(InvalidIdError, match=r"^invalid project_id '\.\./x'"):
        load_project_config(root, "../x")
    assert _tree(tmp_path) == before
    assert not (tmp_path / "nest" / ".project_config.toml").exists()


def test_every_path_helper_checks_its_ids(tmp_path):
    with pytest.raises(InvalidIdError, match="project_id"):
        paths.traces_dir(tmp_path, "a.b", "default_agent")
    with pytest.raises(InvalidIdError, match="agent_id"):
        paths.vault_path(tmp_path, "default_project", "..")
    with pytest.raises(InvalidIdError, match="agent_id"):
        paths.new_temp_workspace(tmp_path, "default_project", "a/b")
    assert _tree(tmp_path) == []


async def test_a_subagent_with_a_bad_agent_id_is_simply_not_found(tmp_path):
    parent = await create_agent(root=tmp_path)
    await create_agent("helper", root=tmp_path)
    sibling = parent.sibling("helper")
    assert sibling is not None and sibling.agent_id == "helper"
    before = _tree(tmp_path)
    for bad in ("..", "a/b", " helper", "ghost"):
        assert parent.sibling(bad) is None
    assert _tree(tmp_path) == before
    assert os.listdir(tmp_path) == ["default_project"]
