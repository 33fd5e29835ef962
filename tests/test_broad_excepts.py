"""A broad `except` (Exception, BaseException, bare) that does not raise again is a boundary:
the place where a failure of something the package does not control — the model side, a tool, the
user's code or objects, a callback, a library in any state — stops and becomes an outcome, a line
or a log entry. Each one says on its `except` line why it stops there; one without a reason fails
this test (a new broad catch must be a decision, not a habit). Handlers that clean up and raise
again are not boundaries and need nothing. Figures: `python benchmarks/count_structure.py`."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO_ROOT

BROAD = {"Exception", "BaseException"}


def _broad(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(isinstance(name, ast.Name) and name.id in BROAD for name in names)


def _raises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(node, ast.Raise) for stmt in handler.body for node in ast.walk(stmt))


def boundaries_without_a_reason(root: Path = REPO_ROOT) -> list[str]:
    missing = []
    for path in sorted((root / "penguin_jupyter").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            swallows = isinstance(node, ast.ExceptHandler) and _broad(node) and not _raises(node)
            if swallows and "#" not in lines[node.lineno - 1]:
                missing.append(f"{path.relative_to(root)}:{node.lineno}")
    return missing


def test_every_broad_except_that_swallows_says_why_on_its_line() -> None:
    assert boundaries_without_a_reason() == []


def test_the_check_sees_a_swallowing_handler_and_lets_a_re_raising_one_be(tmp_path: Path) -> None:
    package = tmp_path / "penguin_jupyter"
    package.mkdir()
    (package / "a.py").write_text(
        "try:\n    x = 1\nexcept Exception:\n    pass\n"
        "try:\n    x = 2\nexcept BaseException:\n    x = 3\n    raise\n"
        "try:\n    x = 4\nexcept (ValueError, Exception):  # a reason\n    pass\n"
    )
    assert boundaries_without_a_reason(tmp_path) == ["penguin_jupyter/a.py:3"]
