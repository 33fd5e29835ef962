"""A key is enough: the model a provider's API key alone selects when no model is configured.

Owns `KEY_MODELS` (provider → default model id, in the order keys are tried; docs/state.md
"A key is enough") and `model_for_keys`, which picks the first provider whose key is exported or
supplied by the workspace's `.env` (the caller passes those keys). The key variable of each
provider is `project_config.PROVIDER_ENV_VARS`'s; the model's facts (context window, image input)
are agenthub's catalogue (`model_catalog.py`). The project config always wins: this is used only
when it names no model at all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from .model_catalog import catalogue_entry
from .project_config import ModelEntry, provider_env_vars

# (provider, model id), in the order their keys are tried when several are set. Each id is one
# agenthub's catalogue knows (`agenthub.list_supported_models()`; tests/state/test_key_models.py
# fails when an upgrade drops one).
KEY_MODELS: tuple[tuple[str, str], ...] = (
    ("openai", "gpt-5.5"),
    ("anthropic", "claude-sonnet-5"),
    ("gemini", "gemini-3.8-flash"),
    ("deepseek", "deepseek-v4-pro"),
    ("zhipu", "glm-5.3"),
    ("moonshot", "kimi-k3"),
    ("minimax", "MiniMax-M3"),
)


@dataclass(frozen=True)
class KeyModel:
    """The model a key selected: its entry, the key's variable name and where the key was found."""

    entry: ModelEntry
    variable: str
    source: str  # "the environment" or ".env"

    def describe(self) -> str:
        """The one info line a cell shows when a new session uses it."""
        return (
            f"penguin: no model is configured, so {self.variable} from {self.source} selects "
            f"{self.entry.provider}/{self.entry.model_id} (--model or %penguin model picks another; "
            "%penguin models lists them)"
        )


def key_variable(provider: str) -> str:
    return provider_env_vars(provider)[0]


def model_for_keys(dotenv_keys: Mapping[str, str] | None = None) -> KeyModel | None:
    """The first provider of `KEY_MODELS` whose key is exported (non-empty) or in `dotenv_keys`
    (the workspace's `.env` model keys); None when no key is there."""
    dotenv_keys = dotenv_keys or {}
    for provider, model_id in KEY_MODELS:
        variable = key_variable(provider)
        if os.environ.get(variable):
            source = "the environment"
        elif dotenv_keys.get(variable):
            source = ".env"
        else:
            continue
        entry = catalogue_entry(provider, model_id) or ModelEntry(provider=provider, model_id=model_id)
        return KeyModel(entry, variable, source)
    return None
