"""Imports flow one way (omni <- interfaces <- engine/llm/environment/trace <- session/agent <-
notebook): every import between the package's parts, including function-level and
TYPE_CHECKING ones, is checked against the allowed table, so a new cycle (like the old
agent <-> subagent_runner one) fails here. Inside the parts too: no two modules import each
other, directly or around a circle, and no two sibling folders do (notebook/link <->
notebook/kernel_tools was one) — again counting every import, TYPE_CHECKING ones included (a
type-only circle is still two modules that cannot be read apart; a Protocol breaks it). Nothing outside notebook/ imports IPython, ipywidgets
or ipykernel, but the kernel's seams (`seams/kernel.py`, docs/seams.md), which only notebook/ may
import. `seams/` is a leaf: it imports nothing of the package but itself."""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import penguin_jupyter

PACKAGE = Path(penguin_jupyter.__file__).parent
# Leaf modules that import nothing of the package: any layer above the protocol may use them.
_LEAVES = {"redaction", "private_files", "regular_files", "prices", "seams", "process_start"}
_CORE = {"omni", "interfaces", "engine", "llm", "environment", "trace", "state"} | _LEAVES
# part -> the other parts it may import
ALLOWED: dict[str, set[str]] = {
    "omni": set(),
    "redaction": set(),
    "private_files": set(),
    "process_start": set(),
    "regular_files": set(),
    "prices": set(),
    "seams": set(),
    "interfaces": {"omni"},
    "engine": {"omni", "interfaces"} | _LEAVES,
    "llm": {"omni", "interfaces"} | _LEAVES,
    "environment": {"omni", "interfaces"} | _LEAVES,
    "trace": {"omni", "interfaces"} | _LEAVES,
    "state": {"omni", "interfaces", "environment"} | _LEAVES,
    "testing": {"omni", "interfaces"},
    "session_images": {"omni", "interfaces"} | _LEAVES,
    "spending": {"llm", "state"} | _LEAVES,
    "session": _CORE | {"session_images", "spending"},
    "subagent_runner": {"omni", "interfaces", "session", "spending"},
    "agent": _CORE | {"session", "subagent_runner", "spending"},
    "notebook": _CORE | {"session", "agent", "subagent_runner", "testing", "session_images", "spending"},
    "kernel_sandbox": {"omni", "interfaces", "environment", "state"} | _LEAVES,
    "__init__": {"session", "agent", "notebook"},
}
UI_PACKAGES = ("IPython", "ipywidgets", "ipykernel")
# Modules outside notebook/ that may touch the UI packages, and that only notebook/ may import.
KERNEL_SEAMS = {"penguin_jupyter.seams.kernel"}


