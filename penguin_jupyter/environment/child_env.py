"""The environment handed to every spawned command (docs/environment.md "Child processes").

Owns the stripped host keys, the optional proxy policy, vault injection and the hardened
entries that nothing (not even the vault) may override.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

STRIPPED_KEYS = frozenset(
    {
        "PORT",
        "HOST",
        "PENGUIN_CLI_ENTRY",
        "PENGUIN_WEB_DIST",
        "FORCE_COLOR",
        "CLICOLOR_FORCE",
        "PENGUIN_DESKTOP_TOKEN",
        "PENGUIN_PORT_FILE",
        "PENGUIN_SEED_ADMIN_PASSWORD",
    }
)
HARDENED_ENTRIES: dict[str, str] = {
    "GIT_EDITOR": "true",
    "GIT_TERMINAL_PROMPT": "0",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
}
_PROXY_KEYS = frozenset({"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"})


@dataclass(frozen=True)
class ProxyPolicy:
    """`strip` drops proxy variables; `inject` replaces them with `url` / `no_proxy`."""

    mode: Literal["strip", "inject"]
    url: str = ""
    no_proxy: str = ""


def _apply_proxy_policy(env: dict[str, str], policy: ProxyPolicy) -> None:
    dropped = _PROXY_KEYS | ({"NO_PROXY"} if policy.mode == "inject" else set())
    for key in [k for k in env if k.upper() in dropped]:
        del env[key]
    if policy.mode == "inject":
        for key in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
            env[key] = policy.url
        env["NO_PROXY"] = policy.no_proxy
        env["no_proxy"] = policy.no_proxy


def build_child_env(
    vault: Mapping[str, str] | None = None,
    proxy_policy: ProxyPolicy | None = None,
    host_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    source = os.environ if host_env is None else host_env
    env = {k: v for k, v in source.items() if k.upper() not in STRIPPED_KEYS}
    if proxy_policy is not None:
        _apply_proxy_policy(env, proxy_policy)
    for key, value in (vault or {}).items():
        if isinstance(key, str) and isinstance(value, str) and key and "=" not in key:
            env[key] = value
    env.update(HARDENED_ENTRIES)
    return env
