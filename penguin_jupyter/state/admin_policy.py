"""The administrator's policy (docs/security.md "Approval rules and policy").

Owns reading the system-wide policy a deployment sets and users cannot loosen: the TOML file
named by `PENGUIN_POLICY`, else `/etc/penguin/policy.toml` (`DEFAULT_POLICY_PATH`):

    max_approve = "ask" | "read-only" | "auto" | "allow-all"   # the highest approval mode a cell gets
    disabled_tools = ["exec_command"]                  # never offered to the model
    allowed_models = ["openai/gpt-5.5"]                # empty or absent: all
    deny = [{ tool = "exec_command", command = "curl*" }]   # deny rules that always apply
    read_dotenv = false                                # workspace .env files are not read
    sandbox = "required"                               # no command runs outside the sandbox
    max_usd_per_day = 20                               # each user's model spend a day (docs/cost.md)

Where the policy is read from is decided once per process, from the environment the process
was started with (`/proc/self/environ` on Linux; elsewhere `os.environ` when this module is first
imported): code in the kernel that sets `os.environ["PENGUIN_POLICY"]` later changes nothing
(`policy_path`). The file itself is read again at each use, so an administrator's edit applies to
the next cell; it must be a regular file of at most `MAX_POLICY_BYTES`.

No file at the default path means no policy. A file `PENGUIN_POLICY` names that is missing, or a
bad file, is a `ConfigError` (one line naming the file and field): callers refuse to run rather
than run without the policy. Applying it is left to the Agent (models), the Environment (tools:
the toolset it builds; commands: the sandbox), the approval router (mode, deny rules) and `dotenv.read_dotenv` (`.env`).
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..process_start import start_environment_value
from ..regular_files import RefusedFile, read_regular_bytes
from .approval_rules import Rule, parse_rule
from .config_files import parse_config, read_config_text
from .errors import ConfigError

POLICY_ENV = "PENGUIN_POLICY"
DEFAULT_POLICY_PATH = "/etc/penguin/policy.toml"
MAX_POLICY_BYTES = 1 << 20
FIXED_NOTE = (
    f"(the path was fixed when the kernel started: later changes to {POLICY_ENV} in the kernel are "
    "ignored; the file is read again at each cell)"
)
POLICY_KEYS = frozenset(
    {"max_approve", "disabled_tools", "allowed_models", "deny", "read_dotenv", "max_usd_per_day", "sandbox"}
)
# From the strictest to the most permissive; a policy's max_approve caps a cell's mode.
MODE_ORDER: tuple[str, ...] = ("deny-all", "ask", "read-only", "auto", "allow-all")
SANDBOX_SETTINGS: tuple[str, ...] = ("optional", "required")


class PolicyRefusal(ValueError):
    """Something the policy forbids (a model); `str()` is the one line to show."""


@dataclass(frozen=True)
class Policy:
    path: str
    max_approve: str = "allow-all"
    disabled_tools: frozenset[str] = frozenset()
    allowed_models: tuple[str, ...] = ()
    deny: tuple[Rule, ...] = ()
    read_dotenv: bool = True
    sandbox: str = "optional"  # "required": no command runs outside the sandbox, in any mode
    max_usd_per_day: float | None = None
    keys: frozenset[str] = field(default_factory=frozenset)  # the keys the file set

    @property
    def sandbox_required(self) -> bool:
        return self.sandbox == "required"

    def cap_mode(self, mode: str) -> str:
        """`mode`, or `max_approve` when `mode` is more permissive."""
        if mode in MODE_ORDER and MODE_ORDER.index(mode) > MODE_ORDER.index(self.max_approve):
            return self.max_approve
        return mode

    def capped_note(self, asked: str) -> str | None:
        """The one line a cell prints when it asked for more than the policy allows."""
        if self.cap_mode(asked) == asked:
            return None
        return (
            f"penguin: the administrator's policy ({self.path}) allows at most --approve "
            f"{self.max_approve}; this cell runs under {self.max_approve} instead of {asked}"
        )

    def check_model(self, provider: str, model_id: str) -> None:
        if self.allowed_models and f"{provider}/{model_id}" not in self.allowed_models:
            raise PolicyRefusal(
                f"model {provider}/{model_id} is not allowed by the administrator's policy ({self.path}); "
                f"allowed: {', '.join(self.allowed_models)}"
            )

    def describe(self) -> list[str]:
        """What `%penguin config` prints."""
        models = ", ".join(self.allowed_models) if self.allowed_models else "all"
        tools = ", ".join(sorted(self.disabled_tools)) if self.disabled_tools else "none"
        cap = "" if self.max_approve == "allow-all" else f" (a cell asking for more runs under {self.max_approve})"
        lines = [
            f"administrator's policy: {self.path}",
            f"  {FIXED_NOTE}",
            f"  highest approval mode: {self.max_approve}{cap}",
            f"  disabled tools (never offered to the model): {tools}",
            f"  allowed models: {models}",
            f"  workspace .env files read: {'yes' if self.read_dotenv else 'no'}",
            f"  model spend a day: {'no cap' if self.max_usd_per_day is None else f'at most ${self.max_usd_per_day:,.2f} per user'}",
        ]
        denied = [rule.text().removeprefix("deny ") for rule in self.deny]
        lines += [f"  always denied: {text}" for text in denied] or ["  always denied: nothing"]
        if self.sandbox_required:
            lines.append("  sandbox: required (no command runs outside it, in any mode)")
        return lines


def _decide_policy_path() -> tuple[Path, bool]:
    at_start = start_environment_value(POLICY_ENV)
    named = (os.environ.get(POLICY_ENV, "") if at_start is None else at_start).strip()
    return (Path(named).expanduser().absolute(), True) if named else (Path(DEFAULT_POLICY_PATH), False)


_FIXED_PATH = _decide_policy_path()  # decided before any cell's code can change os.environ


def policy_path() -> tuple[Path, bool]:
    """(the policy file, whether `PENGUIN_POLICY` named it): fixed for the life of the process."""
    return _FIXED_PATH


def load_policy() -> Policy | None:
    """The policy in force, None without one; ConfigError when it cannot be used."""
    path, named = policy_path()
    try:
        text = read_config_text(path, lambda file: read_regular_bytes(file, MAX_POLICY_BYTES).decode("utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        if named:
            raise ConfigError(str(path), None, f"does not exist (named by {POLICY_ENV})") from None
        return None
    except RefusedFile as exc:
        raise ConfigError(str(path), None, f"cannot read ({exc})") from None
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read ({type(exc).__name__})") from None
    return parse_policy(text, str(path))


def _strings(data: Mapping[str, Any], key: str, file: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
        raise ConfigError(file, key, "must be a list of strings")
    return tuple(item.strip() for item in value)


def parse_policy(text: str, file: str) -> Policy:
    try:
        data = parse_config(file, tomllib.loads, text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, None, f"not valid TOML ({exc})") from None
    unknown = sorted(set(data) - POLICY_KEYS)
    if unknown:
        raise ConfigError(file, unknown[0], f"unknown key (known: {', '.join(sorted(POLICY_KEYS))})")
    max_approve = data.get("max_approve", "allow-all")
    if max_approve not in MODE_ORDER:
        raise ConfigError(
            file, "max_approve", f'must be "ask", "read-only", "auto" or "allow-all" (got {max_approve!r})'
        )
    models = _strings(data, "allowed_models", file)
    for model in models:
        provider, sep, model_id = model.partition("/")
        if not sep or not provider or not model_id:
            raise ConfigError(file, "allowed_models", f"{model!r} is not provider/model_id")
    deny_raw = data.get("deny", [])
    if not isinstance(deny_raw, list):
        raise ConfigError(file, "deny", "must be a list of { tool = …, command = … } tables")
    deny = []
    for number, raw in enumerate(deny_raw, start=1):
        if isinstance(raw, Mapping) and raw.get("action", "deny") != "deny":
            raise ConfigError(file, f"deny {number}: action", "a policy rule can only deny")
        deny.append(parse_rule(raw, f"{file}: deny", number, from_policy=True, default_action="deny"))
    read_dotenv = data.get("read_dotenv", True)
    if not isinstance(read_dotenv, bool):
        raise ConfigError(file, "read_dotenv", "must be true or false")
    sandbox = data.get("sandbox", "optional")
    if sandbox not in SANDBOX_SETTINGS:
        raise ConfigError(file, "sandbox", f'must be "required" or "optional" (got {sandbox!r})')
    cap = data.get("max_usd_per_day")
    if cap is not None and (
        isinstance(cap, bool) or not isinstance(cap, int | float) or not math.isfinite(cap) or cap < 0
    ):
        raise ConfigError(file, "max_usd_per_day", f"must be a number of USD, 0 or more (got {cap!r})")
    return Policy(
        path=file,
        max_approve=max_approve,
        disabled_tools=frozenset(_strings(data, "disabled_tools", file)),
        allowed_models=models,
        deny=tuple(Rule(r.action, r.tool, r.command, r.path, file, True) for r in deny),
        read_dotenv=read_dotenv,
        sandbox=sandbox,
        max_usd_per_day=None if cap is None else float(cap),
        keys=frozenset(data),
    )
