"""Installed skills: `agent_state/skills/<dir>/SKILL.md` metadata (docs/state.md "Skills").

Owns the tolerant frontmatter scan (`---` block of `key: value` lines); the directory name
is authoritative for the skill name. Only metadata reaches the system prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SkillInfo:
    name: str
    description: str | None = None


def _frontmatter(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip()] = value.strip().strip("\"'")
    return fields


def list_skills(skills_dir: Path) -> list[SkillInfo]:
    """Skills sorted by directory name; a directory without SKILL.md is not a skill."""
    try:
        dirs = sorted(p for p in skills_dir.iterdir() if p.is_dir())
    except OSError:
        return []
    skills: list[SkillInfo] = []
    for directory in dirs:
        try:
            text = (directory / "SKILL.md").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        description = _frontmatter(text).get("description") or None
        skills.append(SkillInfo(name=directory.name, description=description))
    return skills


def skill_metadata_lines(skills: list[SkillInfo]) -> str:
    """One ``- `name` — description`` line per skill (just ``- `name` `` without one)."""
    return "\n".join(f"- `{s.name}` — {s.description}" if s.description else f"- `{s.name}`" for s in skills)
