"""Which hosts a sandboxed kernel may reach: its model endpoints and the project's allowed hosts.

Owns `kernel_hosts`, read once when the kernel starts (docs/security.md "The sandboxed kernel"):
the host and port of every `base_url` of the project's models (and of the providers'
`*_BASE_URL` variables the kernel inherits); where a model goes to its provider's default
endpoint (an entry without a base URL, or a provider key in the environment and no model
configured), the API hosts of agenthub's catalogue; and the project config's `[sandbox]
allowed_hosts`. A host added to the config later is reached after a restart of the kernel. The
proxy that enforces the list is `environment/sandbox/proxy.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from ..environment.sandbox import HostRule, parse_host
from ..state.project_config import PROVIDER_ENV_VARS, ProjectConfig, provider_env_vars
from ..state.sandbox_settings import allowed_hosts


def url_host(url: str) -> HostRule | None:
    """The rule reaching exactly `url`'s host and port (None for anything but an http(s) URL)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    try:
        return parse_host(f"{host}:{port}")
    except ValueError:
        return None


def catalogue_hosts() -> tuple[HostRule, ...]:
    """The API hosts of agenthub's catalogue (where a model without a base URL goes)."""
    try:
        from agenthub import list_supported_models
    except ImportError:
        return ()
    return _rules(item.get("base_url", "") for item in list_supported_models())


def _rules(urls: Iterable[str]) -> tuple[HostRule, ...]:
    rules = (url_host(url) for url in urls if url)
    return tuple(dict.fromkeys(rule for rule in rules if rule is not None))


def kernel_hosts(cfg: ProjectConfig, config_file: str, env: Mapping[str, str]) -> tuple[HostRule, ...]:
    """Every host the kernel's proxy lets through, in a stable order. Raises the config's
    one-line `ConfigError` for a bad `[sandbox]` table."""
    key_vars = {key for key, _ in PROVIDER_ENV_VARS.values()}
    base_vars = {base for _, base in PROVIDER_ENV_VARS.values()}
    urls = [entry.base_url or env.get(provider_env_vars(entry.provider)[1], "") for entry in cfg.models]
    urls += [env[name] for name in sorted(base_vars) if env.get(name)]
    needs_defaults = any(not url for url in urls[: len(cfg.models)]) or (
        not cfg.models and any(env.get(key) for key in key_vars)
    )
    hosts = [*_rules(urls), *(catalogue_hosts() if needs_defaults else ()), *allowed_hosts(cfg, config_file)]
    return tuple(dict.fromkeys(hosts))

