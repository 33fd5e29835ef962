"""Workspace resolution for a notebook cell.

Owns only the resolution order: `--workspace`; `JPY_SESSION_NAME` or `__session__`; VS Code's
`__vsc_ipynb_file__`; the current directory. The first hit wins.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def _notebook_dir(value: object) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    path = Path(value).expanduser()
    if path.suffix == ".ipynb" or path.is_file() or (not path.exists() and path.suffix):
        path = path.parent
    return str(path.resolve()) if path.is_absolute() else str((Path.cwd() / path).resolve())


def resolve_workspace(
    explicit: str | None,
    user_ns: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> str:
    """Absolute workspace directory for this cell."""
    ns = user_ns or {}
    env = os.environ if environ is None else environ
    if explicit:
        return str(Path(explicit).expanduser().resolve())
    for candidate in (env.get("JPY_SESSION_NAME"), ns.get("__session__"), ns.get("__vsc_ipynb_file__")):
        found = _notebook_dir(candidate)
        if found:
            return found
    return str(Path.cwd().resolve())
