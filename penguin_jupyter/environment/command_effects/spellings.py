"""Every spelling of a command a deny or ask rule must catch (docs/security.md "What a command rule
matches").

Owns `spellings(words)`: one simple command (as `command_words.loose_parts` gives it) as written
and as the tables would name it — the program without its folder (`/usr/bin/curl` → `curl`),
`python -m pip …` → `pip …`, `pip3` → `pip`, and for a program with subcommands without the
options before the subcommand (`git -C x push` → `git push`, `kubectl -n ns delete` →
`kubectl delete`). Over-matching is the safe side for a deny, so an option of unknown arity is
read both ways.
"""

from __future__ import annotations

import re

from .programs import program_named

_PYTHON = re.compile(r"python[0-9.]*")
_PIP = re.compile(r"pip[0-9][0-9.]*")


def _subcommand_starts(rest: list[str]) -> list[int]:
    """Where the subcommand may start: each operand after nothing but options (an operand right
    after an option may be that option's value, so the next operand is a candidate too)."""
    starts: list[int] = []
    for index, word in enumerate(rest):
        if word.startswith("-"):
            continue
        starts.append(index)
        if index == 0 or not rest[index - 1].startswith("-") or "=" in rest[index - 1]:
            break
    return starts


def spellings(words: list[str]) -> list[list[str]]:
    """`words` and the other ways to name the same command (see the module)."""
    if not words:
        return [words]
    found = [words]
    program, rest = words[0].rsplit("/", 1)[-1], words[1:]
    if _PYTHON.fullmatch(program) and len(rest) >= 2 and rest[0] == "-m":
        program, rest = rest[1], rest[2:]
    found.append([program, *rest])
    if _PIP.fullmatch(program):
        program = "pip"
        found.append([program, *rest])
    table = program_named(program)
    if table is not None and table.subcommands:
        found.extend([program, *rest[start:]] for start in _subcommand_starts(rest) if start > 0)
    unique: dict[tuple[str, ...], list[str]] = {tuple(spelled): spelled for spelled in found}
    return list(unique.values())
