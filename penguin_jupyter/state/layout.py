"""Creating and seeding an agent's directories on first use (docs/state.md "Layout").

Owns `ensure_agent_layout`: `agent_state/` with a default `system_config.yaml` and an empty
`AGENTS.md`, `tools/`, `skills/`, plus `traces/`, `scratchpad/`, `shared_env/` and
`workspaces/`. Existing files are never overwritten; seeding is atomic and serialized.
Everything is private: directories 0700 (the data root and project directory included,
existing ones tightened), files 0600. A data root someone else prepared is refused before
anything in it is used (docs/security.md "A data root is private or refused"): the root, every
directory of the layout and its seeded files must be yours, not symlinks, and not writable by
group or others (`UnsafePathError`, one line naming the path); so is `~/.penguin` for the
default root.
"""

from __future__ import annotations

from pathlib import Path

from ..private_files import check_private, private_dir
from .file_lock import exclusive
from .paths import (
    agent_dir,
    agent_state_dir,
    agents_md_path,
    default_root,
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
    if root == default_root():
        check_private(root.parent, follow=True)  # ~/.penguin: whoever can write it can swap `data`
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
    if check_private(config) is not None and check_private(agents_md) is not None:
        return
    with exclusive(config):  # two kernels creating the agent at once: one seeds, neither tears
        if check_private(config) is None:
            doc = default_system_config_document()
            doc["name"] = agent_id
            write_private_file(config, dump_system_config_document(doc))
        if check_private(agents_md) is None:
            write_private_file(agents_md, "")
