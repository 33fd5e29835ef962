"""Which repository a git command runs in, and what of it the folder controls (docs/security.md
"What a rule covers", git).

Owns `repository_effects(cwd)`: find the repository as git does — from the working directory
upward, at each level a `.git` directory or a `.git` file, else the folder itself when it is a
bare repository (git uses an embedded bare repository too) — and report, as effects no word
causes:

* a read of the working directory (a `workdir` outside the workspace reads outside it) and a
  scan of the repository's top (its work tree, or the bare repository): git shows what it
  tracks from all of it, so a repository that holds the home folder's credential folders (a
  dotfiles repository in `~`) is judged by them; one whose top merely lies above the workspace
  (a notebook in a project's subfolder) is the project;
* `folder` effects for what runs when git does: a risky key of its `config` or `config.worktree`
  (`git_config.py`), a `post-index-change` hook (run whenever git writes the index, which
  `git status` does), submodules (each has a configuration of its own, not checked), and any
  repository penguin cannot see into: a `.git` file (`gitdir:`), a `commondir`, a `.git` link.

Every `.git` met on the way up is checked, also one git would pass over, so a folder cannot
hide a configuration behind an invalid one.
"""

from __future__ import annotations

import os
import stat

from .effects import Effect
from .git_config import read_config

MAX_LEVELS = 64
# Hooks git runs during the subcommands the tables know (it writes the index while reading).
READ_TIME_HOOKS = ("post-index-change",)


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None


def _is_git_directory(path: str) -> bool:
    """git's test: a HEAD file and objects/ and refs/ folders."""
    return os.path.isfile(os.path.join(path, "HEAD")) and all(
        os.path.isdir(os.path.join(path, name)) for name in ("objects", "refs")
    )


def _folder(what: str) -> Effect:
    return Effect("folder", None, what)


def _git_directory_effects(gitdir: str, top: str | None) -> list[Effect]:
    effects: list[Effect] = []
    for name in ("config", "config.worktree"):
        path = os.path.join(gitdir, name)
        effects.extend(_folder(f"{finding} in {path}") for finding in read_config(path))
    for hook in READ_TIME_HOOKS:
        if _lstat(os.path.join(gitdir, "hooks", hook)) is not None:
            effects.append(_folder(f"the {hook} hook in {os.path.join(gitdir, 'hooks')}"))
    if _lstat(os.path.join(gitdir, "commondir")) is not None:
        effects.append(_folder(f"{gitdir} takes its configuration from another repository (commondir)"))
    has_modules = _lstat(os.path.join(gitdir, "modules")) is not None
    if has_modules or (top is not None and _lstat(os.path.join(top, ".gitmodules")) is not None):
        effects.append(_folder(f"submodules of {top or gitdir} (their configuration is not checked)"))
    return effects


def repository_effects(cwd: str) -> list[Effect]:
    """What running git in `cwd` reads and runs from the folder (see the module)."""
    here = os.path.realpath(cwd)
    effects: list[Effect] = []

    def found(top: str) -> list[Effect]:
        return [Effect("reads", None, cwd), Effect("scans", None, top)]

    for _ in range(MAX_LEVELS):
        dotgit = os.path.join(here, ".git")
        info = _lstat(dotgit)
        if info is not None:
            if not stat.S_ISDIR(info.st_mode):
                effects.append(_folder(f"{dotgit} is not a folder: the repository lives elsewhere"))
                return [*found(here), *effects]
            effects.extend(_git_directory_effects(dotgit, here))
            if _is_git_directory(dotgit):
                return [*found(here), *effects]
        if _is_git_directory(here):
            effects.extend(_git_directory_effects(here, None))
            return [*found(here), *effects]
        parent = os.path.dirname(here)
        if parent == here:
            return effects  # no repository: git refuses, nothing of a folder runs
        here = parent
    return [*effects, _folder(f"{cwd} is more than {MAX_LEVELS} folders deep")]
