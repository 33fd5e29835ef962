"""Simulated upstream changes: a copy of an installed package with one internal renamed.

Owns `renamed_package`: the package's files copied under a fresh directory with a word-bounded
identifier replaced in its Python sources (in every file, or in the ones named), the way an
upgrade that renames an internal would ship. Put the returned directory first on `PYTHONPATH`
(a subprocess, a kernel) to run against it; nothing installed is touched.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path


def renamed_package(
    root: Path, package: str, pattern: str, replacement: str, *, files: tuple[str, ...] = ()
) -> Path:
    """A directory holding `package` with `pattern` (a regular expression) replaced by
    `replacement` in its .py files (only `files`, relative to the package, when given)."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    source = Path(next(iter(spec.submodule_search_locations)))
    target = root / "renamed-site" / package
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    changed = 0
    for path in target.rglob("*.py"):
        if files and str(path.relative_to(target)) not in files:
            continue
        text = path.read_text(encoding="utf-8")
        renamed = re.sub(pattern, replacement, text)
        if renamed != text:
            path.write_text(renamed, encoding="utf-8")
            changed += 1
    assert changed, f"{pattern!r} not found in {package}"
    return target.parent
