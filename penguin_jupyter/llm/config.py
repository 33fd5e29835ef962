"""GenerativeModelConfig: what one GenerativeModel is built from (docs/architecture.md "The three interfaces").

Owns the config dataclass, its validation (one-line `ValueError`s) and the request-independent
part of the gateway config (`base_uni_config`). Per-request pieces (thinking level, output cap)
are resolved by `GenerativeModel`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, cast
from urllib.parse import urlsplit

from agenthub.types import ToolSchema, UniConfig

from ..interfaces import THINKING_LEVELS, ThinkingLevelName, ToolDefinition
from ..prices import ModelPrice
from .answer_budget import DEFAULT_ANSWER_BUDGET_MS, DEFAULT_CONNECT_TIMEOUT_MS
from .spend import SpendGate
from .tool_call_ids import ToolCallIdAllocator

DEFAULT_REQUEST_TIMEOUT_MS = 120000


@dataclass
class GenerativeModelConfig:
    """`api_key`/`base_url` left None fall back to the provider's environment variables, as the
    agenthub client for the model reads them (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, …).
    `client_type` picks the gateway protocol (e.g. `openai-chat`); omitted, agenthub infers it
    from `model_id`. `request_timeout_ms` ≤ 0 disables the idle timer between chunks.
    `connect_timeout_ms` bounds one attempt's wait for the endpoint's first response and
    `answer_budget_ms` a run of consecutive unanswered attempts, reconnect waits included (see
    `answer_budget.py`; ≤ 0 disables either). Pass the session's `tool_call_ids` allocator so
    ids stay unique across model objects. `credentials`: model keys by variable name from the
    workspace's `.env`, used only when `api_key` is None and the variable is not exported
    (they are never put into the process environment). `price`: USD per million tokens (None:
    agenthub's list price for `model_id`, if it has one); `spend_gate`: the budgets every
    request of this model is admitted by and reported to (docs/cost.md)."""

    model_id: str
    api_key: str | None = None
    base_url: str | None = None
    client_type: str | None = None
    tools: list[ToolDefinition] = field(default_factory=list)
    system_prompt: str | None = None
    context_window: int | None = None
    max_tokens: int | None = None
    thinking_level: ThinkingLevelName | None = None
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    tool_call_ids: ToolCallIdAllocator | None = None
    fast_mode: bool = False
    connect_timeout_ms: int = DEFAULT_CONNECT_TIMEOUT_MS
    answer_budget_ms: int = DEFAULT_ANSWER_BUDGET_MS
    credentials: Mapping[str, str] = field(default_factory=dict)
    price: ModelPrice | None = None
    spend_gate: SpendGate | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model_id, str) or not self.model_id.strip():
            raise ValueError("GenerativeModelConfig.model_id must be a non-empty string")
        if self.thinking_level is not None and self.thinking_level not in THINKING_LEVELS:
            raise ValueError(
                f"unknown thinking level {self.thinking_level!r} (expected one of {', '.join(THINKING_LEVELS)})"
            )
        if self.max_tokens is not None and not isinstance(self.max_tokens, int):
            raise ValueError(f"GenerativeModelConfig.max_tokens must be an integer, got {self.max_tokens!r}")
        for name in ("request_timeout_ms", "connect_timeout_ms", "answer_budget_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"GenerativeModelConfig.{name} must be a number, got {value!r}")
        self.tools = list(self.tools or [])


class InvalidBaseUrl(ValueError):
    """A `base_url` that no request can use: a configuration mistake, never retried."""


def check_base_url(base_url: str | None) -> None:
    """Raise `InvalidBaseUrl` (one line naming the value) unless `base_url` is None or an
    absolute http(s) URL with a host."""
    if base_url is None:
        return
    if not isinstance(base_url, str):
        raise InvalidBaseUrl(f"base_url must be a string, got {type(base_url).__name__}")
    expected = "expected an http:// or https:// URL such as https://api.example.com/v1"
    try:
        parts = urlsplit(base_url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise InvalidBaseUrl(f"base_url {base_url!r} is not a valid URL ({expected})") from None
    if not parts.scheme or not parts.netloc:
        raise InvalidBaseUrl(f"base_url {base_url!r} is not a URL ({expected})")
    if parts.scheme.lower() not in ("http", "https"):
        scheme = parts.scheme
        raise InvalidBaseUrl(f"base_url {base_url!r} uses unsupported scheme {scheme!r} ({expected})")
    if not parts.hostname or any(ch.isspace() for ch in base_url.strip()):
        raise InvalidBaseUrl(f"base_url {base_url!r} is not a valid URL ({expected})")


class NamedTool(Protocol):
    """Any object describing a tool by attributes (`description`, `parameters` optional)."""

    name: str


def tool_schema(tool: ToolDefinition | Mapping[str, object] | NamedTool) -> ToolSchema:
    """The gateway schema of one tool (`parameters` only when present). Accepts a ToolDefinition,
    a mapping, or any object with `name`/`description`/`parameters` attributes."""
    if isinstance(tool, Mapping):
        name, description, parameters = tool["name"], tool.get("description"), tool.get("parameters")
    else:  # a ToolDefinition, or a host's own object (its other attributes are optional)
        name, description, parameters = (
            tool.name,
            getattr(tool, "description", ""),
            getattr(tool, "parameters", None),
        )
    schema = ToolSchema(name=cast(str, name), description=cast(str, description or ""))
    if parameters is not None:
        schema["parameters"] = cast(dict, parameters)
    return schema


def base_uni_config(config: GenerativeModelConfig) -> UniConfig:
    """Tools (omitted when empty, never `tool_choice`), system prompt, positive cap, fast mode."""
    uni = UniConfig()
    if config.tools:
        uni["tools"] = [tool_schema(tool) for tool in config.tools]
    if config.system_prompt is not None:
        uni["system_prompt"] = config.system_prompt
    if config.max_tokens is not None and config.max_tokens > 0:
        uni["max_tokens"] = config.max_tokens
    if config.fast_mode:
        uni["fast_mode"] = True
    return uni
