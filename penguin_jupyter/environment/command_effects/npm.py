"""Option tables of npm's reading subcommands: ls (list), outdated, view (docs/security.md "What a
rule covers").

Checked against `npm <sub> --help` of npm 9–11. npm takes any of its configuration keys as an
option (`--registry=…`, `--userconfig=…`, `--script-shell=…`) and accepts abbreviations, so only
the names below are known. `npm outdated` and `npm view` ask the package registry by nature (a
rule naming them covers that, an offer never does). npm also reads the project's `.npmrc`,
which can name the registry, send credentials from environment variables to it and set the
programs npm runs: a folder with an `.npmrc` (other than your own `~/.npmrc`) is configuration
the folder controls.
"""

from __future__ import annotations

import os

from .effects import Effect, EffectKind
from .tables import Command, Program, flag, value

MAX_LEVELS = 64


def npmrc_effects(cwd: str) -> list[Effect]:
    """An `.npmrc` in the working directory or a folder above it, other than the user's."""
    own = os.path.realpath(os.path.expanduser("~/.npmrc"))
    here = os.path.realpath(cwd)
    for _ in range(MAX_LEVELS):
        found = os.path.join(here, ".npmrc")
        if os.path.lexists(found) and os.path.realpath(found) != own:
            return [Effect("folder", None, f"{found} (an npm configuration: registry, credentials, programs)")]
        parent = os.path.dirname(here)
        if parent == here:
            return []
        here = parent
    return [Effect("folder", None, f"{cwd} is more than {MAX_LEVELS} folders deep")]


_COMMON = (flag("--json"), flag("-l", "--long"), flag("-p", "--parseable"), flag("-g", "--global"),
           value("-w", "--workspace"), flag("--workspaces"), flag("--include-workspace-root"), flag("-h", "--help"))
_REGISTRY: tuple[tuple[EffectKind, str], ...] = (("network", "the package registry"),)

LS = Command(
    options=(*_COMMON, flag("-a", "--all"), value("--depth"), value("--omit"), value("--include"), flag("--link"),
             flag("--package-lock-only"), flag("--unicode"), flag("--no-unicode"), flag("--install-links")),
    operands="plain",
    folder_check=npmrc_effects,
    summary="operands: package specs",
)
OUTDATED = Command(
    options=(*_COMMON, flag("-a", "--all"), value("--before")),
    operands="plain",
    inherent=_REGISTRY,
    folder_check=npmrc_effects,
    summary="operands: package specs; asks the registry",
)
VIEW = Command(
    options=_COMMON,
    operands="plain",
    inherent=_REGISTRY,
    folder_check=npmrc_effects,
    summary="operands: a package spec and fields; asks the registry",
)

NPM = Program(
    name="npm",
    subcommands={"ls": LS, "list": LS, "outdated": OUTDATED, "view": VIEW, "info": VIEW, "show": VIEW},
    about="a folder's .npmrc is configuration the folder controls",
)
