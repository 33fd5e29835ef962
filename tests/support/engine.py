"""Engine-area test helpers: real Environments (exec_command through bash) in a temp
workspace, for the scenarios that say "a real env" (1, 2, 4a, 11)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from penguin_jupyter.environment import Environment, EnvironmentConfig


@contextmanager
def real_environments() -> Iterator[Callable[[Path], Environment]]:
    """A factory of real Environments (default builtin toolset) rooted at a workspace; every
    one made is disposed on exit."""
    made: list[Environment] = []

    def make(workspace: Path) -> Environment:
        env = Environment(EnvironmentConfig(workspace_dir=str(workspace)))
        made.append(env)
        return env

    try:
        yield make
    finally:
        for env in made:
            env.dispose()
