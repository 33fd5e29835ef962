"""`agent_state/system_config.yaml`: the agent's model parameters, loop limits, compaction,
tools and MCP servers (docs/state.md "system_config.yaml").

Owns parsing and validation into `SystemConfig` (a bad field is a one-line `ConfigError`
naming the file and the field) and the default document seeded for a new agent. Keys are
not deep-merged with defaults: a missing key falls back where it is used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import ValidationError

from ..environment.types import ToolDefinitionConfig
from ..interfaces import THINKING_LEVELS, MCPServerConfig
from ..private_files import read_private_text
from .config_files import parse_config, read_config_text
from .errors import ConfigError
from .prompts import (
    DEFAULT_COMPACTION_PROMPT,
    DEFAULT_SKILLS_PROMPT,
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_VAULT_PROMPT,
)

DEFAULT_MAX_TOKENS = 32000
DEFAULT_THINKING_LEVEL = "medium"
DEFAULT_REQUEST_TIMEOUT_MS = 120000
DEFAULT_MAX_CONTEXT_LENGTH = 256000


@dataclass
class CompactionConfig:
    max_context_length: int = DEFAULT_MAX_CONTEXT_LENGTH
    max_session_turns: int = -1
    mode: str = "summarize"
    prompt: str = DEFAULT_COMPACTION_PROMPT


@dataclass
class SectionConfig:
    """A prompt section that can be switched off (`vault`, `skills`)."""

    enabled: bool = True
    prompt: str = ""


@dataclass
class SystemConfig:
    system_prompt: str
    name: str | None = None
    description: str | None = None
    version: int = 1
    max_turns: int = -1
    max_tokens: int = DEFAULT_MAX_TOKENS
    thinking_level: str | None = None  # None: fall back to the project default, then medium
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    # `model.connectTimeoutMs` / `model.answerBudgetMs`; None: the model's defaults (10 s per
    # attempt / 30 s for a run of unanswered attempts, docs/model.md); ≤ 0 disables either.
    connect_timeout_ms: int | None = None
    answer_budget_ms: int | None = None
    compaction: CompactionConfig = field(default_factory=CompactionConfig)
    vault: SectionConfig = field(default_factory=lambda: SectionConfig(prompt=DEFAULT_VAULT_PROMPT))
    skills: SectionConfig = field(default_factory=lambda: SectionConfig(prompt=DEFAULT_SKILLS_PROMPT))
    builtin_tools: list[ToolDefinitionConfig] | None = None  # None: the full default toolset
    mcp_servers: list[MCPServerConfig] = field(default_factory=list)


def default_system_config_document() -> dict[str, Any]:
    """The document written to a new agent's `system_config.yaml`."""
    return {
        "name": "default_agent",
        "description": "A general-purpose assistant.",
        "version": 1,
        "system_prompt": DEFAULT_SYSTEM_PROMPT,
        "max_turns": -1,
        "model": {
            "max_tokens": DEFAULT_MAX_TOKENS,
            "thinking_level": DEFAULT_THINKING_LEVEL,
            "timeoutMs": DEFAULT_REQUEST_TIMEOUT_MS,
        },
        "compaction": {
            "max_context_length": DEFAULT_MAX_CONTEXT_LENGTH,
            "max_session_turns": -1,
            "mode": "summarize",
            "prompt": DEFAULT_COMPACTION_PROMPT,
        },
        "vault": {"enabled": True, "prompt": DEFAULT_VAULT_PROMPT},
        "skills": {"enabled": True, "prompt": DEFAULT_SKILLS_PROMPT},
        "tools": {"mcpServers": []},
    }


def dump_system_config_document(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100000)


class _Reader:
    """Typed access to one YAML document, raising ConfigError with a dotted field path."""

    def __init__(self, file: str, data: dict[str, Any]) -> None:
        self.file = file
        self.data = data

    def table(self, key: str) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ConfigError(self.file, key, "must be a mapping")
        return value

    def get(self, table: dict[str, Any], path: str, key: str, kind: type, default: Any) -> Any:
        if key not in table or table[key] is None:
            return default
        value = table[key]
        if (kind is int and (isinstance(value, bool) or not isinstance(value, int))) or not isinstance(
            value, kind
        ):
            names = {int: "an integer", str: "a string", bool: "true or false", list: "a list"}
            raise ConfigError(
                self.file, f"{path}{key}", f"must be {names.get(kind, kind.__name__)}, got {value!r}"
            )
        return value


