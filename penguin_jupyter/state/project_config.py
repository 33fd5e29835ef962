"""`.project_config.toml`: the models table, default/vision model, credentials, command policy.

Owns reading (tomllib) with field-level validation, writing (0600, atomic, serialized across
threads and processes by `file_lock`; `update_project_config` for read-modify-write), the
public `add_model` helper, and credential resolution (inline `api_key`/`base_url`, else the
provider's environment variables). Models are keyed by the (provider, model_id) pair and
never by a concatenated string. Agent-level settings live in `system_config.py`.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..prices import ModelPrice, PriceError, parse_price
from ..private_files import read_private_text
from .config_files import parse_config, read_config_text
from .errors import ConfigError
from .file_lock import exclusive
from .paths import project_config_path, resolve_root
from .toml_writer import dumps_toml, write_private_file

# provider → (api key variable, base url variable): the names the gateway falls back to.
PROVIDER_ENV_VARS: dict[str, tuple[str, str]] = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "google": ("GEMINI_API_KEY", "GEMINI_BASE_URL"),
    "gemini": ("GEMINI_API_KEY", "GEMINI_BASE_URL"),
    "deepseek": ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL"),
    "zhipu": ("ZAI_API_KEY", "ZAI_BASE_URL"),
    "moonshot": ("MOONSHOT_API_KEY", "MOONSHOT_BASE_URL"),
    "minimax": ("MINIMAX_API_KEY", "MINIMAX_BASE_URL"),
}
# Gateways and custom OpenAI-protocol endpoints read the OpenAI variables.
_OPENAI_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL")

HOW_TO_ADD_MODEL = (
    "add one with penguin_jupyter.state.add_model(root, project_id, provider=..., model_id=..., "
    "base_url=..., api_key=..., default=True) or a [[models]] entry in "
)


@dataclass
class ModelEntry:
    provider: str
    model_id: str
    client_type: str | None = None
    context_window: int | None = None
    max_tokens: int | None = None
    vision: bool | None = None
    api_key: str | None = None
    base_url: str | None = None
    display_name: str | None = None
    fast_mode: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys and `price`, kept on save
    price: ModelPrice | None = field(default=None, repr=False)  # parsed from extra["price"]

    @property
    def is_vision(self) -> bool:
        """Image input is supported unless explicitly disabled."""
        return self.vision is not False

    def resolved_api_key(self) -> str | None:
        return self.api_key or os.environ.get(provider_env_vars(self.provider)[0]) or None

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get(provider_env_vars(self.provider)[1]) or None


@dataclass(frozen=True)
class ModelRef:
    provider: str
    model_id: str

    def __str__(self) -> str:
        return f"(provider={self.provider}, model_id={self.model_id})"


@dataclass
class ProjectConfig:
    models: list[ModelEntry] = field(default_factory=list)
    default_model: ModelRef | None = None
    vision_model: ModelRef | None = None
    name: str | None = None
    default_chat: dict[str, Any] = field(default_factory=dict)
    command_policy: dict[str, Any] | None = None
    budget_usd_per_session: float | None = None
    budget_usd_per_day: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown top-level keys, kept on save

    def get_model(self, provider: str, model_id: str) -> ModelEntry | None:
        for entry in self.models:
            if entry.provider == provider and entry.model_id == model_id:
                return entry
        return None


def provider_env_vars(provider: str) -> tuple[str, str]:
    return PROVIDER_ENV_VARS.get(provider, _OPENAI_VARS)


def canonical_client_type(client_type: str | None) -> str | None:
    """`openai` is spelled `openai-chat` (the gateway's chat-completions client)."""
    if client_type is None:
        return None
    return "openai-chat" if client_type.strip().lower() == "openai" else client_type


# --- reading ---------------------------------------------------------------------------------

_ENTRY_TYPES: dict[str, type | tuple[type, ...]] = {
    "provider": str,
    "model_id": str,
    "client_type": str,
    "context_window": int,
    "max_tokens": int,
    "vision": bool,
    "api_key": str,
    "base_url": str,
    "display_name": str,
    "fast_mode": bool,
}


def _check_type(file: str, where: str, value: Any, expected: type | tuple[type, ...]) -> None:
    bad_bool = expected is int and isinstance(value, bool)
    if bad_bool or not isinstance(value, expected):
        kind = {str: "a string", int: "an integer", bool: "true or false"}.get(expected, "valid")  # type: ignore[arg-type]
        raise ConfigError(file, where, f"must be {kind}, got {value!r}")


def _parse_ref(file: str, name: str, value: Any) -> ModelRef | None:
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("provider"), str)
        or not isinstance(value.get("model_id"), str)
    ):
        raise ConfigError(file, name, 'must be a { provider = "...", model_id = "..." } pair')
    return ModelRef(value["provider"], value["model_id"])


