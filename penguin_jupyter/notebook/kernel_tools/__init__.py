"""Kernel-aware tools for data work (docs/notebook.md "Kernel tools"): `run_python`, `inspect_variables`,
`propose_cell`, and the notebook note for the system prompt (`notebook_prompt.notebook_prompt`).

Owns the tools that see the notebook's namespace. They are ordinary BuiltinTools handed to
the session as `extra_tools`, so the Environment's close-out (timeouts, truncation,
framing) applies to them exactly as to the builtin tools. Rendering is left to the widgets.

The names below load on first use (PEP 562): `%load_ext` imports light modules of this package
(`cell_interrupts`, `notebook_file`) and must not pay for the tools and the core they pull in
(~0.2 s); the pre-warm thread imports them in the background instead. A name loaded this way
must not be a submodule's name too: importing the submodule would rebind the package attribute
to the module (why `notebook_prompt` is imported from its module).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...environment.tool_declaration import ToolDeclaration
    from .expand import expand_variables
    from .inspect_variables import InspectVariablesTool
    from .kernel_shell import KernelShell
    from .propose_cell import ProposeCellTool
    from .run_python import RunPythonTool

_LAZY = {
    "expand_variables": ".expand",
    "InspectVariablesTool": ".inspect_variables",
    "ProposeCellTool": ".propose_cell",
    "RunPythonTool": ".run_python",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def kernel_tools(shell: KernelShell, python_timeout_ms: Callable[[], int] | None = None) -> list[Any]:
    """The three kernel tools bound to an IPython shell (its `user_ns` and `set_next_input`);
    `python_timeout_ms` gives run_python's current timeout (default: its definition's 120 s)."""
    from .inspect_variables import InspectVariablesTool
    from .propose_cell import ProposeCellTool
    from .run_python import RunPythonTool

    return [
        RunPythonTool(shell, python_timeout_ms),
        InspectVariablesTool(shell),
        ProposeCellTool(shell),
    ]


@functools.cache
def kernel_declarations() -> dict[str, ToolDeclaration[Any]]:
    """The declarations of the kernel tools and the notebook tools, by name (what the approval
    policy reads of a tool it did not get from the Environment's builtin set)."""
    from .inspect_variables import DECLARATION as INSPECT_VARIABLES
    from .notebook_cells import DELETE_CELL, EDIT_CELL, INSERT_CELL, READ_NOTEBOOK, RUN_CELL
    from .propose_cell import DECLARATION as PROPOSE_CELL
    from .run_python import DECLARATION as RUN_PYTHON

    declarations = (RUN_PYTHON, INSPECT_VARIABLES, PROPOSE_CELL, READ_NOTEBOOK, INSERT_CELL, EDIT_CELL, RUN_CELL, DELETE_CELL)
    return {declaration.name: declaration for declaration in declarations}


__all__ = [
    "InspectVariablesTool",
    "ProposeCellTool",
    "RunPythonTool",
    "expand_variables",
    "kernel_declarations",
    "kernel_tools",
]
