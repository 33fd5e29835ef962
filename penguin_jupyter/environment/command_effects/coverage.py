"""Whether an allow rule covers what a command does (docs/security.md "What a rule covers").

Owns `uncovered_reason(effects, named, workspace)`: the first thing one analysed simple command
does that an allow rule naming its first `named` words does not cover, as the line the card
shows after "asked: " (`git blame --output writes ~/.ssh/authorized_keys`), or None. The rule:

* the words the rule names are covered as written — except, whatever the words say, a read of a
  credential file (`environment/secret_files.secret_file_label`: by name, location or identity),
  credentials a command prints (role "secrets") and configuration the folder controls (git's
  `core.fsmonitor`, an `.npmrc`): those are never covered;
* every other word must be known-safe: a read inside the workspace (by its real location) or an
  option that only changes the output. A read outside the workspace, a write, a loaded config, the
  network, a program run, or anything unknown is not covered.

Also owns `credential_argument_reason`: the credential file any word of a command names (the
check behind "a credential read still asks under an allow rule", for every program, known or
not).
"""

from __future__ import annotations

import os

from ..command_words import every_word
from ..secret_files import CREDENTIAL_READ, data_roots, secret_file_label
from .effects import CommandEffects, Effect
from .shell_words import glob_matches, has_glob, path_variants


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def shown_path(path: str, workspace: str) -> str:
    """A path as a reason shows it: relative inside the workspace, `~/…` under the home folder."""
    real, base = os.path.realpath(path), os.path.realpath(workspace)
    if _within(real, base) and real != base:
        return os.path.relpath(real, base)
    home = os.path.expanduser("~")
    return "~" + real[len(home) :] if _within(real, home) and home != os.sep else real


def _folder_label(real: str, workspace: str, tree: bool) -> str | None:
    """A folder holds credentials when it lies in a hidden folder of the home folder (`~/.ssh`,
    `~/.aws`, `~/.config/gh`…: where the credential list's folders are) or in a penguin data
    root; read with all its files (`tree`), also when it holds the home folder or a data root."""
    home = os.path.realpath(os.path.expanduser("~"))
    if _within(real, home) and real != home and os.path.relpath(real, home).startswith("."):
        return shown_path(real, workspace)
    for root in (os.path.realpath(root) for root in data_roots()):
        if _within(real, root) or (tree and _within(root, real)):
            return f"penguin's data root ({shown_path(root, workspace)})"
    if tree and _within(home, real):
        return f"{shown_path(real, workspace)}, which holds the home folder's credential files"
    return None


def credential_label(path: str, workspace: str, tree: bool = False) -> str | None:
    """How a reason names the credential file (or folder holding credentials) `path` is, or None
    (a folder's label, such as `~/.aws/`, gives way to the path itself). Files are judged by
    `secret_files.secret_file_label` (name, location, identity); folders by `_folder_label`."""
    real = os.path.realpath(path)
    if os.path.isdir(real):
        return _folder_label(real, workspace, tree)
    label = secret_file_label(path, workspace)
    if label is None:
        return None
    return shown_path(path, workspace) if label.endswith("/") else label


def _effect_reason(title: str, effect: Effect, named: int, workspace: str) -> str | None:
    """Why `effect` is not covered by a rule naming `named` words, or None when it is."""
    option = f" {effect.option}" if effect.option else ""
    is_named = effect.word is not None and effect.word < named
    if effect.kind == "reads":
        label = credential_label(effect.what, workspace, effect.tree)
        if label is not None:
            return f"{title}{option} reads a credential file: {label}"
        inside = _within(os.path.realpath(effect.what), os.path.realpath(workspace))
        return None if inside or is_named else f"{title}{option} reads outside the workspace: {shown_path(effect.what, workspace)}"
    if effect.kind == "scans":
        label = _folder_label(os.path.realpath(effect.what), workspace, tree=True)
        return None if label is None else f"{title} reads its repository: {label}"
    if effect.kind == "secrets":
        return f"{title}{option} shows {effect.what}"
    if effect.kind == "folder":
        return f"{title} runs configuration the folder controls: {effect.what}"
    if is_named:
        return None
    if effect.kind == "writes":
        return f"{title}{option} writes {shown_path(effect.what, workspace)}"
    if effect.kind == "loads":
        return f"{title}{option} loads {shown_path(effect.what, workspace)} (it can run a program)"
    if effect.kind == "network":
        return f"{title}{option} reaches {effect.what}"
    if effect.kind == "runs":
        return f"{title}{option} runs {effect.what}"
    return f"{title} {effect.what}"


MAX_REASONS = 3


def uncovered_reason(effects: CommandEffects, named: int, workspace: str) -> str | None:
    """What an allow rule naming `named` leading words does not cover (see the module): the
    first `MAX_REASONS` such effects, joined by "; ", or None when it covers them all."""
    title = effects.title()
    reasons: dict[str, None] = {}
    for effect in effects.effects:
        reason = _effect_reason(title, effect, named, workspace)
        if reason is not None:
            reasons[reason] = None
            if len(reasons) == MAX_REASONS:
                break
    return "; ".join(reasons) or None


def credential_argument_reason(cmd: str, cwd: str, workspace: str) -> str | None:
    """`read of a credential file: ~/.aws/credentials` when a word of `cmd` (or the value after a
    word's `=`) names a credential file, in any way bash may have quoted it — redirections,
    substitutions and `bash -c '…'` included (`command_words.every_word`); None otherwise."""
    for word in dict.fromkeys(every_word(cmd)):
        for text in dict.fromkeys((word, word.partition("=")[2])):
            label = _credential_in(text, cwd, workspace) if text else None
            if label is not None:
                return f"{CREDENTIAL_READ}: {label}"
    return None


def _credential_in(text: str, cwd: str, workspace: str) -> str | None:
    paths = path_variants(text, cwd)
    if has_glob(text):
        paths += [os.path.join(cwd, match) for match in glob_matches(text, cwd) or []]
    for path in paths:
        if "/" in text or os.path.lexists(path):  # a bare word names a file only if it exists
            label = credential_label(path, workspace)
            if label is not None:
                return label
    return None
