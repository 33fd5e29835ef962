"""Where this kernel's notebook is, as the kernel's own file system sees it.

Owns the order in which the kernel learns its notebook's file and folder, and the one line that
says why it could not: the host's name for it (`JPY_SESSION_NAME`, `__session__`, VS Code's
`__vsc_ipynb_file__` — a local jupyter_server or VS Code); else the page's hello (the notebook's
path relative to the server's root) resolved against `PENGUIN_NOTEBOOK_ROOT` /
`KERNEL_PENGUIN_NOTEBOOK_ROOT` (where this kernel sees the server's root), then against the
hello's `server_root`; else `KERNEL_WORKING_DIR` (the notebook's folder, which jupyter_server's
gateway client sends with every remote kernel start). A candidate counts only when the kernel can
see it. The workspace rule built on this is runtime/workspace.py's; the saved-file reads are
notebook_file.py's; the hello itself is frontend_bridge.py's (read here through
`page_hello`, the one integration point). See docs/notebook-runtime.md "Remote kernels".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .notebook_file import notebook_file_path

NOTEBOOK_ROOT_VARS = ("PENGUIN_NOTEBOOK_ROOT", "KERNEL_PENGUIN_NOTEBOOK_ROOT")
WORKING_DIR_VAR = "KERNEL_WORKING_DIR"
PAGE_HELLO_WAIT_S = 3.0
SETTINGS_HINT = (
    "set KERNEL_PENGUIN_NOTEBOOK_ROOT to where this kernel sees the server's root, or pass --workspace "
    '(docs/deploying.md "Remote kernels and gateways")'
)


@dataclass(frozen=True)
class NotebookPlace:
    """The notebook's file and folder as this kernel sees them (None: not known or not visible)."""

    notebook: str | None = None
    directory: str | None = None
    found_by: str = ""  # "host" | "page" | "gateway" | "" (not found)
    unseen: str | None = None  # why a notebook someone named is not visible here (one line)


def notebook_place(
    user_ns: Mapping[str, object] | None = None,
    hello: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
) -> NotebookPlace:
    """Where the notebook is: the host's name, else the page's hello, else `KERNEL_WORKING_DIR`."""
    env = os.environ if environ is None else environ
    named = notebook_file_path(user_ns, env)
    if named:
        return NotebookPlace(named, str(Path(named).parent), "host")
    relative = _page_path(hello)
    tried: list[str] = []
    for root in _roots(hello, env):
        candidate = _under(root, relative) if relative else None
        if candidate is None:
            continue
        if os.path.isfile(candidate):
            return NotebookPlace(candidate, str(Path(candidate).parent), "page")
        tried.append(candidate)
    working = env.get(WORKING_DIR_VAR, "").strip()
    if working and os.path.isdir(working):
        folder = str(Path(working).resolve())
        guess = os.path.join(folder, PurePosixPath(relative).name) if relative else None
        return NotebookPlace(guess if guess and os.path.isfile(guess) else None, folder, "gateway")
    if working:
        tried.append(working)
    if relative and not tried:
        return NotebookPlace(unseen=f"the page names {relative} but not the server's root folder")
    if tried:
        return NotebookPlace(unseen="this kernel cannot see " + " nor ".join(dict.fromkeys(tried)))
    return NotebookPlace()


def _page_path(hello: Mapping[str, object] | None) -> str:
    value = hello.get("path") if hello else None
    return value.strip() if isinstance(value, str) else ""


def _roots(hello: Mapping[str, object] | None, env: Mapping[str, str]) -> list[str]:
    """The folders the page's relative path is tried against: the deployment's mapping first
    (it was set on purpose), then the server's root as the page reports it."""
    roots = [env.get(name, "").strip() for name in NOTEBOOK_ROOT_VARS]
    server_root = hello.get("server_root") if hello else None
    if isinstance(server_root, str):
        roots.append(server_root.strip())
    return [root for root in dict.fromkeys(roots) if root]


def _under(root: str, relative: str) -> str | None:
    """`relative` (a server path, '/'-separated) below `root`; None when it would leave `root`."""
    parts = PurePosixPath(relative.lstrip("/")).parts
    if not parts or ".." in parts:
        return None
    return str(Path(root).expanduser().joinpath(*parts))


# --- the page's hello: the one place that reads it -------------------------------------------------


def page_hello(shell: object) -> Mapping[str, object] | None:
    """The hello of the notebook page connected to this kernel (None when none is): its `path`
    (relative to the server's root) and `server_root` are what `notebook_place` reads."""
    from .frontend_bridge import current_hello

    return current_hello(shell)

