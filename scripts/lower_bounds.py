"""Print the constraints of CI's lowest-versions pass: `name==lower bound` for every requirement of
pyproject.toml's `[project] dependencies` and of the extras named on the command line.

scripts/test.sh installs the test extra under these constraints in a second venv (`.venv-lowest`)
and runs the fast tests there, so every lower bound the package declares is one CI tests. A
requirement without a `>=` bound is an error (stdlib only: runs before any venv exists).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*?)\s*(?:;.*)?$")


def lower_bound(requirement: str) -> str:
    """`name==X` for a requirement `name[extras]>=X,...`; ValueError when it has no lower bound."""
    match = REQUIREMENT.match(requirement)
    if match is None:
        raise ValueError(f"cannot read the requirement {requirement!r}")
    name, spec = match.groups()
    bounds = [part.strip()[2:].strip() for part in spec.split(",") if part.strip().startswith(">=")]
    if len(bounds) != 1:
        raise ValueError(f"{requirement!r} needs exactly one '>=' lower bound (the version CI's lowest pass tests)")
    return f"{name}=={bounds[0]}"


def constraints(extras: list[str], pyproject: Path = PYPROJECT) -> list[str]:
    project = tomllib.loads(pyproject.read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    own = project["name"]
    return [lower_bound(r) for r in requirements if not re.match(rf"\s*{re.escape(own)}\b", r)]


def main(argv: list[str]) -> int:
    try:
        print("\n".join(constraints(argv)))
    except (ValueError, KeyError) as exc:
        print(f"lower_bounds.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
