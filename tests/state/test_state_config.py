"""Agent state on disk: layout seeding, project config round-trip, bad configs, system prompt."""

from __future__ import annotations

import os
import stat
import tomllib
from datetime import date
from pathlib import Path

import pytest

from penguin_jupyter.state import (
    DEFAULT_COMPACTION_PROMPT,
    ConfigError,
    PromptContext,
    add_model,
    assemble_system_prompt,
    ensure_agent_layout,
    list_skills,
    load_project_config,
    load_system_config,
    load_vault,
    parse_system_config,
    paths,
    set_vault_value,
)


def test_root_defaults_to_penguin_home(tmp_path, monkeypatch):
    monkeypatch.setenv("PENGUIN_HOME", str(tmp_path / "data"))
    assert paths.resolve_root() == tmp_path / "data"
    monkeypatch.delenv("PENGUIN_HOME")
    assert paths.resolve_root() == Path.home() / ".penguin" / "data"
    assert paths.resolve_root(tmp_path) == tmp_path


def test_session_id_format():
    import re

    sid = paths.new_session_id()
    assert re.fullmatch(r"session-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-[0-9a-f]{8}", sid)


def test_layout_seeded_once(tmp_path):
    ensure_agent_layout(tmp_path, "proj", "bot")
    agent = tmp_path / "proj" / "agents" / "bot"
    for sub in (
        "agent_state/skills",
        "agent_state/tools",
        "traces",
        "scratchpad",
        "workspaces",
        "shared_env",
    ):
        assert (agent / sub).is_dir(), sub
    assert (agent / "agent_state" / "AGENTS.md").read_text() == ""
    config_file = agent / "agent_state" / "system_config.yaml"
    config = load_system_config(config_file)
    assert config.max_turns == -1
    assert config.max_tokens == 32000
    assert config.thinking_level == "medium"
    assert config.compaction.max_context_length == 256000
    assert config.compaction.prompt == DEFAULT_COMPACTION_PROMPT
    assert config.builtin_tools is None and config.mcp_servers == []
    config_file.write_text("system_prompt: custom\n")
    ensure_agent_layout(tmp_path, "proj", "bot")
    assert config_file.read_text() == "system_prompt: custom\n"
    workspace = paths.new_temp_workspace(tmp_path, "proj", "bot")
    assert (
        workspace.parent == agent / "workspaces"
        and workspace.name.startswith("tmp-")
        and len(workspace.name) == 12
    )


def test_add_model_round_trip_and_mode(tmp_path):
    cfg = add_model(
        tmp_path,
        "proj",
        provider="openai",
        model_id="gpt-x",
        base_url="http://127.0.0.1:9/v1",
        api_key='se"cret',
        client_type="openai",
        context_window=32768,
        default=True,
    )
    assert cfg.default_model is not None and str(cfg.default_model) == "(provider=openai, model_id=gpt-x)"
    add_model(tmp_path, "proj", provider="anthropic", model_id="gpt-x", vision=False, max_tokens=1000)
    add_model(
        tmp_path, "proj", provider="openai", model_id="gpt-x", max_tokens=2000
    )  # update keeps other fields
    file = tmp_path / "proj" / ".project_config.toml"
    assert stat.S_IMODE(os.stat(file).st_mode) == 0o600
    data = tomllib.loads(file.read_text())
    assert data["default_model"] == {"provider": "openai", "model_id": "gpt-x"}
    loaded = load_project_config(tmp_path, "proj")
    assert [(m.provider, m.model_id) for m in loaded.models] == [("openai", "gpt-x"), ("anthropic", "gpt-x")]
    first = loaded.get_model("openai", "gpt-x")
    assert first.client_type == "openai-chat"
    assert first.api_key == 'se"cret' and first.context_window == 32768 and first.max_tokens == 2000
    second = loaded.get_model("anthropic", "gpt-x")
    assert second.vision is False and not second.is_vision and first.is_vision


def test_api_key_falls_back_to_provider_environment(tmp_path, monkeypatch):
    add_model(tmp_path, "p", provider="anthropic", model_id="claude")
    add_model(tmp_path, "p", provider="deepseek", model_id="ds", api_key="inline")
    cfg = load_project_config(tmp_path, "p")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "unused")
    assert cfg.get_model("anthropic", "claude").resolved_api_key() == "from-env"
    assert cfg.get_model("deepseek", "ds").resolved_api_key() == "inline"


