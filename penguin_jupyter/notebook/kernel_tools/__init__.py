"""Kernel-aware tools for data work (docs/notebook.md "Kernel tools"): `run_python`, `inspect_variables`,
`propose_cell`, and the notebook note for the system prompt.

Owns the tools that see the notebook's namespace. They are ordinary BuiltinTools handed to
the session as `extra_tools`, so the Environment's close-out (timeouts, truncation,
framing) applies to them exactly as to the builtin tools. Rendering is left to the widgets.
"""

from collections.abc import Callable

from .expand import expand_variables
from .inspect_variables import InspectVariablesTool
from .notebook_prompt import notebook_prompt
from .propose_cell import ProposeCellTool
from .run_python import RunPythonTool


def kernel_tools(shell, python_timeout_ms: Callable[[], int] | None = None) -> list:
    """The three kernel tools bound to an IPython shell (its `user_ns` and `set_next_input`);
    `python_timeout_ms` gives run_python's current timeout (default: its definition's 120 s)."""
    return [
        RunPythonTool(shell, python_timeout_ms),
        InspectVariablesTool(shell),
        ProposeCellTool(shell),
    ]


__all__ = [
    "InspectVariablesTool",
    "ProposeCellTool",
    "RunPythonTool",
    "expand_variables",
    "kernel_tools",
    "notebook_prompt",
]
