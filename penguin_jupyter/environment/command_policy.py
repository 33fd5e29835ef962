"""The project command policy (docs/architecture.md "The session layer"): deny rules tested against the shell
text a call carries — the argument its tool declares as a `ShellCommand` (exec_command's `cmd`)
or `ShellInput` (input_command's `chars`); a hit answers "forbidden" without asking the host. An
accident guardrail, not a security boundary.

Owns the factory rule set, evaluation, and `wrap_approve_with_command_policy`, which the
session layer wraps around the host's ApproveFn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..interfaces import ApprovalDecision, ApproveFn
from ..omni import OmniMessage, read_call_arguments
from ..omni.models import ToolCallPayload
from .registry import declaration_of

_SEGMENT_START = r"(?:^|[\s;&|(`])(?:[^\s;&|]*/)?"  # separator or start, then an optional path
_QUOTE = "[\"']?"
_BLOCK_DEVICE = r"(?:sd|hd|vd|xvd|nvme|mmcblk|loop|disk|rdisk)[a-zA-Z0-9]*"
_SAME_SEGMENT = r"(?:\s[^;&|]*)?\s"
_RECURSIVE_FORCE = (
    r"(?="
    + _SAME_SEGMENT
    + r"-(?:[a-zA-Z]*[rR][a-zA-Z]*|-recursive)(?:\s|$))(?="
    + _SAME_SEGMENT
    + r"-(?:[a-zA-Z]*[fF][a-zA-Z]*|-force)(?:\s|$))"
)
# A word the shell computes before running it: `$(…)`, `…` in backticks, `$NAME`, `${NAME}`.
_COMPUTED_WORD = r"(?:\$\([^()]*\)|`[^`]*`|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)"
_DELETING_PROGRAM = r"(?:[^\s;&|]*/)?(?:rm|unlink|shred)(?:\s|$)"


@dataclass(frozen=True)
class CommandPolicyRule:
    name: str
    pattern: str
    description: str = ""
    enabled: bool = True


@dataclass(frozen=True)
class CommandPolicy:
    """`rules=None` means the factory set."""

    enabled: bool = True
    rules: list[CommandPolicyRule] | None = field(default=None)


DEFAULT_COMMAND_POLICY_RULES: tuple[CommandPolicyRule, ...] = (
    CommandPolicyRule(
        "rm-recursive-force", _SEGMENT_START + r"rm" + _RECURSIVE_FORCE, "rm with both a recursive and a force flag"
    ),
    CommandPolicyRule(
        "computed-command-recursive-force",
        r"(?:^|[\s;&|(`])" + _COMPUTED_WORD + r"[^\s;&|]*" + _RECURSIVE_FORCE,
        "a command computed by the shell ($(…), backticks, $VAR) with a recursive and a force flag",
    ),
    CommandPolicyRule(
        "find-delete",
        _SEGMENT_START
        + r"find(?![\w.-])(?=[^;&|]*\s(?:-delete(?:\s|$)|-(?:exec|execdir|ok|okdir)\s+"
        + _DELETING_PROGRAM
        + r"))",
        "find deleting what it finds (-delete, or -exec rm / unlink / shred)",
    ),
    CommandPolicyRule(
        "mkfs", _SEGMENT_START + r"mkfs(?:\.[a-zA-Z0-9]+)?(?![a-zA-Z0-9])", "formatting a filesystem"
    ),
    CommandPolicyRule(
        "dd-to-block-device",
        _SEGMENT_START + r"dd\s[^;&|]*\bof=" + _QUOTE + "/dev/" + _BLOCK_DEVICE,
        "dd writing onto a block device",
    ),
    CommandPolicyRule(
        "fork-bomb", r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "the classic shell fork bomb"
    ),
    CommandPolicyRule(
        "overwrite-block-device",
        r">\s*" + _QUOTE + "/dev/" + _BLOCK_DEVICE,
        "redirecting output onto a block device",
    ),
    CommandPolicyRule(
        "windows-recursive-delete",
        _SEGMENT_START
        + r"(?i:remove-item)(?![a-zA-Z0-9])(?="
        + _SAME_SEGMENT
        + r"-(?i:rec[a-z]*|r)(?:\s|$))(?="
        + _SAME_SEGMENT
        + r"-(?i:force|f)(?:\s|$))|"
        + _SEGMENT_START
        + r"(?i:rmdir|rd|del|erase)(?![a-zA-Z0-9])(?=[^;&|]*/(?i:s)(?![a-zA-Z]))(?=[^;&|]*/(?i:q)(?![a-zA-Z]))",
        "Windows recursive forced delete",
    ),
    CommandPolicyRule(
        "windows-format-volume",
        _SEGMENT_START
        + r"(?i:format)(?![a-zA-Z0-9-])(?=[^;&|]*\s[a-zA-Z]:(?![a-zA-Z0-9]))|"
        + _SEGMENT_START
        + r"(?i:format-volume)(?![a-zA-Z0-9])",
        "Windows volume format",
    ),
    CommandPolicyRule(
        "windows-disk-overwrite",
        r"\\\\\.\\(?i:physicaldrive)[0-9]+|" + _SEGMENT_START + r"(?i:clear-disk)(?![a-zA-Z0-9])",
        "Windows raw disk overwrite",
    ),
    CommandPolicyRule("windows-fork-bomb", r"%0\s*\|\s*%0", "the cmd fork bomb"),
)

INTERRUPT = "\u0003"


def _normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def command_variants(cmd: str) -> list[str]:
    """The command as written plus, when different, the same text with quoting removed; both
    after the shell's own joins: a backslash-newline (line continuation) removed and `$IFS`
    read as a space."""
    cmd = re.sub(r"\$(?:IFS(?![A-Za-z0-9_])|\{IFS\})", " ", re.sub(r"\\\r?\n", "", cmd))
    literal = _normalize(cmd)
    unquoted = _normalize(re.sub(r"['\"]", "", re.sub(r"\\(.)", r"\1", cmd)))
    return [literal] if unquoted == literal else [literal, unquoted]


def _coerce_policy(policy: CommandPolicy | Mapping[str, Any] | None) -> CommandPolicy | None:
    if policy is None or isinstance(policy, CommandPolicy):
        return policy
    rules_raw = policy.get("rules")
    rules = None
    if isinstance(rules_raw, Sequence):
        rules = [
            CommandPolicyRule(
                name=str(r.get("name", "")),
                pattern=str(r.get("pattern", "")),
                description=str(r.get("description", "")),
                enabled=r.get("enabled", True) is not False,
            )
            for r in rules_raw
            if isinstance(r, Mapping)
        ]
    return CommandPolicy(enabled=policy.get("enabled", True) is not False, rules=rules)


def evaluate_command_policy(cmd: str, policy: CommandPolicy | Mapping[str, Any] | None = None) -> str | None:
    """The name of the first enabled rule that matches `cmd`, else None."""
    resolved = _coerce_policy(policy)
    if resolved is not None and not resolved.enabled:
        return None
    variants = command_variants(cmd)
    if not variants[0]:
        return None
    rules = DEFAULT_COMMAND_POLICY_RULES if resolved is None or resolved.rules is None else resolved.rules
    for rule in rules:
        if not rule.enabled:
            continue
        try:
            compiled = re.compile(rule.pattern)
        except re.error:
            continue  # a broken rule must not take the policy down
        if any(compiled.search(v) for v in variants):
            return rule.name
    return None


def veto_for_tool_call(
    tool_call: OmniMessage, policy: CommandPolicy | Mapping[str, Any] | None = None
) -> str | None:
    payload = tool_call.payload
    if not isinstance(payload, ToolCallPayload):
        return None
    roles = declaration_of(payload.name).roles
    key = roles.command or roles.shell_input
    if key is None:
        return None
    args = read_call_arguments(payload.arguments)
    text = args.get(key) if isinstance(args, dict) else None
    if not isinstance(text, str) or text == INTERRUPT:
        return None
    return evaluate_command_policy(text, policy)


def wrap_approve_with_command_policy(
    approve: ApproveFn, policy: CommandPolicy | Mapping[str, Any] | None = None
) -> ApproveFn:
    """An ApproveFn that answers "forbidden" for a policy hit and defers to `approve` otherwise."""

    async def approve_with_policy(tool_call: OmniMessage) -> ApprovalDecision:
        if veto_for_tool_call(tool_call, policy) is not None:
            return "forbidden"
        return await approve(tool_call)

    return approve_with_policy
