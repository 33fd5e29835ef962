"""A key is enough (issue 39): with no model configured, a provider's API key — exported or in the
workspace's `.env` — selects that provider's default model (docs/state.md "A key is enough")."""

from __future__ import annotations

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.state import add_model
from penguin_jupyter.state.key_models import KEY_MODELS, key_variable, model_for_keys
from penguin_jupyter.state.model_catalog import catalogue_entry

OTHER_KEYS = ("ZAI_API_KEY", "MOONSHOT_API_KEY", "MINIMAX_API_KEY")


@pytest.fixture(autouse=True)
def _no_other_keys(monkeypatch):
    for name in OTHER_KEYS:
        monkeypatch.delenv(name, raising=False)


def test_every_default_model_is_one_agenthubs_catalogue_knows():
    for provider, model_id in KEY_MODELS:
        entry = catalogue_entry(provider, model_id)
        assert entry is not None, f"agenthub no longer knows {model_id}"
        assert entry.context_window
    assert [key_variable(p) for p, _ in KEY_MODELS][:4] == [
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY",
    ]  # fmt: skip


def test_no_key_selects_nothing():
    assert model_for_keys({}) is None


def test_one_exported_key_selects_its_providers_model(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-exported-key")
    chosen = model_for_keys()
    assert chosen is not None
    assert (chosen.entry.provider, chosen.entry.model_id) == ("anthropic", "claude-sonnet-5")
    assert (chosen.variable, chosen.source) == ("ANTHROPIC_API_KEY", "the environment")
    assert chosen.entry.context_window == catalogue_entry("anthropic", "claude-sonnet-5").context_window
    assert chosen.describe() == (
        "penguin: no model is configured, so ANTHROPIC_API_KEY from the environment selects "
        "anthropic/claude-sonnet-5 (--model or %penguin model picks another; %penguin models lists them)"
    )


def test_a_dotenv_key_counts_and_the_documented_order_decides(monkeypatch):
    chosen = model_for_keys({"GEMINI_API_KEY": "g-key-from-dotenv"})
    assert chosen is not None and (chosen.entry.model_id, chosen.source) == ("gemini-3.8-flash", ".env")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-exported")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-exported")
    chosen = model_for_keys({"GEMINI_API_KEY": "g-key-from-dotenv"})
    assert chosen is not None and chosen.entry.model_id == "gpt-5.5"  # openai comes first
    monkeypatch.setenv("OPENAI_API_KEY", "")  # an empty variable is no key
    chosen = model_for_keys({"GEMINI_API_KEY": "g-key-from-dotenv"})
    assert chosen is not None and chosen.entry.model_id == "gemini-3.8-flash"


async def test_the_agent_uses_the_key_model_only_when_the_project_names_none(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-exported")
    agent = await create_agent(root=tmp_path / "data")
    entry = agent.resolve_model(None, None)
    assert (entry.provider, entry.model_id, entry.resolved_api_key()) == ("openai", "gpt-5.5", "sk-openai-exported")
    assert agent.key_model() is not None
    add_model(tmp_path / "data", "default_project", provider="local", model_id="mine", base_url="http://127.0.0.1:9/v1")
    assert agent.resolve_model(None, None).model_id == "mine"  # a configured model always wins
    assert agent.key_model() is None
