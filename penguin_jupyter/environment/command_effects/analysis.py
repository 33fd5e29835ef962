"""What a shell command does, word by word (docs/security.md "What a rule covers").

Owns `analyse_command(cmd, cwd)` and `analyse_words(words, cwd)`: split the command with
`command_words.strict_parts` (None when an allow rule must not judge it at all), then for each
simple command find the program and subcommand in the tables (`programs.py`) and say, for every
word, what it does (`parsing.py`), plus what the program always does and what it runs from the
folder (`Command.inherent`, `Command.folder_check`). Every word is also checked for what bash
would still do to it (`shell_words.py`): an expansion makes it unknown; a glob is expanded and
each match read (a match that starts with `-` would be an option: unknown).

Pure apart from reading the file system (globs, the repository's configuration); whether the
effects are covered by a rule is `coverage.py`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..command_words import strict_parts
from .effects import CommandEffects, Effect
from .parsing import operand_effects, read_options
from .programs import program_named
from .shell_words import expansion_hazard, glob_matches, has_glob
from .tables import Option


def _word_effects(index: int, word: str, cwd: str) -> list[Effect]:
    hazard = expansion_hazard(word)
    if hazard is not None:
        return [Effect("unknown", index, f"{word!r} holds {hazard}")]
    if index == 0 or not has_glob(word):
        return []
    matches = glob_matches(word, cwd)
    if matches is None:
        return [Effect("unknown", index, f"{word!r} matches too many files to check")]
    effects: list[Effect] = []
    for match in matches:
        if match.startswith("-"):
            effects.append(Effect("unknown", index, f"{word!r} matches {match!r}, which reads as an option"))
        else:
            effects.append(Effect("reads", index, os.path.normpath(os.path.join(cwd, match)), tree=True))
    return effects


def _unknown_from(words: list[str], start: int) -> list[Effect]:
    """Words nothing in the tables describes (after an unknown program or subcommand): each is
    unknown, so a rule covers them only by naming them."""
    return [Effect("unknown", index, f"is given {words[index]!r}, which penguin cannot check") for index in range(start, len(words))]


def analyse_words(words: list[str], cwd: str) -> CommandEffects:
    """The effects of one simple command (its words as `strict_parts` gives them)."""
    effects = [effect for index, word in enumerate(words) for effect in _word_effects(index, word, cwd)]
    first = words[0]
    program = None if "/" in first else program_named(first)
    if program is None:
        unknown = [Effect("unknown", 0, "is not a program penguin knows"), *_unknown_from(words, 1)]
        return CommandEffects(tuple(words), "", "", (*unknown, *effects))
    subcommand, offer_words, start = "", 1, 1
    command = program.command
    options: Mapping[str, Option] = command.index if command is not None else {}
    if command is None:
        reading = read_options(words, 1, program.global_index, program.style, cwd, stop_at_operand=True)
        effects.extend(reading.effects)
        at = reading.stopped_at
        command = program.subcommands.get(words[at]) if at is not None else None
        if at is None or command is None:
            what = f"{words[at]} is not a subcommand penguin knows" if at is not None else "has no subcommand"
            effects.append(Effect("unknown", at if at is not None else 0, what))
            effects.extend(_unknown_from(words, at + 1 if at is not None else len(words)))
            return CommandEffects(tuple(words), program.name, "", tuple(effects))
        subcommand, start = words[at], at + 1
        offer_words = 2 if at == 1 else 0
        options = program.merged(command)
    reading = read_options(words, start, options, program.style, cwd, numeric_short=command.numeric_short)
    effects.extend(reading.effects)
    effects.extend(operand_effects(command, reading, cwd))
    effects.extend(Effect(kind, start - 1, what) for kind, what in command.inherent)
    if command.folder_check is not None:
        effects.extend(command.folder_check(cwd))
    return CommandEffects(tuple(words), program.name, subcommand, tuple(effects), offer_words)


def analyse_command(cmd: str, cwd: str) -> list[CommandEffects] | None:
    """Each simple command of `cmd` analysed in `cwd`; None when the shell would do more than
    run the words as written (`strict_parts`: substitutions, redirections, subshells)."""
    parts = strict_parts(cmd)
    if parts is None:
        return None
    return [analyse_words(words, cwd) for words in parts]
