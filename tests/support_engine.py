"""Engine-area test helpers: the real Environment (exec_command through bash) in a temp
workspace, for the scenarios that say "a real env" (1, 2, 4a, 11)."""

from __future__ import annotations

from pathlib import Path

from penguin_jupyter.environment import Environment, EnvironmentConfig


def real_env(workspace: Path) -> Environment:
    """The real Environment with the default builtin toolset, rooted at `workspace`."""
    return Environment(EnvironmentConfig(workspace_dir=str(workspace)))