def _parse_entry(file: str, index: int, raw: Any) -> ModelEntry:
    where = f"models[{index}]"
    if not isinstance(raw, dict):
        raise ConfigError(file, where, "must be a table")
    for required in ("provider", "model_id"):
        if not isinstance(raw.get(required), str) or not raw[required]:
            raise ConfigError(file, f"{where}.{required}", "is required (a non-empty string)")
    values: dict[str, Any] = {}
    for key, expected in _ENTRY_TYPES.items():
        if key in raw:
            _check_type(file, f"{where}.{key}", raw[key], expected)
            values[key] = raw[key]
    for key in ("context_window", "max_tokens"):
        if key in values and values[key] <= 0:
            raise ConfigError(file, f"{where}.{key}", f"must be a positive integer, got {values[key]}")
    values["client_type"] = canonical_client_type(values.get("client_type"))
    extra = {k: v for k, v in raw.items() if k not in _ENTRY_TYPES}
    price = None
    if "price" in raw:
        try:
            price = parse_price(raw["price"], file)
        except PriceError as exc:
            raise ConfigError(file, f"{where}.price", str(exc)) from None
    return ModelEntry(**values, extra=extra, price=price)


def _budget(file: str, data: dict[str, Any], key: str) -> float | None:
    """A budget in USD: a positive finite number (absent: no budget)."""
    if key not in data:
        return None
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ConfigError(file, key, f"must be a positive number of USD, got {value!r}")
    return float(value)


_TOP_LEVEL_KEYS = (
    "models",
    "default_model",
    "vision_model",
    "name",
    "default_chat",
    "command_policy",
    "budget_usd_per_session",
    "budget_usd_per_day",
)


def parse_project_config(file: str, data: dict[str, Any]) -> ProjectConfig:
    models_raw = data.get("models", [])
    if not isinstance(models_raw, list):
        raise ConfigError(file, "models", "must be an array of tables ([[models]])")
    cfg = ProjectConfig(
        models=[_parse_entry(file, i, m) for i, m in enumerate(models_raw)],
        default_model=_parse_ref(file, "default_model", data.get("default_model")),
        vision_model=_parse_ref(file, "vision_model", data.get("vision_model")),
    )
    if "name" in data:
        _check_type(file, "name", data["name"], str)
        cfg.name = data["name"]
    for key in ("default_chat", "command_policy"):
        if key in data and not isinstance(data[key], dict):
            raise ConfigError(file, key, "must be a table")
    cfg.default_chat = dict(data.get("default_chat", {}))
    cfg.command_policy = data.get("command_policy")
    cfg.budget_usd_per_session = _budget(file, data, "budget_usd_per_session")
    cfg.budget_usd_per_day = _budget(file, data, "budget_usd_per_day")
    cfg.extra = {k: v for k, v in data.items() if k not in _TOP_LEVEL_KEYS}
    return cfg


def load_project_config(root: str | os.PathLike[str] | None, project_id: str) -> ProjectConfig:
    """The project's config; a missing file is an empty config (no models)."""
    path = project_config_path(resolve_root(root), project_id)
    try:
        text = read_config_text(path, read_private_text)  # under the data root: private, or refused
    except FileNotFoundError:
        return ProjectConfig()
    try:
        data = parse_config(str(path), tomllib.loads, text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), None, f"invalid TOML: {exc}") from None
    return parse_project_config(str(path), data)


