"""The sandbox's settings from the configuration (docs/security.md "Sandbox").

Owns reading the project config's `[sandbox]` table — `allowed_hosts = ["pypi.org",
"*.pythonhosted.org"]`, the hosts every sandboxed command of the project may reach through the
proxy — into host rules, with a one-line `ConfigError` naming the file and the entry for a bad
one, and `sandbox_config`, which joins them with the administrator's policy (`sandbox =
"required"`) and a host's grant ledger into the `SandboxConfig` every Environment gets. The
host grammar is `environment/sandbox/hosts.py`'s; enforcing it the sandbox's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..environment.sandbox import BadHost, HostRule, SandboxConfig, SandboxGrants, parse_hosts
from .admin_policy import Policy
from .errors import ConfigError
from .project_config import ProjectConfig

SANDBOX_TABLE = "sandbox"
SANDBOX_KEYS = frozenset({"allowed_hosts"})


def allowed_hosts(cfg: ProjectConfig, file: str) -> tuple[HostRule, ...]:
    """The project's `[sandbox] allowed_hosts` (none when the table is absent)."""
    table: Any = cfg.extra.get(SANDBOX_TABLE)
    if table is None:
        return ()
    if not isinstance(table, Mapping):
        raise ConfigError(file, SANDBOX_TABLE, "must be a table ([sandbox])")
    unknown = sorted(set(table) - SANDBOX_KEYS)
    if unknown:
        raise ConfigError(file, f"{SANDBOX_TABLE}.{unknown[0]}", "unknown key (known: allowed_hosts)")
    hosts = table.get("allowed_hosts", [])
    if not isinstance(hosts, list):
        raise ConfigError(file, f"{SANDBOX_TABLE}.allowed_hosts", "must be a list of host names")
    try:
        return parse_hosts(hosts)
    except BadHost as exc:
        raise ConfigError(file, f"{SANDBOX_TABLE}.allowed_hosts", str(exc)) from None


def sandbox_config(
    cfg: ProjectConfig, file: str, policy: Policy | None, grants: SandboxGrants | None
) -> SandboxConfig:
    required_by = policy.path if policy is not None and policy.sandbox_required else ""
    return SandboxConfig(required_by=required_by, allowed_hosts=allowed_hosts(cfg, file), grants=grants)
