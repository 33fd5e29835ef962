"""Side LLMs (docs/model.md "Side models", docs/tools.md "read_image and describe_image"): configs for one-shot requests that reuse the
session model's credentials — title generation and the vision describer.

Owns only the config derivation; callers build a fresh `GenerativeModel` from the result, so
a side request never touches the session model's history, usage totals or the Trace.
"""

from __future__ import annotations

from dataclasses import replace

from .config import GenerativeModelConfig

TITLE_MAX_TOKENS = 300
TITLE_TIMEOUT_MS = 30000
VISION_MAX_TOKENS = 2048
VISION_TIMEOUT_MS = 60000


def _capped(limit: int, entry_cap: int | None) -> int:
    return min(limit, entry_cap) if entry_cap is not None and entry_cap > 0 else limit


def title_model_config(config: GenerativeModelConfig) -> GenerativeModelConfig:
    """Same model and credentials; no tools, no system prompt, thinking none,
    max_tokens min(300, entry cap), 30 s idle timeout, never fast mode."""
    return replace(
        config,
        tools=[],
        system_prompt=None,
        thinking_level="none",
        max_tokens=_capped(TITLE_MAX_TOKENS, config.max_tokens),
        request_timeout_ms=TITLE_TIMEOUT_MS,
        tool_call_ids=None,
        fast_mode=False,
    )


def vision_model_config(config: GenerativeModelConfig) -> GenerativeModelConfig:
    """The vision model's entry as a one-shot describer: no tools, no system prompt, thinking
    none, max_tokens min(2048, entry cap), 60 s idle timeout, never fast mode."""
    return replace(
        config,
        tools=[],
        system_prompt=None,
        thinking_level="none",
        max_tokens=_capped(VISION_MAX_TOKENS, config.max_tokens),
        request_timeout_ms=VISION_TIMEOUT_MS,
        tool_call_ids=None,
        fast_mode=False,
    )