def test_missing_project_config_is_empty(tmp_path):
    cfg = load_project_config(tmp_path, "nothing")
    assert cfg.models == [] and cfg.default_model is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("models = 3\n", ".project_config.toml: models: must be an array of tables ([[models]])"),
        (
            "[[models]]\nmodel_id = 'x'\n",
            ".project_config.toml: models[0].provider: is required (a non-empty string)",
        ),
        (
            "[[models]]\nprovider = 'p'\nmodel_id = 'x'\ncontext_window = 'big'\n",
            ".project_config.toml: models[0].context_window: must be an integer, got 'big'",
        ),
        ("default_model = 'p/x'\n", ".project_config.toml: default_model: must be a {"),
        ("models = [\n", ".project_config.toml: invalid TOML:"),
    ],
)
def test_bad_project_config_is_one_line_error_naming_field(tmp_path, text, expected):
    file = tmp_path / "p" / ".project_config.toml"
    file.parent.mkdir(parents=True)
    file.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_project_config(tmp_path, "p")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(file))
    assert expected in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: x\n", "system_prompt: is required"),
        ("system_prompt: p\nmax_turns: many\n", "max_turns: must be an integer, got 'many'"),
        ("system_prompt: p\nmodel:\n  thinking_level: huge\n", "model.thinking_level: must be one of"),
        ("system_prompt: p\ncompaction: 5\n", "compaction: must be a mapping"),
        (
            "system_prompt: p\ntools:\n  builtin:\n    - name: x\n",
            "tools.builtin[0].description: Field required",
        ),
        ("system_prompt: p\ntools:\n  mcpServers: [3]\n", "tools.mcpServers[0]: must be a mapping"),
        ("system_prompt: [unclosed\n", "invalid YAML:"),
        ("- a list\n", "must be a YAML mapping"),
    ],
)
def test_bad_system_config_is_one_line_error_naming_field(tmp_path, text, expected):
    file = tmp_path / "system_config.yaml"
    file.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_system_config(file)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{file}: ")
    assert expected in message


def test_system_config_tools_and_fallbacks():
    config = parse_system_config(
        "f",
        {
            "system_prompt": "p",
            "compaction": {"mode": "weird"},
            "tools": {
                "builtin": [{"name": "read_file", "description": "d", "timeoutMs": 5, "forModel": "vision"}],
                "mcpServers": [{"name": "fx", "config": {"command": "python"}}],
            },
        },
    )
    assert config.compaction.mode == "summarize"
    assert config.builtin_tools[0].timeout_ms == 5 and config.builtin_tools[0].for_model == "vision"
    assert config.mcp_servers[0].name == "fx" and config.mcp_servers[0].config == {"command": "python"}
    assert config.thinking_level is None


def test_vault_round_trip_and_validation(tmp_path):
    file = tmp_path / ".vault.toml"
    assert load_vault(file) == {}
    set_vault_value(file, "API_TOKEN", "s3cr3t")
    assert load_vault(file) == {"API_TOKEN": "s3cr3t"}
    assert stat.S_IMODE(os.stat(file).st_mode) == 0o600
    with pytest.raises(ValueError):
        set_vault_value(file, "1BAD", "x")
    file.write_text('"bad-key" = "x"\n')
    with pytest.raises(ConfigError, match="bad-key: is not a valid environment variable name"):
        load_vault(file)


def test_skills_metadata(tmp_path):
    (tmp_path / "zeta").mkdir()
    (tmp_path / "zeta" / "SKILL.md").write_text("---\nname: other\ndescription: Plots things\n---\nbody")
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alpha" / "SKILL.md").write_text("no frontmatter")
    (tmp_path / "empty").mkdir()
    skills = list_skills(tmp_path)
    assert [(s.name, s.description) for s in skills] == [("alpha", None), ("zeta", "Plots things")]


def test_system_prompt_assembly_substitutes_and_does_not_rescan():
    config = parse_system_config(
        "f",
        {
            "system_prompt": "A={{AGENT_ID}} M={{MODEL_ID}} P={{PROVIDER}} C={{CWD}} D={{DATE}}\n"
            "[dev]{{AGENTS_MD}}[/dev]\n{{VAULT}}\n{{SKILLS}}\n{{MEMORY}}{{SCHEDULES}}\n",
            "vault": {"prompt": "Vault:\n{{VAULT_KEYS}} {{SKILLS}}"},
            "skills": {"prompt": "Skills:\n{{SKILL_METADATA}}"},
        },
    )
    from penguin_jupyter.state import SkillInfo

    ctx = PromptContext(
        agent_id="bot",
        project_dir="/data/p",
        session_id="sid",
        cwd="/w",
        provider="openai",
        model_id="m1",
        agents_md="  be nice  \n",
        vault_keys=("A_KEY", "B_KEY"),
        skills=(SkillInfo("plot", "Plots"), SkillInfo("bare")),
        today=date(2026, 3, 4),
    )
    prompt = assemble_system_prompt(config, ctx)
    assert prompt == (
        "A=bot M=m1 P=openai C=/w D=2026-03-04\n[dev]be nice[/dev]\n"
        "Vault:\n- A_KEY\n- B_KEY {{SKILLS}}\nSkills:\n- `plot` — Plots\n- `bare`"
    )
    config.vault.enabled = False
    assert "Vault" not in assemble_system_prompt(config, ctx)


def test_unknown_keys_survive_a_rewrite(tmp_path):
    file = tmp_path / "p" / ".project_config.toml"
    file.parent.mkdir(parents=True)
    file.write_text(
        'name = "Demo"\n\n[ui]\ntheme = "dark"\n\n[[models]]\nprovider = "openai"\nmodel_id = "m"\nfast_mode = true\n'
        'created_at = "2026-01-01"\npricing = { unit = "usd_per_mtok", cache_read = 0.1, cache_write = 1.0, output = 2.5 }\n'
    )
    add_model(tmp_path, "p", provider="openai", model_id="m", api_key="k")
    data = tomllib.loads(file.read_text())
    assert data["name"] == "Demo" and data["ui"] == {"theme": "dark"}
    entry = data["models"][0]
    assert entry["pricing"] == {"unit": "usd_per_mtok", "cache_read": 0.1, "cache_write": 1.0, "output": 2.5}
    assert entry["created_at"] == "2026-01-01" and entry["fast_mode"] is True and entry["api_key"] == "k"
