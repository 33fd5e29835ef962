"""Where things live under the data root (docs/traces.md "Layout and writer", docs/state.md "Layout").

Owns path arithmetic (and the one directory it creates, a private temp workspace): the data root (`PENGUIN_HOME` or `~/.penguin/data`), the
per-project and per-agent directories, session ids and temporary workspace names. Creating
and seeding the directories is `layout.py`'s job.
"""

from __future__ import annotations

import os
import secrets
from datetime import datetime
from pathlib import Path

from ..private_files import private_dir
from .ids import require_id

DEFAULT_PROJECT_ID = "default_project"
DEFAULT_AGENT_ID = "default_agent"


def resolve_root(root: str | os.PathLike[str] | None = None) -> Path:
    """`root` if given, else `$PENGUIN_HOME`, else `~/.penguin/data`."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get("PENGUIN_HOME")
    if env:
        return Path(env).expanduser()
    return default_root()


def default_root() -> Path:
    """`~/.penguin/data`, the data root when neither a root nor `$PENGUIN_HOME` is given."""
    return Path.home() / ".penguin" / "data"


def project_dir(root: Path, project_id: str) -> Path:
    """Every project path goes through here: the id is checked before it becomes a path."""
    return root / require_id("project_id", project_id)


def project_config_path(root: Path, project_id: str) -> Path:
    return project_dir(root, project_id) / ".project_config.toml"


def agent_dir(root: Path, project_id: str, agent_id: str) -> Path:
    """Every agent path goes through here: both ids are checked before they become a path."""
    return project_dir(root, project_id) / "agents" / require_id("agent_id", agent_id)


def agent_state_dir(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_dir(root, project_id, agent_id) / "agent_state"


def system_config_path(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_state_dir(root, project_id, agent_id) / "system_config.yaml"


def agents_md_path(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_state_dir(root, project_id, agent_id) / "AGENTS.md"


def vault_path(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_state_dir(root, project_id, agent_id) / ".vault.toml"


def skills_dir(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_state_dir(root, project_id, agent_id) / "skills"


def traces_dir(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_dir(root, project_id, agent_id) / "traces"


def scratchpad_dir(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_dir(root, project_id, agent_id) / "scratchpad"


def session_scratchpad_dir(root: Path, project_id: str, agent_id: str, session_id: str) -> Path:
    return scratchpad_dir(root, project_id, agent_id) / session_id


def workspaces_dir(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_dir(root, project_id, agent_id) / "workspaces"


def shared_env_dir(root: Path, project_id: str, agent_id: str) -> Path:
    return agent_dir(root, project_id, agent_id) / "shared_env"


def new_session_id(now: datetime | None = None) -> str:
    """`session-YYYY-MM-DD-HH-mm-ss-<8 hex>` in local time."""
    stamp = (now or datetime.now()).strftime("%Y-%m-%d-%H-%M-%S")
    return f"session-{stamp}-{secrets.token_hex(4)}"


def new_temp_workspace(root: Path, project_id: str, agent_id: str) -> Path:
    """Create and return `workspaces/tmp-<8hex>`."""
    path = private_dir(workspaces_dir(root, project_id, agent_id)) / f"tmp-{secrets.token_hex(4)}"
    path.mkdir(mode=0o700)
    return path
