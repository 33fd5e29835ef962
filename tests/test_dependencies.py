"""Every library the code imports is declared in pyproject.toml, and the lowest-versions CI pass
pins exactly the declared lower bounds.

The package's imports must come from `[project] dependencies` or a non-test extra (`data`: the
user's libraries a kernel tool touches only when the user's code loaded them); the tests' imports
may also come from the `test` extra. A name counts as declared when the installed distribution
that provides the imported module is one of those requirements (so `google.genai` is
google-genai, `yaml` is PyYAML, `IPython` is ipython). scripts/lower_bounds.py turns the lower
bounds into the constraints file of the lowest pass (scripts/test.sh); see README "Compatibility".
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
TEST_EXTRA = "test"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return _canonical(match.group(1))


def _declared(*, with_test: bool) -> set[str]:
    project = PYPROJECT["project"]
    names = {_requirement_name(r) for r in project["dependencies"]}
    for extra, requirements in project["optional-dependencies"].items():
        if extra != TEST_EXTRA or with_test:
            names |= {_requirement_name(r) for r in requirements}
    return names


def _imports(root: Path) -> dict[str, set[str]]:
    """Absolute imports of modules outside the standard library → the files importing them."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                # `from google import genai`: the name may be the module (below a namespace package)
                modules = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("penguin_jupyter", "tests"):
                    found.setdefault(module, set()).add(str(path.relative_to(root)))
    return found


def _provider(module: str) -> tuple[str, str | None]:
    """The importable part of `module` (`google.genai` below the `google` namespace package, else
    its top-level name) and the distribution that installed it (None: not installed)."""
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = importlib.util.find_spec(name)
        if spec is None:
            return name, None
        if spec.origin and spec.origin not in ("namespace", "built-in", "frozen"):
            return name, _owner(parts[0], Path(spec.origin).resolve())
    return module, None


@cache
def _top_level_owners() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _owner(top: str, origin: Path) -> str | None:
    for name in dict.fromkeys(_top_level_owners().get(top, [])):
        dist = importlib.metadata.distribution(name)
        files = (file for file in dist.files or () if file.name == origin.name)
        if any(Path(str(dist.locate_file(file))).resolve() == origin for file in files):
            return _canonical(dist.metadata["Name"])
    return None


def _undeclared(root: Path, declared: set[str]) -> list[str]:
    problems: dict[str, str] = {}
    for module, files in sorted(_imports(root).items()):
        name, dist = _provider(module)
        where = sorted(files)[0]
        if dist is None:
            problems.setdefault(name, f"{name}: not installed, so no declared distribution provides it ({where})")
        elif dist not in declared:
            problems.setdefault(name, f"{name} comes from {dist}, which pyproject.toml does not declare ({where})")
    return list(problems.values())


def test_every_library_the_package_imports_is_declared():
    assert _undeclared(REPO_ROOT / "penguin_jupyter", _declared(with_test=False)) == []


def test_every_library_the_tests_import_is_declared():
    assert _undeclared(REPO_ROOT / "tests", _declared(with_test=True)) == []


def test_an_undeclared_import_is_caught(tmp_path):
    # psutil is a test tool, not a dependency of the package; numpy comes with the `data` extra
    (tmp_path / "tool.py").write_text("import numpy\nfrom psutil import Process\n")
    assert _undeclared(tmp_path, _declared(with_test=False)) == [
        "psutil comes from psutil, which pyproject.toml does not declare (tool.py)"
    ]
    assert _undeclared(tmp_path, _declared(with_test=True)) == []


def test_the_lowest_pass_pins_every_declared_library_at_its_lower_bound(tmp_path):
    import importlib.util as util

    spec = util.spec_from_file_location("lower_bounds", REPO_ROOT / "scripts" / "lower_bounds.py")
    assert spec is not None and spec.loader is not None
    lower_bounds = util.module_from_spec(spec)
    spec.loader.exec_module(lower_bounds)
    project = PYPROJECT["project"]
    pinned = lower_bounds.constraints(["data"])
    wanted = [*project["dependencies"], *project["optional-dependencies"]["data"]]
    assert sorted(_requirement_name(pin) for pin in pinned) == sorted(_requirement_name(r) for r in wanted)
    assert "ipykernel==7.4" in pinned and "dask==2024.1" in pinned  # `>=X` → `==X`, extras dropped
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["numpy<3"]\n')
    with pytest.raises(ValueError, match="needs exactly one '>=' lower bound"):
        lower_bounds.constraints([], tmp_path / "pyproject.toml")
