"""The notebook layer: `%%penguin` / `%penguin`, live widgets, approval buttons, interrupt.

Owns everything that knows about IPython, ipykernel and ipywidgets. Entry points (imported
lazily so `import penguin_jupyter.notebook` stays cheap): `load_ipython_extension` /
`unload_ipython_extension` (extension.py), `run_cell(line, body)` (runtime/runner.py, what a
`%%penguin` cell awaits), `run_line(line)` (runtime/line_commands.py), `start_demo_model()`
(demo.py). By role: the cell runtime in `runtime/`, the live view in `live/`, the static
transcript in `transcript/`, the link to the notebook frontend in `link/`, the kernel-aware
tools in `kernel_tools/`.
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "load_ipython_extension": "extension",
    "unload_ipython_extension": "extension",
    "run_cell": "runtime.runner",
    "run_line": "runtime.line_commands",
    "start_demo_model": "demo",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'penguin_jupyter.notebook' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
