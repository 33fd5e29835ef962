"""System prompt assembly (docs/state.md "The system prompt"): template substitution, nothing added.

Owns placeholder substitution: plain replacements first, then the section placeholders in
one pass (replacement text is never rescanned), then a final trim. Memory and schedules are
out of scope and render empty.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from datetime import date

from .skills import SkillInfo, skill_metadata_lines
from .system_config import SystemConfig

_SECTION_RE = re.compile(r"\{\{(MEMORY|VAULT|SKILLS|SCHEDULES)\}\}")


@dataclass
class PromptContext:
    agent_id: str
    project_dir: str
    session_id: str
    cwd: str
    provider: str
    model_id: str
    agents_md: str = ""
    vault_keys: tuple[str, ...] = ()
    skills: tuple[SkillInfo, ...] = ()
    today: date | None = None


def _vault_key_lines(ctx: PromptContext) -> str:
    return "\n".join(f"- {key}" for key in ctx.vault_keys)


def assemble_system_prompt(config: SystemConfig, ctx: PromptContext) -> str:
    vault_keys = _vault_key_lines(ctx) if config.vault.enabled else ""
    skill_lines = skill_metadata_lines(list(ctx.skills)) if config.skills.enabled else ""
    simple = {
        "{{AGENTS_MD}}": ctx.agents_md.strip(),
        "{{VAULT_KEYS}}": vault_keys,
        "{{SKILL_METADATA}}": skill_lines,
        "{{AGENT_ID}}": ctx.agent_id,
        "{{PROJECT_DIR}}": ctx.project_dir,
        "{{SESSION_ID}}": ctx.session_id,
        "{{CWD}}": ctx.cwd,
        "{{PROVIDER}}": ctx.provider,
        "{{MODEL_ID}}": ctx.model_id,
        "{{PLATFORM}}": platform.system().lower(),
        "{{OS_VERSION}}": platform.release(),
        "{{SHELL}}": os.environ.get("SHELL") or "/bin/bash",
        "{{DATE}}": (ctx.today or date.today()).strftime("%Y-%m-%d"),
    }
    text = config.system_prompt
    for placeholder, value in simple.items():
        text = text.replace(placeholder, value)
    sections = {
        "MEMORY": "",
        "SCHEDULES": "",
        "VAULT": config.vault.prompt.replace("{{VAULT_KEYS}}", vault_keys) if config.vault.enabled else "",
        "SKILLS": config.skills.prompt.replace("{{SKILL_METADATA}}", skill_lines)
        if config.skills.enabled
        else "",
    }
    text = _SECTION_RE.sub(lambda m: sections[m.group(1)], text)
    return text.strip()
