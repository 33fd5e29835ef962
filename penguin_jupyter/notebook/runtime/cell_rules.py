"""The rules and the administrator's policy a `%%penguin` cell starts with, and `%penguin rules`.

Owns reading them once per cell (`cell_rules`: the policy, the project's and the workspace's rule
files — all of them or, on a bad file, none: the cell then runs nothing and prints the one
line), the mode a cell actually runs under (`capped_mode`), and the numbered listing and
`forget` of the rules in force. Rule files and matching are `state/approval_rules.py`'s, the
policy file `state/admin_policy.py`'s, deciding a call the approval router's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...state import paths
from ...state.admin_policy import Policy, load_policy
from ...state.approval_rules import (
    SESSION_SOURCE,
    Rule,
    RuleBook,
    forget_project_rule,
    project_rules_path,
    read_rules,
    read_workspace_rules,
    save_project_rule,
)


@dataclass
class CellRules:
    book: RuleBook
    policy: Policy | None
    notes: list[str] = field(default_factory=list)  # e.g. workspace allow rules ignored


def _project() -> tuple[Path, str]:
    return paths.resolve_root(None), paths.DEFAULT_PROJECT_ID


def cell_rules(workspace: str) -> CellRules:
    """Everything or nothing: raises ConfigError (one line: file, rule, field) on a bad file."""
    policy = load_policy()
    root, project = _project()
    project_rules = read_rules(project_rules_path(root, project))
    workspace_rules, note = read_workspace_rules(workspace)
    book = RuleBook(project_rules, workspace_rules, list(policy.deny) if policy is not None else [])
    return CellRules(book, policy, [note] if note else [])


def save_to_project(rule: Rule) -> Rule:
    root, project = _project()
    return save_project_rule(root, project, rule)


def capped_mode(asked: str, policy: Policy | None) -> tuple[str, str | None]:
    """(the mode the cell runs under, the one line saying the policy lowered it)."""
    if policy is None:
        return asked, None
    return policy.cap_mode(asked), policy.capped_note(asked)


def rules_in_force(book: RuleBook, session_tools: set[str]) -> list[Rule]:
    """The numbered listing: the book's rules, then this session's "always allow" tools."""
    session = [Rule("allow", tool, source=SESSION_SOURCE) for tool in sorted(session_tools)]
    return [*book.rules(), *session]


LISTING_HEADER = (
    "penguin: approval rules in force (deny beats ask beats allow; a call no rule matches is left "
    "to the cell's --approve mode):"
)
LISTING_FOOTER = (
    "%penguin rules forget N removes rule N (project and this-session rules; workspace and policy "
    "rules are edited in their files)"
)


def _where(book: RuleBook, rule: Rule) -> str:
    """Which file a listed rule comes from, said the way a user thinks of it."""
    if rule.source == SESSION_SOURCE:
        return 'this session ("Always allow" on a card)'
    if rule.from_policy:
        return f"administrator's policy: {rule.source}"
    if rule in book.workspace:
        return f"workspace: {rule.source}"
    return f"project: {rule.source}"


def listing(book: RuleBook, session_tools: set[str]) -> list[str]:
    rules = rules_in_force(book, session_tools)
    if not rules:
        return [
            "penguin: no approval rules in force: the cell's --approve mode decides every call. Rules are "
            f"read from {project_rules_path(*_project())} (yours: allow, ask, deny) and "
            ".penguin/approvals.toml in the notebook's folder (ask and deny only)"
        ]
    lines = [LISTING_HEADER]
    for number, rule in enumerate(rules, start=1):
        lines.append(f"{number:>3}  {rule.text():<44}  {_where(book, rule)}")
    lines.append(LISTING_FOOTER)
    return lines


class ForgetError(Exception):
    """`%penguin rules forget N` removed nothing; the message is the one line to tell."""


def forget(book: RuleBook, session_tools: set[str], number: int) -> str:
    """Remove rule `number` of the listing; the one line saying what was forgotten.
    Raises `ForgetError` (one line) when nothing was."""
    rules = rules_in_force(book, session_tools)
    if not 1 <= number <= len(rules):
        raise ForgetError(f"penguin: there is no rule {number} (%penguin rules lists {len(rules)})")
    rule = rules[number - 1]
    if rule.source == SESSION_SOURCE:
        session_tools.discard(rule.tool)
        return f"penguin: forgot rule {number} ({rule.text()}, this session)"
    if rule.from_policy:
        raise ForgetError(f"penguin: rule {number} is the administrator's policy ({rule.source}); it cannot be forgotten here")
    if rule in book.workspace:
        raise ForgetError(f"penguin: rule {number} is in the workspace's {rule.source}; edit that file to remove it")
    if not forget_project_rule(Path(rule.source), rule):
        raise ForgetError(f"penguin: rule {number} is no longer in {rule.source}")
    return f"penguin: forgot rule {number} ({rule.text()}) from {rule.source}"
