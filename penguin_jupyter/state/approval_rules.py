"""Approval rules that stick (docs/security.md "Approval rules and policy").

Owns the rule files and what a rule matches:

* project rules `<data root>/<project>/approval_rules.toml` (private, 0600; "Save to project"
  appends here, `%penguin rules forget N` removes);
* workspace rules `<workspace>/.penguin/approvals.toml` — written by whoever wrote the folder, so
  they can only tighten: `ask` or `deny`; an `allow` (or `auto`) there is ignored with one line;
* each rule a `[[rule]]` table: `action = "allow" | "ask" | "deny" | "auto"` (`auto`: run the
  command in the sandbox without asking; for a tool that declares a command), `tool`, and optionally
  `command` (a pattern over the parsed command words, for a tool that declares a command
  argument) or `path` (a glob relative to the workspace, for a tool that declares file
  arguments). A path rule is matched against what the call touches
  (`ToolDeclaration.effect`: the path as the tool opens it and the file that reaches): an allow
  rule only when the file lies in the workspace and both match, a deny or ask rule when any
  spelling matches (as written, as opened, as reached; relative or absolute).

A tool's roles (its command, its paths, which saved rule it may get) are its declaration's,
looked up the one way (`registry.declaration_of`).

`RuleBook.judge` answers for one call: among the matching rules deny beats ask beats auto beats allow; None
when no rule matches (the cell's mode decides). A deny or ask command rule matches every spelling
of its words (`command_effects.spellings`); an allow command rule covers a simple command only
when its words match and every effect past the words it names is known-safe
(`command_effects.uncovered_reason`, docs/security.md "What a rule covers") — else the verdict is
`uncovered`: the mode decides and the card says why. A bad file is one `ConfigError` line naming the
file, the rule and the field, and nothing of it applies. The administrator's policy is
`admin_policy.py`; how a decision is made from a verdict is the notebook's approval router.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..environment.command_effects import (
    CommandEffects,
    analyse_words,
    credential_argument_reason,
    uncovered_reason,
)
from ..environment.command_effects.spellings import spellings
from ..environment.command_words import loose_parts, named_words, pattern_matches, strict_parts
from ..environment.registry import declaration_of
from ..environment.saved_rule_offer import offered_command_pattern
from ..environment.tool_effects import TouchedPath, resolve_tool_path
from ..regular_files import RefusedFile, read_regular_bytes
from . import file_lock, paths
from .config_files import parse_config, read_config_text
from .errors import ConfigError
from .toml_writer import dumps_toml, write_private_file

Action = Literal["allow", "ask", "deny", "auto"]
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny", "auto")
SEVERITY = {"deny": 3, "ask": 2, "auto": 1, "allow": 0}
LOOSENING: tuple[Action, ...] = ("allow", "auto")  # what a workspace file may not say
PROJECT_RULES_FILE = "approval_rules.toml"
MAX_RULES_BYTES = 1 << 20  # a rule is a few lines; a larger file is refused, never read
WORKSPACE_RULES_FILE = os.path.join(".penguin", "approvals.toml")
SESSION_SOURCE = "this session"
RULE_KEYS = frozenset({"action", "tool", "command", "path"})


def project_rules_path(root: Path, project_id: str) -> Path:
    return paths.project_dir(root, project_id) / PROJECT_RULES_FILE


def workspace_rules_path(workspace: str) -> Path:
    return Path(workspace) / WORKSPACE_RULES_FILE


def command_argument(tool: str) -> str | None:
    """The argument a tool declares as its shell command (exec_command's `cmd`)."""
    return declaration_of(tool).roles.command


def path_arguments(tool: str) -> tuple[str, ...]:
    """The arguments a tool declares as files it reads or writes."""
    return declaration_of(tool).roles.paths


@dataclass(frozen=True)
class Rule:
    action: Action
    tool: str
    command: str | None = None
    path: str | None = None
    source: str = ""  # the file it was read from, SESSION_SOURCE, or the policy file
    from_policy: bool = False

    def pattern(self) -> str:
        """What the rule is about, as shown: `git status`, `data/*.csv`, or the tool name."""
        return self.command or self.path or self.tool

    def text(self) -> str:
        """`allow exec_command "git status"` — the rule as the card and `%penguin rules` show it."""
        detail = f' command "{self.command}"' if self.command else f' path "{self.path}"' if self.path else ""
        return f"{self.action} {self.tool}{detail}"

    def as_table(self) -> dict[str, str]:
        table = {"action": self.action, "tool": self.tool}
        if self.command:
            table["command"] = self.command
        if self.path:
            table["path"] = self.path
        return table


def parse_rule(raw: Any, file: str, number: int, *, from_policy: bool = False, default_action: str | None = None) -> Rule:
    """One `[[rule]]` table (or a policy `deny` entry) → Rule; ConfigError names file, rule, field."""
    where = f"rule {number}"
    if not isinstance(raw, Mapping):
        raise ConfigError(file, where, "must be a table")
    unknown = sorted(set(raw) - RULE_KEYS)
    if unknown:
        raise ConfigError(file, f"{where}: {unknown[0]}", "unknown field (use action, tool, command, path)")
    action = raw.get("action", default_action)
    if action not in ACTIONS:
        raise ConfigError(file, f"{where}: action", f'must be "allow", "ask", "deny" or "auto" (got {action!r})')
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool.strip() or not tool.strip().isprintable():
        raise ConfigError(file, f"{where}: tool", f"must be a tool name (got {tool!r})")
    if action == "auto" and command_argument(tool.strip()) is None:
        raise ConfigError(file, f"{where}: action", f'"auto" runs a command in the sandbox; {tool} runs no command')
    command, path = raw.get("command"), raw.get("path")
    if command is not None and path is not None:
        raise ConfigError(file, f"{where}: path", "a rule has a command or a path, not both")
    if command is not None:
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(file, f"{where}: command", "must be a non-empty string")
        if command_argument(tool) is None:
            raise ConfigError(file, f"{where}: command", f"{tool} takes no shell command")
    if path is not None:
        if not isinstance(path, str) or not path.strip():
            raise ConfigError(file, f"{where}: path", "must be a non-empty glob")
        if not path_arguments(tool):
            raise ConfigError(file, f"{where}: path", f"{tool} takes no file path")
    return Rule(action, tool.strip(), command, path, file, from_policy)


def parse_rules_text(text: str, file: str) -> list[Rule]:
    try:
        data = parse_config(file, tomllib.loads, text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, None, f"not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"rule"})
    if unknown:
        raise ConfigError(file, unknown[0], "unknown key (rules are [[rule]] tables)")
    tables = data.get("rule", [])
    if not isinstance(tables, list):
        raise ConfigError(file, "rule", "must be [[rule]] tables")
    return [parse_rule(raw, file, number) for number, raw in enumerate(tables, start=1)]


def read_rules(path: Path) -> list[Rule]:
    """The rules of one file ([] when it does not exist); ConfigError when it cannot be used (not
    a regular file — a symlink to one is followed —, above `MAX_RULES_BYTES`, not UTF-8 TOML)."""
    try:
        text = read_config_text(path, lambda file: read_regular_bytes(file, MAX_RULES_BYTES).decode("utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except RefusedFile as exc:
        raise ConfigError(str(path), None, f"cannot read ({exc})") from None
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot read ({type(exc).__name__})") from None
    return parse_rules_text(text, str(path))


def read_workspace_rules(workspace: str) -> tuple[list[Rule], str | None]:
    """The workspace's tightening rules and, when it holds `allow` rules, the one line saying
    they were ignored."""
    path = workspace_rules_path(workspace)
    rules = read_rules(path)
    ignored = [number for number, rule in enumerate(rules, start=1) if rule.action in LOOSENING]
    note = None
    if ignored:
        listed = ", ".join(str(n) for n in ignored)
        note = (
            f"penguin: {path}: rule {listed}: allow ignored — a workspace file can only tighten "
            "(ask or deny); save allow rules to the project instead"
        )
    return [rule for rule in rules if rule.action not in LOOSENING], note


def save_project_rule(root: Path, project_id: str, rule: Rule) -> Rule:
    """Append `rule` to the project's rule file (0600, atomic, under the file's lock)."""
    path = project_rules_path(root, project_id)
    with file_lock.exclusive(path):
        existing = read_rules(path)
        saved = Rule(rule.action, rule.tool, rule.command, rule.path, str(path))
        if saved not in existing:  # the same rule twice would only lengthen the listing
            _write_rules(path, [*existing, saved])
    return saved


def forget_project_rule(path: Path, rule: Rule) -> bool:
    """Remove the first rule of `path` equal to `rule`; False if it is no longer there."""
    with file_lock.exclusive(path):
        existing = read_rules(path)
        if rule not in existing:
            return False
        existing.remove(rule)
        _write_rules(path, existing)
    return True


def _write_rules(path: Path, rules: Iterable[Rule]) -> None:
    write_private_file(path, dumps_toml({"rule": [rule.as_table() for rule in rules]}))


# --- matching ----------------------------------------------------------------------------------


def _paths_of(tool: str, arguments: Mapping[str, Any], workspace: str) -> tuple[TouchedPath, ...]:
    """The paths the call's declared path arguments touch, as its tool opens them."""
    return tuple(p for p in declaration_of(tool).effect(arguments, workspace).paths() if p.argument)


def _names(touched: TouchedPath, pattern: str) -> bool:
    """A deny/ask path pattern names `touched` in any spelling (`~` in a pattern is the home folder)."""
    patterns = {pattern, os.path.expanduser(pattern)}
    return any(fnmatch.fnmatchcase(spelling, p) for spelling in touched.spellings for p in patterns)


def _covers(touched: TouchedPath, pattern: str) -> bool:
    """An allow path pattern covers `touched`: the file reached lies in the workspace and the
    pattern matches it there, as opened and as reached."""
    relative, real = touched.relative, touched.real_relative
    if relative is None or real is None:
        return False
    return fnmatch.fnmatchcase(relative, pattern) and fnmatch.fnmatchcase(real, pattern)


def _command_of(tool: str, arguments: Mapping[str, Any]) -> str | None:
    name = command_argument(tool)
    value = arguments.get(name) if name else None
    return value if isinstance(value, str) else None


def command_cwd(tool: str, arguments: Mapping[str, Any], workspace: str) -> str:
    """The folder a tool's command runs in, resolved as the tool resolves it (the argument its
    declaration marks `WorkingDirectory` — exec_command's `workdir` — joined to the workspace and
    normalised, `tool_effects.resolve_tool_path`; the workspace without one)."""
    name = declaration_of(tool).roles.workdir
    workdir = arguments.get(name) if name else None
    return resolve_tool_path(workspace, workdir) if isinstance(workdir, str) and workdir else workspace


def credential_argument(tool: str, arguments: Mapping[str, Any], workspace: str) -> str | None:
    """`read of a credential file: ~/.aws/credentials` when a word of the tool's command names one
    (the approval router asks then, whatever allows the call but allow-all)."""
    command = _command_of(tool, arguments)
    if command is None:
        return None
    return credential_argument_reason(command, command_cwd(tool, arguments, workspace), workspace)


@dataclass(frozen=True)
class Verdict:
    """What the rules say about a call: the action and the rule that decided it. `uncovered`: an
    allow rule's words matched but the call does more than the rule names (`note` says what); the
    cell's mode then decides, and a card shows the note."""

    action: Action
    rule: Rule
    note: str = ""  # e.g. why a deny rule could not be checked
    uncovered: bool = False


def _tightening_hit(
    rule: Rule, tool: str, arguments: Mapping[str, Any], workspace: str, touched: tuple[TouchedPath, ...] | None = None
) -> bool | None:
    """Does a deny/ask rule apply? None when the command cannot be checked (caller asks).
    `touched`: the call's paths (`_paths_of`), worked out once per judged call."""
    if rule.command is not None:
        command = _command_of(tool, arguments)
        if command is None:
            return False
        parts = loose_parts(command)
        if parts is None:
            return None
        return any(pattern_matches(rule.command, spelled) for part in parts for spelled in spellings(part))
    if rule.path is not None:
        paths = touched if touched is not None else _paths_of(tool, arguments, workspace)
        return any(_names(path, rule.path) for path in paths)
    return True


def _part_rule(rules: list[Rule], words: list[str], cwd: str, workspace: str) -> Rule | Verdict | None:
    """The command rule that covers one simple command: its pattern matches the words and every
    effect past the words it names is covered (`command_effects.uncovered_reason`); else the
    uncovered verdict of the first rule whose words matched, or None when none did."""
    effects: CommandEffects | None = None
    uncovered: Verdict | None = None
    for rule in rules:
        pattern = rule.command or ""
        if not pattern_matches(pattern, words):
            continue
        effects = effects or analyse_words(words, cwd)
        reason = uncovered_reason(effects, named_words(pattern, words), workspace)
        if reason is None:
            return rule
        uncovered = uncovered or Verdict("ask", rule, reason, uncovered=True)
    return uncovered


def _command_hit(rules: list[Rule], command: str, cwd: str, workspace: str) -> Rule | Verdict | None:
    """Every part of the command (strictly parsed) covered by some command rule → the first
    part's rule; a part whose words a rule matched but which does more → that uncovered verdict."""
    parts = strict_parts(command)
    if not parts:
        return None
    used = [_part_rule(rules, part, cwd, workspace) for part in parts]
    uncovered = next((hit for hit in used if isinstance(hit, Verdict)), None)
    if uncovered is not None:
        return uncovered
    return used[0] if all(isinstance(hit, Rule) for hit in used) else None


def _allow_hit(
    rules: list[Rule], tool: str, arguments: Mapping[str, Any], workspace: str, touched: tuple[TouchedPath, ...] | None = None
) -> Rule | Verdict | None:
    """The allow rule that covers the whole call: a tool-wide rule; every part of the command
    covered by some command rule (`_command_hit`); every path (inside the workspace, by its real
    location) matched by some path rule. An uncovered verdict when a command rule's words matched
    but the call does more than it names."""
    for rule in rules:
        if rule.command is None and rule.path is None:
            return rule
    command_rules = [rule for rule in rules if rule.command is not None]
    command = _command_of(tool, arguments)
    if command_rules and command is not None:
        hit = _command_hit(command_rules, command, command_cwd(tool, arguments, workspace), workspace)
        if hit is not None:
            return hit
    path_rules = [rule for rule in rules if rule.path is not None]
    paths = touched if touched is not None else _paths_of(tool, arguments, workspace) if path_rules else ()
    if path_rules and paths:
        used = [next((r for r in path_rules if _covers(path, r.path or "")), None) for path in paths]
        if all(rule is not None for rule in used):
            return used[0]
    return None


@dataclass
class RuleBook:
    """The rules in force for a cell, in listing order (the numbers `%penguin rules` shows):
    project, workspace, then the administrator's policy. The session's "always allow" tools are
    the router's (they are listed after these)."""

    project: list[Rule] = field(default_factory=list)
    workspace: list[Rule] = field(default_factory=list)
    policy: list[Rule] = field(default_factory=list)

    def rules(self) -> list[Rule]:
        return [*self.project, *self.workspace, *self.policy]

    def number_of(self, rule: Rule) -> int:
        return self.rules().index(rule) + 1

    def label(self, verdict: Verdict) -> str:
        """`allowed by rule 3 (git status) in <file>`, `denied by the administrator's policy`."""
        verb = {"allow": "allowed", "ask": "asked", "deny": "denied", "auto": "sandboxed"}[verdict.action]
        rule = verdict.rule
        if verdict.uncovered:
            return f"asked: {verdict.note} (not covered by rule {self.number_of(rule)} ({rule.pattern()}) in {rule.source})"
        if rule.from_policy:
            return f"{verb} by the administrator's policy ({rule.pattern()})"
        text = f"{verb} by rule {self.number_of(rule)} ({rule.pattern()}) in {rule.source}"
        return f"{text}: {verdict.note}" if verdict.note else text

    def judge(self, tool: str, arguments: Mapping[str, Any], workspace: str) -> Verdict | None:
        """deny beats ask beats auto beats allow among the rules that match; None when none does (or an
        uncovered verdict: an allow rule's words matched, the call does more)."""
        matching = [rule for rule in self.rules() if rule.tool == tool]
        touched = _paths_of(tool, arguments, workspace) if any(r.path is not None for r in matching) else ()
        for action in ("deny", "ask"):
            for rule in (r for r in matching if r.action == action):
                hit = _tightening_hit(rule, tool, arguments, workspace, touched)
                if hit is None:
                    return Verdict("ask", rule, "the command could not be checked against it")
                if hit:
                    return Verdict(rule.action, rule)
        sandboxed = _allow_hit([r for r in matching if r.action == "auto"], tool, arguments, workspace, touched)
        if sandboxed is not None:  # its words matched: the sandbox holds whatever else it does
            return Verdict("auto", sandboxed.rule if isinstance(sandboxed, Verdict) else sandboxed)
        allowed = _allow_hit([r for r in matching if r.action == "allow"], tool, arguments, workspace, touched)
        if isinstance(allowed, Verdict):
            return allowed
        return Verdict("allow", allowed) if allowed is not None else None


def suggested_rule(tool: str, arguments: Mapping[str, Any], workspace: str) -> Rule | None:
    """The allow rule "Save to project" offers for a call, as its declaration's `saved_rule`
    says: its command's leading words (`saved_rule_offer.offered_command_pattern`: `git status`,
    `ls`), its file's path relative to the workspace (where the file reached lies: never through
    a link out of it), or the tool; None for a tool whose declaration says "never", a command no
    rule is offered for, a file outside the workspace or one under `.penguin/`."""
    kind = declaration_of(tool).saved_rule_kind
    if kind == "never":
        return None
    if kind == "command":
        command = _command_of(tool, arguments)
        cwd = command_cwd(tool, arguments, workspace)
        pattern = offered_command_pattern(command, cwd, workspace) if command is not None else None
        return Rule("allow", tool, command=pattern) if pattern else None
    if kind == "path":
        touched = _paths_of(tool, arguments, workspace)
        if len(touched) != 1 or touched[0].relative is None or touched[0].relative != touched[0].real_relative:
            return None
        relative = touched[0].relative
        return None if _is_penguin_folder(relative) else Rule("allow", tool, path=relative)
    return Rule("allow", tool)


def _is_penguin_folder(relative: str) -> bool:
    """The workspace's own `.penguin/` folder (its rules file among others) gets no saved rule."""
    return relative.split(os.sep, 1)[0] == ".penguin"
