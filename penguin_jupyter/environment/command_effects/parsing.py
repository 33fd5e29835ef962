"""Reading one command's words against its table (docs/security.md "What a rule covers").

Owns `read_options`: walk the words after the program (or subcommand) the way getopt, git's
parse-options, Go's pflag or pip's optparse would — bundled short flags, `-n5` / `-n 5`,
`--name=value` / `--name value`, attached-only optional values, `--` ending the options — and
turn every option and operand into effects. Fail-closed by construction:

* an option not in the table, an abbreviation of one (`--out` for `--output`: getopt and git
  accept it), a flag given a value, or a value that itself looks like an option is *unknown*;
* a path value or operand is resolved for every way bash may have quoted it
  (`shell_words.path_variants`).

What the tables say is the families' business; whether the effects are covered, `coverage.py`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from .effects import Effect, EffectKind
from .shell_words import path_variants
from .tables import Command, Option, Role, Style

_NUMBER = re.compile(r"[-+]?\d+")
_BOOLEAN = frozenset({"true", "false"})


@dataclass
class Reading:
    """What reading the words found: effects, operands (index, word), whether a pattern was given."""

    effects: list[Effect] = field(default_factory=list)
    operands: list[tuple[int, str]] = field(default_factory=list)
    pattern_given: bool = False
    stopped_at: int | None = None  # read_globals: the index of the first operand (the subcommand)


def role_effects(role: Role, text: str, index: int, option: str, cwd: str, what: str = "") -> list[Effect]:
    """The effects of one option (a flag when `text` is "") or operand with `role`."""
    if role == "plain":
        return []
    if role in ("reads", "writes", "loads"):  # no value: the program refuses the call
        return [Effect(role, index, path, option) for path in path_variants(text, cwd)] if text else []
    kind: EffectKind = role
    return [Effect(kind, index, f"{what}: {text}" if what and text else what or text, option)]


def _unknown(index: int, option: str, why: str = "is not an option penguin knows") -> Effect:
    return Effect("unknown", index, f"{option} {why}")


def _apply(option: Option, name: str, given: str | None, index: int, cwd: str, reading: Reading) -> None:
    if option.gives_pattern:
        reading.pattern_given = True
    role, what, text = option.role, option.what, given or ""
    if given is not None and option.check is not None:
        checked = option.check(given)
        if checked is not None:  # a path role names the path in the value, any other a description
            role = checked[0]
            text, what = (checked[1], "") if role in ("reads", "writes", "loads") else (text, checked[1])
    reading.effects.extend(role_effects(role, text, index, name, cwd, what))


def _separate_value(words: list[str], at: int, name: str, reading: Reading) -> str | None:
    """The value given as the next word; a value that looks like an option is unknown (it may be
    an option the table wrongly thinks takes a value)."""
    if at >= len(words):
        return None
    text = words[at]
    if text.startswith("-") and text != "-" and not _NUMBER.fullmatch(text):
        reading.effects.append(_unknown(at, name, f"is given {text!r} as its value"))
    return text


def _long(words: list[str], i: int, options: Mapping[str, Option], style: Style, cwd: str, reading: Reading) -> int:
    word = words[i]
    name, equals, given = word.partition("=")
    option = options.get(name)
    if option is None:
        reading.effects.append(_unknown(i, name))
        return i + 1
    if option.arity == "none":
        if equals and not (style == "pflag" and given in _BOOLEAN):
            reading.effects.append(_unknown(i, name, "takes no value"))
        _apply(option, name, None, i, cwd, reading)
        return i + 1
    if option.arity == "optional" or equals:
        _apply(option, name, given if equals else None, i, cwd, reading)
        return i + 1
    text = _separate_value(words, i + 1, name, reading)
    _apply(option, name, text, i + 1, cwd, reading)
    return i + 2


def _short(words: list[str], i: int, options: Mapping[str, Option], style: Style, cwd: str, reading: Reading) -> int:
    word = words[i]
    whole, equals, given = word.partition("=")
    option = options.get(whole)
    if option is not None and (len(whole) > 2 or style == "single-dash"):  # nvidia-smi -lms, -pm
        if option.arity == "none" or equals or option.arity == "optional":
            _apply(option, whole, given if equals else None, i, cwd, reading)
            return i + 1
        _apply(option, whole, _separate_value(words, i + 1, whole, reading), i + 1, cwd, reading)
        return i + 2
    if style == "single-dash":
        reading.effects.append(_unknown(i, whole))
        return i + 1
    for at in range(1, len(word)):
        name = "-" + word[at]
        option = options.get(name)
        if option is None:
            reading.effects.append(_unknown(i, name))
            return i + 1
        if option.arity == "none":
            _apply(option, name, None, i, cwd, reading)
            continue
        rest = word[at + 1 :]
        if style == "pflag" and rest.startswith("="):
            rest = rest[1:]
        if rest or option.arity == "optional":
            _apply(option, name, rest or None, i, cwd, reading)
            return i + 1
        _apply(option, name, _separate_value(words, i + 1, name, reading), i + 1, cwd, reading)
        return i + 2
    return i + 1


def read_options(
    words: list[str],
    start: int,
    options: Mapping[str, Option],
    style: Style,
    cwd: str,
    *,
    numeric_short: bool = False,
    stop_at_operand: bool = False,
) -> Reading:
    """Read `words[start:]`: options anywhere (GNU permutes them), operands collected; with
    `stop_at_operand`, stop at the first operand (a program's options before its subcommand)."""
    reading = Reading()
    i, only_operands = start, False
    while i < len(words):
        word = words[i]
        if only_operands or word == "-" or not word.startswith("-"):
            if stop_at_operand:
                reading.stopped_at = i
                return reading
            reading.operands.append((i, word))
            i += 1
        elif word == "--":
            only_operands = True
            i += 1
        elif numeric_short and _NUMBER.fullmatch(word):
            i += 1
        elif word.startswith("--"):
            i = _long(words, i, options, style, cwd, reading)
        else:
            i = _short(words, i, options, style, cwd, reading)
    return reading


def operand_effects(command: Command, reading: Reading, cwd: str) -> list[Effect]:
    """The effects of the operands a reading collected, by the command's operand kind."""
    effects: list[Effect] = []
    operands = list(reading.operands)
    if command.operands == "pattern-then-reads" and not reading.pattern_given and operands:
        operands = operands[1:]
    role: Role = "reads" if command.operands in ("reads", "pattern-then-reads") else "plain"
    for index, word in operands:
        if command.operands == "none":
            effects.append(Effect("unknown", index, f"takes no operand ({word!r})"))
            continue
        if command.operand_check is not None:
            checked = command.operand_check(word)
            if checked is not None:
                effects.extend(role_effects(checked[0], word, index, "", cwd, checked[1]))
        if word != "-":
            effects.extend(role_effects(role, word, index, "", cwd))
    if command.reads_cwd and not any(effect.kind == "reads" and effect.option == "" for effect in effects):
        effects.append(Effect("reads", None, cwd))
    if command.reads_trees:
        effects = [replace(effect, tree=True) if effect.kind == "reads" and not effect.option else effect for effect in effects]
    return effects
