"""A word as bash will hand it to the program, for the analysis (docs/security.md "What a rule covers").

Owns what bash may still do to a word that `command_words.strict_parts` gave back with its
quotes removed — so each question is answered for every way the word could have been quoted:

* `expansion_hazard` — a `$…` parameter or arithmetic expansion, or a `{a,b}` / `{1..3}` brace
  expansion: the value (and, after word splitting, even the number of words) is not known, so
  the word is unknown;
* `path_variants` — the paths a word may name, joined to the working directory and normalised as
  the program will open them: the word as written and, for a leading `~`, `~user`, `~+`, or a
  `~` after `=` (bash expands `name=~/x`; git expands `--output=~/x` itself), the expanded one;
* `glob_matches` — the file names an unquoted `*`, `?` or `[…]` word expands to (bash's defaults:
  no dot files, no `**`), bounded.

Which words are paths is the program tables' business; whether a path is a credential or outside
the workspace, `coverage.py`'s.
"""

from __future__ import annotations

import glob
import itertools
import os
import re

# `$name`, `${…}`, `$1`, `$?`, `$$`, `$[…]` (old arithmetic), `$'…'`/`$"…"` quoting
_EXPANSION = re.compile(r"\$[A-Za-z_0-9{(\[?$!@*#'\"-]")
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_GLOB = re.compile(r"[*?\[]")
_TILDE_AFTER_EQUALS = re.compile(r"^[^=]*=(~[^/:]*)")
MAX_GLOB_MATCHES = 100  # each match is checked against the credential list


def expansion_hazard(word: str) -> str | None:
    """Why bash may turn `word` into something else (an expansion), or None."""
    if _EXPANSION.search(word):
        return "a shell expansion ($…)"
    if _BRACE.search(word):
        return "a brace expansion ({…})"
    return None


def _tilde(prefix: str, cwd: str) -> str | None:
    """What bash makes of a tilde prefix (`~`, `~user`, `~+`), or None when it stays as written."""
    if prefix == "~+":
        return cwd
    if prefix == "~-":
        return os.environ.get("OLDPWD") or None
    expanded = os.path.expanduser(prefix)
    return None if expanded == prefix else expanded


def path_variants(word: str, cwd: str) -> list[str]:
    """The absolute, normalised paths `word` may name (not yet resolved through links)."""
    found = [os.path.normpath(os.path.join(cwd, word))]
    candidates = [word]
    match = _TILDE_AFTER_EQUALS.match(word)
    if match:
        candidates.append(word[match.start(1) :])
    for candidate in candidates:
        if not candidate.startswith("~"):
            continue
        prefix, slash, rest = candidate.partition("/")
        home = _tilde(prefix, cwd)
        if home is not None:
            found.append(os.path.normpath(os.path.join(cwd, home, rest) if slash else os.path.join(cwd, home)))
    return list(dict.fromkeys(found))


def has_glob(word: str) -> bool:
    return bool(_GLOB.search(word))


def glob_matches(word: str, cwd: str) -> list[str] | None:
    """The words an unquoted glob `word` becomes (relative as bash passes them), [] when nothing
    matches (bash then passes the word itself), None when there are too many to check."""
    pattern = word
    prefix, slash, rest = word.partition("/")
    home = _tilde(prefix, cwd) if prefix.startswith("~") else None
    if home is not None:
        pattern = os.path.join(home, rest) if slash else home
    try:
        matches = list(itertools.islice(glob.iglob(pattern, root_dir=cwd), MAX_GLOB_MATCHES + 1))
    except (OSError, ValueError, RecursionError):
        return None
    return None if len(matches) > MAX_GLOB_MATCHES else matches
