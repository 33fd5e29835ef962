"""The sandboxed kernel for tests: "Python 3 (penguin sandbox)" started through its kernelspec.

Owns `sandbox_spec_manager()` (a KernelSpecManager that finds this checkout's kernelspec,
`penguin_jupyter/kernel_sandbox/kernels/penguin-sandbox`) and `register_provisioner()` (the
`penguin-sandbox` provisioner for this process when the installed package does not declare it
yet: an editable install made before the entry point existed), and `provisioner_path()`: a
folder to put on a child process's PYTHONPATH that declares the entry point the same way (a
jupyter server in a browser test), and `hardened_server()`: a Jupyter ServerApp (not started)
whose pages carry the Content-Security-Policy docs/security.md gives, with penguin's script
guard enabled, the page config of this process's Jupyter paths disabling the JavaScript renderer
and this checkout's labextension (its meta refresh guard) on the data path — the parent a
KernelManager needs for the provisioner to judge its browser hardened.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.provisioning.factory import KernelProvisionerFactory

from penguin_jupyter.kernel_sandbox.browser_judge import LABEXTENSION, SCRIPT_GUARD
from tests.support.paths import REPO_ROOT

KERNEL_NAME = "penguin-sandbox"
KERNELS_DIR = REPO_ROOT / "penguin_jupyter" / "kernel_sandbox" / "kernels"
GROUP = "jupyter_client.kernel_provisioners"
VALUE = "penguin_jupyter.kernel_sandbox.provisioner:SandboxProvisioner"
HARDENED_CSP = (
    "default-src 'self' 'unsafe-eval' data: blob:; script-src 'self' 'unsafe-eval' blob:; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'self'"
)
JS_EXTENSION = "@jupyterlab/javascript-extension"
BUILT_LABEXTENSION = REPO_ROOT / "penguin_jupyter" / "labextension"


def installed() -> bool:
    return any(ep.name == KERNEL_NAME for ep in entry_points(group=GROUP))


def register_provisioner() -> None:
    if not installed():
        KernelProvisionerFactory.instance().provisioners[KERNEL_NAME] = EntryPoint(name=KERNEL_NAME, value=VALUE, group=GROUP)


def sandbox_spec_manager() -> KernelSpecManager:
    register_provisioner()
    return KernelSpecManager(kernel_dirs=[str(KERNELS_DIR)])


def provisioner_path() -> str:
    """A folder whose dist-info declares the provisioner (for a child's PYTHONPATH)."""
    folder = Path(tempfile.mkdtemp(prefix="pj-provisioner-"))
    info = folder / "penguin_sandbox_test_provisioner-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: penguin-sandbox-test-provisioner\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{KERNEL_NAME} = {VALUE}\n")
    return str(folder)


def declare_kernel_tools() -> None:
    """Declare the kernel and notebook tools as an Environment registering them does (a router
    test without a session reads their declarations through `registry.declaration_of`)."""
    from types import SimpleNamespace

    from penguin_jupyter.environment.registry import declare
    from penguin_jupyter.notebook.kernel_tools import kernel_tools
    from penguin_jupyter.notebook.kernel_tools.notebook_cells import (
        DELETE_CELL,
        EDIT_CELL,
        INSERT_CELL,
        READ_NOTEBOOK,
        RUN_CELL,
    )

    for registration in kernel_tools(SimpleNamespace(user_ns={})):  # type: ignore[arg-type]
        declare(registration.declaration)
    for declaration in (READ_NOTEBOOK, INSERT_CELL, EDIT_CELL, RUN_CELL, DELETE_CELL):
        declare(declaration)


@contextmanager
def hardened_server(
    csp: str | None = HARDENED_CSP, *, disable_javascript: bool = True, script_guard: bool = True, page_guard: bool = True
) -> Iterator[object]:
    """A ServerApp with `csp` in its headers and penguin's script guard enabled in its config (or
    not), this process's Jupyter config folder (JUPYTER_CONFIG_DIR, restored after) holding a
    labconfig/page_config.json that disables the JavaScript renderer (or not), and its data path
    (JUPYTER_PATH, restored after) holding this checkout's built labextension, its meta refresh
    guard enabled (or the labextension disabled in the page config)."""
    from jupyter_server.serverapp import ServerApp

    folder = tempfile.mkdtemp(prefix="pj-jupyter-config-")
    labconfig = os.path.join(folder, "labconfig")
    os.mkdir(labconfig)
    disabled = {JS_EXTENSION: True} if disable_javascript else {}
    if not page_guard:
        disabled[LABEXTENSION] = True
    with open(os.path.join(labconfig, "page_config.json"), "w") as handle:
        json.dump({"disabledExtensions": disabled}, handle)
    labextensions = Path(folder) / "data" / "labextensions"
    labextensions.mkdir(parents=True)
    (labextensions / LABEXTENSION).symlink_to(BUILT_LABEXTENSION, target_is_directory=True)
    before = {name: os.environ.get(name) for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_PATH")}
    os.environ["JUPYTER_CONFIG_DIR"] = folder
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(labextensions.parent), before["JUPYTER_PATH"]) if p)
    try:
        yield ServerApp(
            tornado_settings={"headers": {"Content-Security-Policy": csp}} if csp is not None else {},
            jpserver_extensions={SCRIPT_GUARD: True} if script_guard else {},
        )
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)
