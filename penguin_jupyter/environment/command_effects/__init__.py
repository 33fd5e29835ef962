"""What a shell command can do, for the approval rules (docs/security.md "What a rule covers").

A permission covers what a call can do, never what its text looks like. This package reads a
command's words the way the shell and the program will — per simple command: the program and
subcommand, and for every word what it does (a path read or written, a config or plugin loaded,
the network reached, a program run, credentials shown, configuration the folder runs, or
unknown) — from one table per program it knows. The approval rules (`state/approval_rules.py`)
and the card's "Save to project" offer (`environment/saved_rule_offer.py`) both read it, so what
a rule covers and what is offered come from the same tables.

Modules: `analysis` (the entry point), `parsing` (options against a table), `shell_words` (what
bash still does to a word), `coverage` (whether a rule covers the effects), `tables` (the table
types), `programs` (the known programs) and one module per program family with its tables
(`coreutils`, `search`, `git` with `git_repository` and `git_config`, `python_packages`,
`containers`, `npm`, `gpu`); `describe` renders the tables for the docs.
"""

from .analysis import analyse_command, analyse_words
from .coverage import credential_argument_reason, shown_path, uncovered_reason
from .effects import CommandEffects, Effect, EffectKind

__all__ = [
    "CommandEffects",
    "Effect",
    "EffectKind",
    "analyse_command",
    "analyse_words",
    "credential_argument_reason",
    "shown_path",
    "uncovered_reason",
]
