"""Counts what issue 37 "the notebook package shows its parts" measures, for the checkout at ROOT
(default: this repository), from the source alone (no import, so any older commit works):

* the notebook package's folders and their module counts;
* import circles between the package's modules (every import: module-level, in a function, under
  TYPE_CHECKING), each strongly connected component listed, and again without the TYPE_CHECKING
  ones; circles between sibling folders (e.g. notebook/link <-> notebook/kernel_tools);
* per subpackage, per 1,000 non-blank lines: the name `Any` in annotations (arguments, returns,
  annotated assignments) and in every other use (casts, aliases); `getattr(x, name, default)`;
  broad excepts (`except Exception`/`BaseException`/bare), and how many of them say on their line
  which "never throw into the engine" boundary they are (a `#` comment); `assert` statements.

Before (7cc9d5f, main when the moves began):
  git -C . archive 7cc9d5f penguin_jupyter | tar -x -C /tmp/before && python benchmarks/count_structure.py /tmp/before
"""

from __future__ import annotations

import argparse
import ast
import io
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "penguin_jupyter"
SUBPACKAGES = ("omni", "engine", "llm", "environment", "trace", "state", "notebook", "testing", "seams")


@dataclass
class Module:
    name: str
    path: Path
    imports: list[tuple[str, bool]] = field(default_factory=list)  # (module, under TYPE_CHECKING)


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: Module, known: set[str]) -> None:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]

    def resolve(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        return ".".join([*base, *([node.module] if node.module else [])])

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, guarded)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE):
                    module.imports.append((alias.name, guarded))
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node)
            if base.startswith(PACKAGE):
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    module.imports.append((sub if sub in known else base, guarded))
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)


def load(root: Path) -> dict[str, Module]:
    paths = sorted((root / PACKAGE).rglob("*.py"))
    modules = {_module_name(root, p): Module(_module_name(root, p), p) for p in paths}
    for module in modules.values():
        _imports(module, set(modules))
    return modules


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node (or a node importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def connect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


def module_graph(modules: dict[str, Module], with_type_checking: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module in modules.values():
        for target, guarded in module.imports:
            if target in modules and target != module.name and (with_type_checking or not guarded):
                graph[module.name].add(target)
    return graph


def folder_of(module: Module) -> str:
    return module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]


def sibling_folder_graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Edges between folders with the same parent, each import lifted to the two sibling
    folders that hold its ends (a folder's subfolders count as the folder)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module in modules.values():
        here = folder_of(module).split(".")
        for target, _guarded in module.imports:
            if target not in modules:
                continue
            there = folder_of(modules[target]).split(".")
            common = 0
            while common < min(len(here), len(there)) and here[common] == there[common]:
                common += 1
            if common < len(here) and common < len(there):
                graph[".".join(here[: common + 1])].add(".".join(there[: common + 1]))
    return graph


def _broad(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        kind is None or (isinstance(kind, ast.Name) and kind.id in ("Exception", "BaseException")) for kind in kinds
    )


def _comment_lines(text: str) -> set[int]:
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            lines.add(token.start[0])
    return lines


def _anys(node: ast.AST | None) -> int:
    if node is None:
        return 0
    return sum(
        1
        for n in ast.walk(node)
        if (isinstance(n, ast.Name) and n.id == "Any") or (isinstance(n, ast.Attribute) and n.attr == "Any")
    )


@dataclass
class Figures:
    lines: int = 0
    any_annotations: int = 0
    any_all: int = 0
    getattr_default: int = 0
    broad: int = 0
    broad_commented: int = 0
    asserts: int = 0


def figures(path: Path) -> Figures:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    comments = _comment_lines(text)
    out = Figures(lines=sum(1 for line in text.splitlines() if line.strip()), any_all=_anys(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            out.any_annotations += _anys(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.any_annotations += _anys(node.returns)
        elif isinstance(node, ast.AnnAssign):
            out.any_annotations += _anys(node.annotation)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
            out.getattr_default += len(node.args) == 3
        elif isinstance(node, ast.ExceptHandler) and _broad(node):
            out.broad += 1
            out.broad_commented += node.lineno in comments
        elif isinstance(node, ast.Assert):
            out.asserts += 1
    return out


def per_k(count: int, lines: int) -> str:
    return f"{count * 1000 / lines:.1f}" if lines else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parent.parent))
    root = Path(parser.parse_args().root)
    modules = load(root)

    print("## notebook/ folders (modules, __init__ included)")
    folders: dict[str, int] = defaultdict(int)
    for module in modules.values():
        if module.name.startswith(f"{PACKAGE}.notebook"):
            folders[folder_of(module).removeprefix(f"{PACKAGE}.")] += 1
    for folder, count in sorted(folders.items()):
        print(f"  {folder:32} {count}")

    print("\n## import circles between modules")
    for label, with_tc in (("every import", True), ("without TYPE_CHECKING imports", False)):
        components = strongly_connected(module_graph(modules, with_tc))
        print(f"  {label}: {len(components)} circles, {sum(map(len, components))} modules")
        for component in components:
            print("    " + " <-> ".join(name.removeprefix(f"{PACKAGE}.") for name in component))
    components = strongly_connected(sibling_folder_graph(modules))
    print(f"  between sibling folders: {len(components)}")
    for component in components:
        print("    " + " <-> ".join(name.removeprefix(f"{PACKAGE}.") for name in component))

    print("\n## per 1,000 non-blank lines")
    print(f"  {'part':14} {'lines':>6} {'Any(ann)':>9} {'Any(all)':>9} {'getattr3':>9} {'broad exc':>10} {'commented':>10} {'assert':>7}")
    totals: dict[str, Figures] = defaultdict(Figures)
    for module in modules.values():
        parts = module.name.split(".")
        part = parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else "(top level)"
        one = figures(module.path)
        for key in ("lines", "any_annotations", "any_all", "getattr_default", "broad", "broad_commented", "asserts"):
            setattr(totals[part], key, getattr(totals[part], key) + getattr(one, key))
            setattr(totals["ALL"], key, getattr(totals["ALL"], key) + getattr(one, key))
    for part in [*SUBPACKAGES, "(top level)", "ALL"]:
        f = totals[part]
        print(
            f"  {part:14} {f.lines:>6} {per_k(f.any_annotations, f.lines):>9} {per_k(f.any_all, f.lines):>9} "
            f"{per_k(f.getattr_default, f.lines):>9} {f.broad:>10} {f.broad_commented:>10} {f.asserts:>7}"
        )


if __name__ == "__main__":
    main()
