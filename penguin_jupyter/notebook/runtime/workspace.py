"""Workspace resolution for a notebook cell.

Owns only the resolution order: `--workspace`; `JPY_SESSION_NAME` or `__session__`; VS Code's
`__vsc_ipynb_file__`; the notebook's folder as the page's hello or a remote kernel's
`KERNEL_WORKING_DIR` place it (link/notebook_place.py); the current directory. The first
hit wins. When a notebook was named but this kernel cannot see its folder, the current directory
comes with one line saying so (the cell shows it under its header); see docs/notebook-runtime.md
"Remote kernels".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..link.notebook_place import SETTINGS_HINT, notebook_place


def _notebook_dir(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    path = Path(value).expanduser()
    if path.suffix == ".ipynb" or path.is_file() or (not path.exists() and path.suffix):
        path = path.parent
    return str(path.resolve()) if path.is_absolute() else str((Path.cwd() / path).resolve())


def choose_workspace(
    explicit: str | None,
    user_ns: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    hello: Mapping[str, object] | None = None,
) -> tuple[str, str | None]:
    """Absolute workspace directory for this cell, and the one line saying why it is the
    kernel's current directory when a notebook was named that this kernel cannot see."""
    ns = user_ns or {}
    env = os.environ if environ is None else environ
    if explicit:
        return str(Path(explicit).expanduser().resolve()), None
    for candidate in (env.get("JPY_SESSION_NAME"), ns.get("__session__"), ns.get("__vsc_ipynb_file__")):
        found = _notebook_dir(candidate)
        if found:
            return found, None
    place = notebook_place(ns, hello, env)
    if place.directory:
        return str(Path(place.directory).resolve()), None
    cwd = str(Path.cwd().resolve())
    if place.unseen:
        return cwd, f"penguin: the workspace is the kernel's working directory {cwd}: {place.unseen}; {SETTINGS_HINT}"
    return cwd, None


def resolve_workspace(
    explicit: str | None,
    user_ns: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    hello: Mapping[str, object] | None = None,
) -> str:
    """Absolute workspace directory for this cell."""
    return choose_workspace(explicit, user_ns, environ, hello)[0]
