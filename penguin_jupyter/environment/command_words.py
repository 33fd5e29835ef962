"""Shell commands as words, for approval rules (docs/security.md "Approval rules and policy").

Owns how a command rule's pattern (`git status`, `py*`) is matched against a shell command:
the command is split with `shlex` into simple commands at `;`, `&&`, `||`, `|`, `&` and
newlines, each a list of words, and a rule is judged against each part separately.

Two readings, for the two directions a rule can go:

* `strict_parts` — what an **allow** rule may match: `None` whenever the shell would do more than
  run the words as written: a command substitution (`$(…)`, backticks, `<(…)`), a redirection
  (`>`, `>>`, `<`, `2>&1`…), a subshell or group, unbalanced quotes. Leading `X=…` assignments
  and wrappers (`env`, `bash -c '…'`) are words like any other, so `git status` does not match
  `env GIT_DIR=x git status` or `bash -c 'git status'`.
* `loose_parts` — what a **deny** or **ask** rule is checked against: substitutions are opened
  up and judged as parts of their own, `X=…` assignments and wrappers (`env`, `sudo`, `nohup`,
  `time`, `command`, `exec`, `bash|sh|zsh -c '…'`) are peeled off, so `deny curl*` catches
  `echo $(curl …)`, `env A=1 curl …` and `bash -c 'curl …'`. `None` only when even this cannot
  be parsed (the caller then asks).

`named_words` says how many of a command's leading words a pattern names as written (an allow
rule covers those; every other word must be known-safe, `command_effects.coverage`).

Which tools have a command argument is the tool declarations' business (`command=`); what a
decision is, the approval router's; which rule a card offers to save, `saved_rule_offer.py`'s.
The command policy (`command_policy.py`) is separate and always runs first.
"""

from __future__ import annotations

import fnmatch
import re
import shlex

_OPERATORS = frozenset({";", ";;", "&&", "||", "|", "&", "|&", "\n", ";&", ";;&"})
_PUNCTUATION = ";&|()<>\n"
_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")
_WRAPPERS = frozenset({"env", "sudo", "nohup", "time", "command", "exec", "nice", "stdbuf", "timeout"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_GLOB = re.compile(r"[*?\[]")
MAX_DEPTH = 4


def _tokens(text: str) -> list[str] | None:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes or a trailing escape
        return None


def _split(tokens: list[str]) -> list[list[str]] | None:
    """Simple commands between control operators; None if any other punctuation is left
    (redirections, subshells, groups)."""
    parts: list[list[str]] = [[]]
    for token in tokens:
        if token in _OPERATORS:
            parts.append([])
        elif token and all(ch in _PUNCTUATION for ch in token):
            return None
        else:
            parts[-1].append(token)
    return [part for part in parts if part]


def strict_parts(cmd: str) -> list[list[str]] | None:
    """The simple commands of `cmd` as words, or None when an allow rule must not judge it."""
    if _SUBSTITUTION.search(cmd):
        return None
    tokens = _tokens(cmd)
    if tokens is None:
        return None
    return _split(tokens)


def loose_parts(cmd: str, depth: int = 0) -> list[list[str]] | None:
    """Every simple command `cmd` may run (substitutions opened, wrappers peeled), or None."""
    opened = _SUBSTITUTION.sub(" ; ", cmd).replace(")", " ; ")
    tokens = _tokens(opened)
    if tokens is None:
        return None
    parts: list[list[str]] = []
    current: list[str] = []
    redirect_target = False
    for token in tokens:
        if token in _OPERATORS or token in ("(", ")"):
            parts.append(current)
            current, redirect_target = [], False
        elif token and all(ch in _PUNCTUATION for ch in token):
            redirect_target = True  # the word after a redirection is a file name, not a command word
        elif redirect_target:
            redirect_target = False
        else:
            current.append(token)
    parts.append(current)
    found: list[list[str]] = []
    for part in parts:
        peeled = _peel(part, depth)
        if peeled is None:
            return None
        found.extend(peeled)
    return [part for part in found if part]


def _peel(words: list[str], depth: int) -> list[list[str]] | None:
    """`words` without leading assignments; after a wrapper (`sudo -u root curl …`) every suffix
    of its arguments is a candidate (over-matching is the safe side for deny and ask);
    `bash -c '…'` judged as its own command."""
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return [words]
    program = words[0].rsplit("/", 1)[-1]
    if program in _SHELLS and "-c" in words[1:]:
        index = words.index("-c", 1)
        if index + 1 >= len(words) or depth >= MAX_DEPTH:
            return None
        return loose_parts(words[index + 1], depth + 1)
    if program in _WRAPPERS:
        found = [words]
        for start in range(1, len(words)):
            peeled = _peel(words[start:], depth + 1)
            if peeled is None:
                return None
            found.extend(peeled)
        return found
    return [words]


def pattern_matches(pattern: str, words: list[str]) -> bool:
    """Does a rule's command pattern match one simple command? Without glob characters the
    pattern's words must be the command's first words (`git status` matches `git status -s`);
    with them, the pattern is a glob over the words joined by single spaces (`git st*`)."""
    if _GLOB.search(pattern):
        return fnmatch.fnmatchcase(" ".join(words), pattern)
    wanted = _tokens(pattern)
    if not wanted:
        return False
    return words[: len(wanted)] == wanted


def every_word(cmd: str, depth: int = 0) -> list[str]:
    """Every word `cmd` holds, for a check that must over-match (a credential file named anywhere):
    the words of every part, redirection targets included, substitutions opened, and the words of
    any word that itself reads as a command (`bash -c 'cat < f'`), to `MAX_DEPTH`. Unbalanced
    quotes: the text split at white space."""
    opened = _SUBSTITUTION.sub(" ; ", cmd).replace(")", " ; ")
    tokens = _tokens(opened)
    words: list[str] = []
    for token in opened.split() if tokens is None else tokens:
        if not token or all(ch in _PUNCTUATION for ch in token):
            continue
        words.append(token)
        if depth < MAX_DEPTH and any(ch in token for ch in " \t" + _PUNCTUATION):
            words.extend(every_word(token, depth + 1))
    return words


def named_words(pattern: str, words: list[str]) -> int:
    """How many leading words of `words` a matching pattern names as written: its words without
    glob characters, in order (`git status` names 2; `git st*` names 1; `*` names none). What a
    rule covers beyond them is the command analysis' business (`command_effects.coverage`)."""
    wanted = _tokens(pattern) or []
    named = 0
    for want, word in zip(wanted, words, strict=False):
        if _GLOB.search(want) or want != word:
            break
        named += 1
    return named

