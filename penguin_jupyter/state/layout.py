"""Creating and seeding an agent's directories on first use (docs/state.md "Layout").

Owns `ensure_agent_layout`: `agent_state/` with a default `system_config.yaml` and an empty
`AGENTS.md`, `tools/`, `skills/`, plus `traces/`, `scratchpad/`, `shared_env/` and
`workspaces/`. Existing files are never overwritten; seeding is atomic and serialized.
Everything is private: directories 0700 (the data root and project directory included,
existing ones tightened), files 0600.
"""

from __future__ import annotations

from pathlib import Path

from ..private_files import private_dir
from .file_lock import exclusive
from .paths import (
    agent_dir,
    agent_state_dir,
    agents_md_path,
    project_dir,
    scratchpad_dir,
    shared_env_dir,
    skills_dir,
    system_config_path,
    traces_dir,
    workspaces_dir,
)
from .system_config import default_system_config_document, dump_system_config_document
from .toml_writer import write_private_file


def ensure_agent_layout(root: Path, project_id: str, agent_id: str) -> None:
    state = agent_state_dir(root, project_id, agent_id)
    for directory in (
        root,
        project_dir(root, project_id),
        agent_dir(root, project_id, agent_id).parent,
        agent_dir(root, project_id, agent_id),
        state,
        state / "tools",
        skills_dir(root, project_id, agent_id),
        traces_dir(root, project_id, agent_id),
        scratchpad_dir(root, project_id, agent_id),
        shared_env_dir(root, project_id, agent_id),
        workspaces_dir(root, project_id, agent_id),
    ):
        private_dir(directory)
    config = system_config_path(root, project_id, agent_id)
    agents_md = agents_md_path(root, project_id, agent_id)
    if config.exists() and agents_md.exists():
        return
    with exclusive(config):  # two kernels creating the agent at once: one seeds, neither tears
        if not config.exists():
            doc = default_system_config_document()
            doc["name"] = agent_id
            write_private_file(config, dump_system_config_document(doc))
        if not agents_md.exists():
            write_private_file(agents_md, "")