# --- writing ---------------------------------------------------------------------------------


def _entry_table(entry: ModelEntry) -> dict[str, Any]:
    table = {
        f.name: getattr(entry, f.name)
        for f in fields(entry)
        if f.name not in ("extra", "price") and getattr(entry, f.name) is not None
    }
    return {**table, **entry.extra}


def _ref_table(ref: ModelRef | None) -> dict[str, str] | None:
    return None if ref is None else {"provider": ref.provider, "model_id": ref.model_id}


def render_project_config(cfg: ProjectConfig) -> str:
    data: dict[str, Any] = {
        "name": cfg.name,
        "default_model": _ref_table(cfg.default_model),
        "vision_model": _ref_table(cfg.vision_model),
        "default_chat": cfg.default_chat or None,
        "command_policy": cfg.command_policy,
        "budget_usd_per_session": cfg.budget_usd_per_session,
        "budget_usd_per_day": cfg.budget_usd_per_day,
        **cfg.extra,
        "models": [_entry_table(m) for m in cfg.models] or None,
    }
    return dumps_toml(data, inline_keys=frozenset({"default_model", "vision_model"}))


def save_project_config(root: str | os.PathLike[str] | None, project_id: str, cfg: ProjectConfig) -> Path:
    """Replace the project config with `cfg` (atomic, 0600, serialized with other writers).
    To change part of it, use `update_project_config` so no concurrent change is lost."""
    path = project_config_path(resolve_root(root), project_id)
    with exclusive(path):
        write_private_file(path, render_project_config(cfg))
    return path


def update_project_config(
    root: str | os.PathLike[str] | None, project_id: str, change: Callable[[ProjectConfig], None]
) -> ProjectConfig:
    """Read, `change(cfg)` and write the project config under its cross-process lock: concurrent
    updates from threads, kernels or processes are serialized and none is lost."""
    path = project_config_path(resolve_root(root), project_id)
    with exclusive(path):
        cfg = load_project_config(root, project_id)
        change(cfg)
        write_private_file(path, render_project_config(cfg))
    return cfg


def add_model(
    root: str | os.PathLike[str] | None,
    project_id: str,
    *,
    provider: str,
    model_id: str,
    base_url: str | None = None,
    api_key: str | None = None,
    client_type: str | None = None,
    context_window: int | None = None,
    max_tokens: int | None = None,
    vision: bool | None = None,
    default: bool = False,
    vision_default: bool = False,
    price: dict[str, float] | None = None,
) -> ProjectConfig:
    """Add or update the (provider, model_id) entry; unspecified fields keep their old values.

    `default=True` makes it the project default model; `vision_default=True` the vision model;
    `price` = {input, cached, output} in USD per million tokens (docs/cost.md).
    """
    parsed_price = None
    if price is not None:
        try:
            parsed_price = parse_price(price, "add_model")
        except PriceError as exc:
            raise ValueError(f"add_model price: {exc}") from None
    if not provider or not model_id:
        raise ValueError("add_model needs both provider and model_id")
    updates = {
        "base_url": base_url,
        "api_key": api_key,
        "client_type": canonical_client_type(client_type),
        "context_window": context_window,
        "max_tokens": max_tokens,
        "vision": vision,
    }

    def change(cfg: ProjectConfig) -> None:
        entry = cfg.get_model(provider, model_id)
        if entry is None:
            entry = ModelEntry(provider=provider, model_id=model_id)
            cfg.models.append(entry)
        for key, value in updates.items():
            if value is not None:
                setattr(entry, key, value)
        if parsed_price is not None:
            entry.price, entry.extra["price"] = parsed_price, dict(price or {})
        if default:
            cfg.default_model = ModelRef(provider, model_id)
        if vision_default:
            cfg.vision_model = ModelRef(provider, model_id)

    return update_project_config(root, project_id, change)
