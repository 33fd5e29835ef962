"""The demo environment's package set, for executing the example notebooks as a newcomer would.

`bash scripts/demo.sh` makes a `.venv` with `pip install -e '.[demo]'`: the package's own
dependencies and its `demo` extra, nothing from the test extra. The shared test venv holds much
more (polars, xarray, pyspark stubs, playwright…), so a notebook that imports one of those would
pass here and fail for the user. `demo_env(...)` gives an environment whose Python processes
(nbconvert and the kernel it starts) cannot import any installed distribution outside that set:
a `sitecustomize` on PYTHONPATH swaps sys.path's finder for one that does not find their
top-level modules, as if they were not installed (`importlib.util.find_spec` says None too). The set is computed from this
worktree's pyproject.toml and the installed distributions' own requirements (markers evaluated,
extras followed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from tests.support.paths import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"

_GUARD = '''\
"""Installed by tests/support/demo_env.py: modules outside the demo environment are not found."""
import importlib.machinery
import json
import os
import sys

_BLOCKED = frozenset(json.load(open(os.path.join(os.path.dirname(__file__), "blocked.json"))))


class _DemoPathFinder(importlib.machinery.PathFinder):
    """sys.path's finder, blind to the blocked distributions: as if they were not installed."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            return None
        return super().find_spec(name, path, target)


sys.meta_path[:] = [_DemoPathFinder if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
'''


# What `python -m venv` puts into every new environment (Python 3.11).
_VENV_BOOTSTRAP = frozenset({"pip", "setuptools"})


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(requirements: list[Requirement]) -> set[str]:
    """The installed distributions `requirements` pull in, transitively (canonical names)."""
    seen: set[str] = set()
    pending = [(req, frozenset[str]()) for req in requirements]
    while pending:
        req, extras = pending.pop()
        if req.marker is not None and not any(
            req.marker.evaluate({"extra": extra}) for extra in (extras or {""})
        ):
            continue
        name = _canonical(req.name)
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        seen.add(name)
        for raw in dist.requires or []:
            pending.append((Requirement(raw), frozenset(req.extras)))
    return {key for key in seen if "[" not in key}


def demo_distributions() -> set[str]:
    """Canonical names of the distributions `pip install -e '.[demo]'` installs (of those present)."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [Requirement(raw) for raw in project["dependencies"]]
    wanted += [Requirement(raw) for raw in project.get("optional-dependencies", {}).get("demo", [])]
    return _closure(wanted) | {_canonical(project["name"])} | _VENV_BOOTSTRAP


def blocked_modules() -> set[str]:
    """Top-level modules that only distributions outside the demo set provide."""
    allowed = demo_distributions()
    blocked = set()
    for module, dists in metadata.packages_distributions().items():
        if module.startswith("_") or not module.isidentifier():
            continue
        if not any(_canonical(dist) in allowed for dist in dists):
            blocked.add(module)
    return blocked


def demo_env(guard_dir: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for subprocesses limited to the demo package set (the guard lives in `guard_dir`)."""
    guard_dir.mkdir(parents=True, exist_ok=True)
    (guard_dir / "sitecustomize.py").write_text(_GUARD, encoding="utf-8")
    (guard_dir / "blocked.json").write_text(json.dumps(sorted(blocked_modules())), encoding="utf-8")
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join([str(guard_dir), str(REPO_ROOT)])
    return env


def execute_example(name: str, workdir: Path, *, timeout: float = 300) -> dict[str, Any]:
    """Execute `examples/<name>` top to bottom with nbconvert (a real kernel) in the demo package
    set, in a copy under `workdir` (with `examples/data`); the executed notebook as JSON.
    A failing cell fails here with nbconvert's error."""
    import shutil

    shutil.copy(EXAMPLES / name, workdir / name)
    shutil.copytree(EXAMPLES / "data", workdir / "data", dirs_exist_ok=True)
    out = name.replace(".ipynb", ".out.ipynb")
    jupyter = Path(sys.executable).with_name("jupyter")
    command = [str(jupyter), "nbconvert", "--to", "notebook", "--execute", name, "--output", out]
    command += ["--ExecutePreprocessor.timeout=180", "--ExecutePreprocessor.store_widget_state=False"]
    completed = subprocess.run(
        command,
        cwd=workdir,
        env=demo_env(workdir / ".demo-env-guard"),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads((workdir / out).read_text(encoding="utf-8"))
