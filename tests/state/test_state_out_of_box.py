"""Out-of-the-box model access: a workspace `.env`, and a model agenthub knows that the
project config does not list (credentials from the provider's environment variable)."""

from __future__ import annotations

import os

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.state.dotenv import parse_dotenv, workspace_credentials
from penguin_jupyter.state.model_catalog import catalogue_entry


def test_parse_dotenv_grammar():
    values, bad = parse_dotenv(
        "# comment\n\nOPENAI_API_KEY=sk-abc\nexport A_URL = 'http://x/v1' \nQ=\"has # hash\"\nC=v # note\nnot a line\n"
    )
    assert values == {"OPENAI_API_KEY": "sk-abc", "A_URL": "http://x/v1", "Q": "has # hash", "C": "v"}
    assert bad == [7]


def test_workspace_credentials_never_override_an_exported_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-mine-exported")
    monkeypatch.delenv("PENGUIN_T_API_KEY", raising=False)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-theirs\nPENGUIN_T_API_KEY=k-from-file\n")
    found = workspace_credentials(tmp_path)
    assert dict(found.keys) == {"PENGUIN_T_API_KEY": "k-from-file"} and found.shadowed == ("OPENAI_API_KEY",)
    assert "PENGUIN_T_API_KEY" not in os.environ  # never exported into the kernel
    assert workspace_credentials(tmp_path / "missing").notice() is None


def test_workspace_credentials_bad_line_names_file_and_line_not_content(tmp_path):
    (tmp_path / ".env").write_text("GOOD_API_KEY=1\nsk-secret-value\n")
    found = workspace_credentials(tmp_path)
    assert dict(found.keys) == {"GOOD_API_KEY": "1"}
    assert found.notice() == (
        f"penguin: {tmp_path / '.env'}: read GOOD_API_KEY; skipped line 2: expected KEY=VALUE"
    )


def test_catalogue_entry_knows_agenthub_models():
    entry = catalogue_entry("openai", "gpt-5.5")
    assert entry is not None and entry.context_window and entry.vision is True
    assert catalogue_entry("openai", "no-such-model-xyz") is None


async def test_unconfigured_catalogue_model_resolves_with_env_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    agent = await create_agent(root=tmp_path / "data")
    entry = agent.resolve_model("openai", "gpt-5.5")
    assert (entry.provider, entry.model_id, entry.resolved_api_key()) == ("openai", "gpt-5.5", "sk-from-env")
    with pytest.raises(ValueError, match="does not know model id 'nope-1'"):
        agent.resolve_model("openai", "nope-1")
