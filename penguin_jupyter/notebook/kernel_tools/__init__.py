"""Kernel-aware tools for data work (docs/notebook.md "Kernel tools"): `run_python`, `inspect_variables`,
`propose_cell`, and the notebook note for the system prompt (`notebook_prompt.notebook_prompt`).

Owns the tools that see the notebook's namespace. Each is declared like every tool and
registered with the session as a `ToolRegistration` (`kernel_tools`, in `extra_tools`), so the
Environment builds it, declares it and closes out its calls (timeouts, truncation, framing)
exactly as the builtin tools'. Rendering is left to the widgets.

The names below load on first use (PEP 562): `%load_ext` imports light modules of this package
(`cell_interrupts`, `notebook_file`) and must not pay for the tools and the core they pull in
(~0.2 s); the pre-warm thread imports them in the background instead. A name loaded this way
must not be a submodule's name too: importing the submodule would rebind the package attribute
to the module (why `notebook_prompt` is imported from its module).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ...environment.registry import ToolRegistration
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


def kernel_tools(shell: KernelShell, python_timeout_ms: Callable[[], int] | None = None) -> list[ToolRegistration]:
    """The three kernel tools' registrations, bound to an IPython shell (its `user_ns` and
    `set_next_input`); `python_timeout_ms` gives run_python's current timeout (default: its
    definition's 120 s)."""
    from ...environment.registry import ToolRegistration
    from ...environment.types import BuiltinTool
    from .inspect_variables import InspectVariablesTool
    from .propose_cell import ProposeCellTool
    from .run_python import RunPythonTool

    # (a DeclaredTool's `definition` is set from its declaration when its class is made: the
    # BuiltinTool protocol holds, though a type checker cannot see it)
    return [
        ToolRegistration(RunPythonTool.declaration, lambda _d, _s: cast(BuiltinTool, RunPythonTool(shell, python_timeout_ms))),
        ToolRegistration(InspectVariablesTool.declaration, lambda _d, _s: cast(BuiltinTool, InspectVariablesTool(shell))),
        ToolRegistration(ProposeCellTool.declaration, lambda _d, _s: cast(BuiltinTool, ProposeCellTool(shell))),
    ]


__all__ = [
    "InspectVariablesTool",
    "ProposeCellTool",
    "RunPythonTool",
    "expand_variables",
    "kernel_tools",
]
