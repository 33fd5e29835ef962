"""penguin_jupyter: the penguin agent harness as a Jupyter kernel extension.

The top level exposes the Agent/Session API (`create_agent`) and the IPython extension hooks
(`%load_ext penguin_jupyter`). Heavy modules are imported lazily so that importing the
package stays cheap and the core never pulls in IPython.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Session",
    "__version__",
    "create_agent",
    "load_ipython_extension",
    "unload_ipython_extension",
]


def __getattr__(name: str) -> Any:
    if name in ("create_agent", "Agent"):
        from . import agent

        return getattr(agent, name)
    if name == "Session":
        from .session import Session

        return Session
    raise AttributeError(f"module 'penguin_jupyter' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    from .notebook.extension import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook.extension import unload_ipython_extension as unload

    unload(ipython)
