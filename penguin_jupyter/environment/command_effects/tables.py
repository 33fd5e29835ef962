"""The shape of a program table (docs/security.md "What a rule covers").

Owns the types every program family's module fills in: `Option` (its names, whether it takes a
value, and what giving it does), `Command` (a program without subcommands, or one subcommand: its
options, what its operands are, what it always does, what it reads from the folder) and
`Program`. Nothing here knows a program; the families (`coreutils.py`, `git.py`, …) do, and
`programs.py` lists them. How a command's words are read against a table is `parsing.py`'s.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from .effects import Effect, EffectKind

Arity = Literal["none", "required", "optional"]
# What an option does (a flag) or what its value is (an option with a value): plain = nothing
# beyond the program's own output; the rest are effect kinds.
Role = Literal["plain", "reads", "writes", "loads", "network", "runs", "secrets"]
# Operands: none (an operand is unknown), plain (names, revisions, patterns), reads (paths read),
# pattern-then-reads (grep: the first is the pattern unless -e/-f gave one).
Operands = Literal["none", "plain", "reads", "pattern-then-reads"]
# How options are spelled: gnu (bundled short flags, --long[=value]), pflag (Go: also -n=value
# and --flag=true|false), single-dash (nvidia-smi: -lms, -pm are whole words).
Style = Literal["gnu", "pflag", "single-dash"]
# A value-dependent role for this value, or None for the option's own role: (role, the path in
# the value) for reads/writes/loads, (role, a description) for the others.
ValueCheck = Callable[[str], "tuple[Role, str] | None"]
# What a command reads from the folder it runs in (git's repository configuration, an .npmrc):
# effects with no word, from the working directory.
FolderCheck = Callable[[str], list[Effect]]


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]
    arity: Arity = "none"
    role: Role = "plain"
    what: str = ""  # how a reason names the object of a non-path role ("a package index", "gpg")
    check: ValueCheck | None = None
    gives_pattern: bool = False  # grep -e / -f: every operand is then a file


def flag(*names: str, role: Role = "plain", what: str = "", gives_pattern: bool = False) -> Option:
    return Option(names, "none", role, what, None, gives_pattern)


def value(*names: str, role: Role = "plain", what: str = "", check: ValueCheck | None = None, gives_pattern: bool = False) -> Option:
    """An option whose value is required (`-n 5`, `-n5`, `--lines=5`, `--lines 5`)."""
    return Option(names, "required", role, what, check, gives_pattern)


def optional(*names: str, role: Role = "plain", what: str = "", check: ValueCheck | None = None) -> Option:
    """An option whose value may only be attached (`--color=always`, `-M50%`)."""
    return Option(names, "optional", role, what, check)


@dataclass(frozen=True)
class Command:
    """A program without subcommands, or one subcommand. `inherent` is what it always does
    (`npm view` reaches the registry); `reads_cwd` that without a path operand it reads the
    working directory (ls, du, rg)."""

    options: tuple[Option, ...] = ()
    operands: Operands = "plain"
    reads_cwd: bool = False
    reads_trees: bool = False  # a folder operand is read with all its files (grep -r, rg)
    numeric_short: bool = False  # `-5` is a count (head, tail, grep, git log)
    inherent: tuple[tuple[EffectKind, str], ...] = ()
    operand_check: ValueCheck | None = None  # kubectl get: a `secrets` operand shows credentials
    folder_check: FolderCheck | None = None
    summary: str = ""  # one line for the docs' table: what the operands are, what is left out

    @functools.cached_property
    def index(self) -> dict[str, Option]:
        return {name: option for option in self.options for name in option.names}


@dataclass(frozen=True)
class Program:
    """A program the tables know. Either `command` (no subcommands) or `subcommands`, with the
    `global_options` that may come before the subcommand (and after it too, when
    `globals_after_subcommand`)."""

    name: str
    command: Command | None = None
    subcommands: Mapping[str, Command] = field(default_factory=dict)
    global_options: tuple[Option, ...] = ()
    globals_after_subcommand: bool = False
    style: Style = "gnu"
    about: str = ""  # one line for the docs (what is left out and why)

    @functools.cached_property
    def global_index(self) -> dict[str, Option]:
        return {name: option for option in self.global_options for name in option.names}

    def merged(self, command: Command) -> Mapping[str, Option]:
        """The options a subcommand's words are read against."""
        if not self.globals_after_subcommand:
            return command.index
        return {**self.global_index, **command.index}


def commands(table: Mapping[str, Command], *names: str, command: Command) -> dict[str, Command]:
    """`table` plus `command` under each of `names` (`npm ls` and `npm list`)."""
    return {**table, **dict.fromkeys(names, command)}
