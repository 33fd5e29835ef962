"""Kernel-aware tools for data work (docs/notebook.md "Kernel tools"): `run_python`, `inspect_variables`,
`propose_cell`, the notebook tools, and the notebook note for the system prompt.

Owns the tools that see the notebook's namespace. Each is declared like every tool and
registered with the session as a `ToolRegistration` (`kernel_tools`, in `extra_tools`), so the
Environment builds it, declares it and closes out its calls (timeouts, truncation, framing)
exactly as the builtin tools'. `session_tools` is what a session started in a kernel gets from
it: these registrations, the notebook tools' (notebook_cells.py) and the prompt notes.
Rendering is left to the widgets.

The names below load on first use (PEP 562): importing one light module of this package must
not pay for the tools and the core they pull in (~0.2 s); the pre-warm thread imports them in
the background instead. A name loaded this way must not be a submodule's name too: importing
the submodule would rebind the package attribute to the module (why `notebook_prompt` is
imported from its module).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from ...environment.registry import ToolRegistration
    from ..kernel_shapes import KernelShell
    from .inspect_variables import InspectVariablesTool
    from .propose_cell import ProposeCellTool
    from .run_python import RunPythonTool

_LAZY = {
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


class SessionTools(TypedDict, total=False):
    """What a session started in a kernel gets from it (keyword arguments of `Agent.create_session`
    and `resume_session`)."""

    extra_tools: list[ToolRegistration]
    system_prompt_extra: str


async def session_tools(shell: KernelShell | None, python_timeout_ms: Callable[[], int] | None = None) -> SessionTools:
    """The kernel and notebook tools' registrations and the notebook note for the system prompt,
    for a session started in this kernel (nothing outside one). The notebook tools offered depend
    on the frontend's hello, waited for first (it may still be on its way when Run All sends a
    cell right after `%load_ext`)."""
    if shell is None:
        return {}
    from ..link.notebook_link import link_of
    from .notebook_cells import notebook_tools, notebook_tools_prompt
    from .notebook_prompt import notebook_prompt

    link = link_of(shell)
    if link is not None:
        await link.wait_for_frontend()
    notes = (notebook_prompt(shell.user_ns), notebook_tools_prompt(link))
    return {
        "extra_tools": [*kernel_tools(shell, python_timeout_ms), *notebook_tools(link)],
        "system_prompt_extra": "\n\n".join(note for note in notes if note),
    }


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
    "SessionTools",
    "kernel_tools",
    "session_tools",
]
