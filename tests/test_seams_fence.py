"""The fence around other libraries' internals (docs/seams.md): outside `penguin_jupyter/seams/`,
no module imports a private module or name of another package, reads or writes a private
attribute of one (directly, or by name through getattr / setattr / hasattr / delattr / `__dict__`
/ `vars()`), or assigns an attribute on another package's module or class.

Private: a name with one leading underscore (dunders are the language's; IPython's `_repr_*_`
display protocol is public). Penguin's own marker attributes on foreign objects start `_penguin`. Measured on 3758335 with the same scan: 9 modules
besides llm/sdk_internals.py, which claimed them all (llm/provider.py, environment/mcp/connection.py,
notebook/runtime/task_sink.py, notebook/runtime/approval.py, notebook/runtime/prewarm.py,
notebook/kernel_tools/output_router.py, notebook/kernel_tools/summary_polars.py,
notebook/kernel_tools/distributed_work.py, notebook/kernel_tools/python_runner.py); now 0."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import penguin_jupyter

PACKAGE = Path(penguin_jupyter.__file__).parent
FENCED = ("seams", "testing")  # the seams; the scripted server is this project's own test double
BY_NAME = ("getattr", "setattr", "hasattr", "delattr")


# IPython's rich display protocol (`_repr_html_`, …) and `os._exit` are public despite their underscore.
_PUBLIC = re.compile(r"^_repr_\w+_$|^_penguin|^_exit$")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and not _PUBLIC.match(name)


def _foreign_module(module: str | None, level: int) -> bool:
    return level == 0 and bool(module) and not str(module).startswith("penguin_jupyter")


def _foreign_names(tree: ast.AST) -> set[str]:
    """Names a module binds to another package's modules or objects by importing them."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if _foreign_module(a.name, 0))
        elif isinstance(node, ast.ImportFrom) and _foreign_module(node.module, node.level):
            names.update(a.asname or a.name for a in node.names)
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _scan(path: Path, package: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    foreign = _foreign_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(package)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            level = 0 if isinstance(node, ast.Import) else node.level
            for module in modules:
                if _foreign_module(module, level) and any(_private(part) for part in module.split(".")):
                    found.append(f"{where}: imports the private module {module}")
            if isinstance(node, ast.ImportFrom) and _foreign_module(node.module, node.level):
                found.extend(f"{where}: imports the private {a.name} of {node.module}" for a in node.names if _private(a.name))
        elif isinstance(node, ast.Attribute) and _private(node.attr) and _root(node.value) in foreign:
            found.append(f"{where}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BY_NAME:
            name = node.args[1] if len(node.args) > 1 else None
            target = node.args[0] if node.args else None
            own = isinstance(target, ast.Name) and target.id in ("self", "cls")
            if isinstance(name, ast.Constant) and isinstance(name.value, str) and _private(name.value) and not own:
                found.append(f"{where}: {ast.unparse(node)}")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
            of_dict = (isinstance(node.value, ast.Attribute) and node.value.attr == "__dict__") or (
                isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id == "vars"
            )
            if of_dict and isinstance(key, str) and _private(key):
                found.append(f"{where}: {ast.unparse(node)}")
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and _root(target) in foreign:
                    found.append(f"{where}: assigns {ast.unparse(target)}")
    return found


def fence_violations(package: Path = PACKAGE) -> list[str]:
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).parts
        if parts[0] in FENCED:
            continue
        found.extend(_scan(path, package))
    return found


def test_no_internal_of_another_library_is_used_outside_the_seams() -> None:
    assert fence_violations() == []


def test_the_scan_sees_each_kind_of_use(tmp_path: Path) -> None:
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "bad.py").write_text(
        "import threading\n"
        "from mcp.shared._httpx_utils import create_mcp_http_client\n"
        "from openai import _models\n"
        "foreign = isinstance(threading.current_thread(), threading._DummyThread)\n"
        "threading.Thread.start = None\n"
        "getattr(kernel, '_allow_stdin', False)\n"
        "del inner.__dict__['_prepare_options']\n"
        "getattr(shell, '_penguin_runtime', None)\n"
        "getattr(self, '_own', None)\n"
    )
    assert sorted(line.split(": ", 1)[1] for line in fence_violations(tmp_path)) == sorted([
        "imports the private module mcp.shared._httpx_utils",
        "imports the private _models of openai",
        "threading._DummyThread",
        "assigns threading.Thread.start",
        "getattr(kernel, '_allow_stdin', False)",
        "inner.__dict__['_prepare_options']",
    ])