def _part(module: str) -> str:
    """`penguin_jupyter.engine.turn` -> `engine`; the package's own __init__ -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[str]:
    """Absolute names of every module `path` imports (relative imports resolved)."""
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    package_parts = list(relative.parts)[:-1]  # a module's package; an __init__'s own package
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)]
                names.append(".".join([*base, *([node.module] if node.module else [])]))
            else:
                names.append(node.module or "")
    return names


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _violations() -> list[str]:
    found: list[str] = []
    for path in _sources():
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(relative.parts)
        here = _part(module)
        for name in _imports(path):
            if not name.startswith("penguin_jupyter"):
                if here != "notebook" and module not in KERNEL_SEAMS and name.split(".")[0] in UI_PACKAGES:
                    found.append(f"{relative}: imports {name} outside notebook/")
                continue
            if name in KERNEL_SEAMS and here not in ("notebook", "seams"):
                found.append(f"{relative}: imports {name} (the kernel's seams) outside notebook/")
            there = _part(name)
            if there != here and there not in ALLOWED[here]:
                found.append(f"{relative}: {here} imports {there} ({name})")
    return found


def test_every_part_is_in_the_table():
    parts = {_part(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)) for p in _sources()}
    assert parts <= set(ALLOWED), sorted(parts - set(ALLOWED))


def test_imports_flow_one_way():
    assert _violations() == []


def test_subagent_runner_does_not_know_agent():
    names = _imports(PACKAGE / "subagent_runner.py")
    assert not [n for n in names if n == "penguin_jupyter.agent" or n.startswith("penguin_jupyter.agent.")]


def test_the_checker_sees_a_back_import(tmp_path, monkeypatch):
    """The table check fails on a lower part importing a higher one (the test can fail)."""
    fake = tmp_path / "penguin_jupyter"
    (fake / "engine").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "engine" / "__init__.py").write_text("")
    (fake / "engine" / "loop.py").write_text(
        "from ..agent import Agent\nimport ipywidgets\nfrom ..seams.kernel import SESSION_SEND\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert _violations() == [
        "penguin_jupyter/engine/loop: engine imports agent (penguin_jupyter.agent)",
        "penguin_jupyter/engine/loop: imports ipywidgets outside notebook/",
        "penguin_jupyter/engine/loop: imports penguin_jupyter.seams.kernel (the kernel's seams) outside notebook/",
    ]


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_no_part_allows_itself_a_cycle(part):
    """The table itself is acyclic: no part is reachable from the parts it may import."""
    seen: set[str] = set()
    todo = list(ALLOWED[part])
    while todo:
        other = todo.pop()
        if other in seen:
            continue
        seen.add(other)
        todo.extend(ALLOWED.get(other, set()))
    assert part not in seen


# --- no import circles between modules, nor between sibling folders -----------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _folder(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).parts[:-1])


def _module_graph() -> tuple[dict[str, set[str]], dict[str, Path]]:
    """module -> the package's modules it imports (`from pkg import sub` counts as `pkg.sub`;
    a package's `__init__` only when it is named itself); every import, wherever it stands."""
    paths = {_module_name(path): path for path in _sources()}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join([*parts[: len(parts) - (node.level - 1)], *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            graph[name].update(target for target in targets if target in paths and target != name)
    return graph, paths


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _sibling_folder_graph() -> dict[str, set[str]]:
    """folder -> the sibling folders (same parent) its modules, or its subfolders', import."""
    graph, paths = _module_graph()
    folders: dict[str, set[str]] = defaultdict(set)
    for name, targets in graph.items():
        here = _folder(paths[name]).split(".")
        for target in targets:
            there = _folder(paths[target]).split(".")
            common = next((i for i, (a, b) in enumerate(zip(here, there, strict=False)) if a != b), None)
            if common is not None:
                folders[".".join(here[: common + 1])].add(".".join(there[: common + 1]))
    return folders


def test_no_import_circle_between_modules():
    assert _circles(_module_graph()[0]) == []


def test_no_import_circle_between_sibling_folders():
    assert _circles(_sibling_folder_graph()) == []


def test_the_circle_checks_see_a_circle(tmp_path, monkeypatch):
    """A type-only circle between two modules, and two folders importing each other through a
    function-level import, are found (the checks can fail)."""
    fake = tmp_path / "penguin_jupyter"
    for folder in ("notebook", "notebook/link", "notebook/kernel_tools"):
        (fake / folder).mkdir(parents=True)
        (fake / folder / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "notebook/link/a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n")
    (fake / "notebook/link/b.py").write_text("from .a import thing\nfrom ..kernel_tools import c\n")
    (fake / "notebook/kernel_tools/c.py").write_text("def f():\n    from ..link.a import x\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert _circles(_module_graph()[0]) == [
        ["penguin_jupyter.notebook.kernel_tools.c", "penguin_jupyter.notebook.link.a", "penguin_jupyter.notebook.link.b"]
    ]
    assert _circles(_sibling_folder_graph()) == [
        ["penguin_jupyter.notebook.kernel_tools", "penguin_jupyter.notebook.link"]
    ]