def _parse_tools(reader: _Reader) -> tuple[list[ToolDefinitionConfig] | None, list[MCPServerConfig]]:
    tools = reader.table("tools")
    builtin_raw = reader.get(tools, "tools.", "builtin", list, None)
    builtin: list[ToolDefinitionConfig] | None = None
    if builtin_raw is not None:
        builtin = []
        for i, entry in enumerate(builtin_raw):
            try:
                builtin.append(ToolDefinitionConfig.model_validate(entry))
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first.get("loc", ()))
                where = f"tools.builtin[{i}]" + (f".{loc}" if loc else "")
                raise ConfigError(reader.file, where, first.get("msg", "invalid")) from None
    servers: list[MCPServerConfig] = []
    for i, entry in enumerate(reader.get(tools, "tools.", "mcpServers", list, [])):
        if not isinstance(entry, dict):
            raise ConfigError(reader.file, f"tools.mcpServers[{i}]", "must be a mapping with name and config")
        config = entry.get("config", {})
        if not isinstance(config, dict):
            raise ConfigError(reader.file, f"tools.mcpServers[{i}].config", "must be a mapping")
        servers.append(MCPServerConfig(name=str(entry.get("name", "")), config=dict(config)))
    return builtin, servers


def parse_system_config(file: str, data: Any) -> SystemConfig:
    if not isinstance(data, dict):
        raise ConfigError(file, None, "must be a YAML mapping")
    r = _Reader(file, data)
    prompt = r.get(data, "", "system_prompt", str, None)
    if prompt is None:
        raise ConfigError(file, "system_prompt", "is required")
    model = r.table("model")
    thinking = r.get(model, "model.", "thinking_level", str, None)
    if thinking is not None and thinking not in THINKING_LEVELS:
        raise ConfigError(
            file, "model.thinking_level", f"must be one of {', '.join(THINKING_LEVELS)}, got {thinking!r}"
        )
    comp = r.table("compaction")
    mode = r.get(comp, "compaction.", "mode", str, "summarize")
    vault, skills = r.table("vault"), r.table("skills")
    builtin, servers = _parse_tools(r)
    return SystemConfig(
        system_prompt=prompt,
        name=r.get(data, "", "name", str, None),
        description=r.get(data, "", "description", str, None),
        version=r.get(data, "", "version", int, 1),
        max_turns=r.get(data, "", "max_turns", int, -1),
        max_tokens=r.get(model, "model.", "max_tokens", int, DEFAULT_MAX_TOKENS),
        thinking_level=thinking,
        request_timeout_ms=r.get(model, "model.", "timeoutMs", int, DEFAULT_REQUEST_TIMEOUT_MS),
        connect_timeout_ms=r.get(model, "model.", "connectTimeoutMs", int, None),
        answer_budget_ms=r.get(model, "model.", "answerBudgetMs", int, None),
        compaction=CompactionConfig(
            max_context_length=r.get(
                comp, "compaction.", "max_context_length", int, DEFAULT_MAX_CONTEXT_LENGTH
            ),
            max_session_turns=r.get(comp, "compaction.", "max_session_turns", int, -1),
            mode=mode if mode in ("summarize", "discard") else "summarize",
            prompt=r.get(comp, "compaction.", "prompt", str, DEFAULT_COMPACTION_PROMPT),
        ),
        vault=SectionConfig(
            enabled=r.get(vault, "vault.", "enabled", bool, True),
            prompt=r.get(vault, "vault.", "prompt", str, DEFAULT_VAULT_PROMPT),
        ),
        skills=SectionConfig(
            enabled=r.get(skills, "skills.", "enabled", bool, True),
            prompt=r.get(skills, "skills.", "prompt", str, DEFAULT_SKILLS_PROMPT),
        ),
        builtin_tools=builtin,
        mcp_servers=servers,
    )


# libyaml's parser when PyYAML was built with it: the same safe types, and a deeply nested document
# is refused in milliseconds (the pure-Python parser takes seconds to reach its RecursionError).
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_SAFE_LOADER)  # a safe loader: plain data only


def load_system_config(path: str | os.PathLike[str]) -> SystemConfig:
    file = str(path)
    try:
        text = read_config_text(path, read_private_text)  # under the data root: private, or refused
    except FileNotFoundError:
        raise ConfigError(file, None, "file not found") from None
    try:
        data = parse_config(file, _load_yaml, text)
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise ConfigError(file, None, f"invalid YAML: {detail}") from None
    return parse_system_config(file, data)
