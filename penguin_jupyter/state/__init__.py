"""Agent state and project configuration on disk (docs/state.md).

Owns the data-root layout, `.project_config.toml` (models and credentials),
`system_config.yaml`, `AGENTS.md`, skills, the vault and system prompt assembly. Sessions
and agents (`session.py`, `agent.py`) read these; nothing here runs a model.
"""

from . import paths, project_config
from .errors import ConfigError
from .layout import ensure_agent_layout
from .project_config import (
    ModelEntry,
    ModelRef,
    ProjectConfig,
    add_model,
    load_project_config,
    provider_env_vars,
    save_project_config,
    update_project_config,
)
from .prompts import DEFAULT_COMPACTION_PROMPT, DEFAULT_SYSTEM_PROMPT
from .skills import SkillInfo, list_skills
from .system_config import CompactionConfig, SystemConfig, load_system_config, parse_system_config
from .system_prompt import PromptContext, assemble_system_prompt
from .vault import load_vault, set_vault_value

__all__ = [
    "DEFAULT_COMPACTION_PROMPT",
    "DEFAULT_SYSTEM_PROMPT",
    "CompactionConfig",
    "ConfigError",
    "ModelEntry",
    "ModelRef",
    "ProjectConfig",
    "PromptContext",
    "SkillInfo",
    "SystemConfig",
    "add_model",
    "assemble_system_prompt",
    "ensure_agent_layout",
    "list_skills",
    "load_project_config",
    "load_system_config",
    "load_vault",
    "parse_system_config",
    "paths",
    "project_config",
    "provider_env_vars",
    "save_project_config",
    "set_vault_value",
    "update_project_config",
]
