"""The jupyter_client kernel provisioner the sandboxed kernelspec names (`penguin-sandbox`,
entry point group `jupyter_client.kernel_provisioners`).

Owns two things a kernelspec alone cannot do, both before the launcher runs: where no sandbox
can start (no bubblewrap, user namespaces off, not Linux) or the workspace would be `/`, the
kernel is refused with one line that JupyterLab shows in its "Error Starting Kernel" dialog —
a user who picked the sandbox never gets a kernel outside it; and the client's connection is
switched to `transport: ipc` in a private folder, so the server talks to the kernel's Unix
sockets directly (`sockets.py` links them) instead of through the launcher's TCP relay. A kill
gives the launcher a moment to clean up (SIGTERM, then SIGKILL). It also judges the server it
runs in, at every start: the Jupyter `ServerApp` up its `parent` chain (KernelManager →
MultiKernelManager → ServerApp), that server's Content-Security-Policy header and the page
config it serves, whether its script guard is loaded (`script_guard.py`) and which guards
penguin's labextension declares, judged by `browser_judge.py`; the verdict goes into the kernel's start
environment (`BROWSER_VARIABLE`: `hardened`, or `open: <why>`), overwriting any inherited value.
No ServerApp (the Kernel Gateway, a bare KernelManager) or anything that cannot be read is
`open`. The rest is `LocalProvisioner`'s: the launcher (`launcher.py`) is the kernel process it
starts, signals and waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

from ..environment.sandbox.enclosing import BROWSER_HARDENED, BROWSER_VARIABLE
from .browser_judge import CSP_HEADER, LABEXTENSION, SCRIPT_GUARD, judge
from .launcher import refusal_line, refusal_reason
from .script_guard import GUARD_SETTING

KILL_GRACE_S = 3.0
PARENTS_SEARCHED = 4  # the provisioner's parent is the KernelManager; the ServerApp is two above


class SandboxProvisioner(LocalProvisioner):
    _ipc_folder: str | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        reason = refusal_reason(str(kwargs.get("cwd") or os.getcwd()))
        if reason is not None:
            raise RuntimeError(refusal_line(reason))
        manager = self.parent
        if manager is not None and manager.transport != "ipc":
            self._ipc_folder = tempfile.mkdtemp(prefix="pjk-")
            manager.cache_ports = False  # TCP ports mean nothing to ipc
            manager.transport = "ipc"
            manager.ip = os.path.join(self._ipc_folder, "k")
        result: dict[str, Any] = await super().pre_launch(**kwargs)
        result["env"][BROWSER_VARIABLE] = browser_verdict(self.parent)
        return result

    async def kill(self, restart: bool = False) -> None:
        """SIGTERM to the launcher first (it kills the sandbox, then publishes what the kernel's
        sessions wrote and removes its private folders), SIGKILL after `KILL_GRACE_S`."""
        process = self.process
        if process is not None:
            with contextlib.suppress(OSError):
                process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + KILL_GRACE_S
            while process.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        await super().kill(restart)

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart)
        if not restart and self._ipc_folder is not None:
            shutil.rmtree(self._ipc_folder, ignore_errors=True)
            self._ipc_folder = None


def browser_verdict(manager: object) -> str:
    """`hardened`, or `open: <why>`, for the Jupyter server above `manager` (every failure to
    read it is `open`, one line)."""
    try:
        from jupyter_server.serverapp import ServerApp
    except ImportError:
        return "open: no Jupyter server in the process that started the kernel"
    server, owner = None, manager
    for _ in range(PARENTS_SEARCHED):
        owner = getattr(owner, "parent", None)
        if isinstance(owner, ServerApp):
            server = owner
            break
    if server is None:
        return "open: the kernel was not started by a Jupyter server (a gateway, or a bare client), so its browser is unknown"
    try:
        reason = judge(_policy(server), _disabled_extensions(), script_guard=_script_guard(server), page_guards=_page_guards())
    except Exception as exc:  # every check fails closed: whatever cannot be read is open
        reason = f"the server's page settings could not be read ({type(exc).__name__}: {exc})"
    return BROWSER_HARDENED if reason is None else "open: " + " ".join(reason.split())


def _policy(server: Any) -> object:
    """The Content-Security-Policy header the server's pages carry (jupyter_server sends the one
    in its web app's `headers` setting, from `ServerApp.tornado_settings`)."""
    web_app = getattr(server, "web_app", None)
    settings = web_app.settings if web_app is not None else server.tornado_settings
    headers = settings.get("headers") or {}
    return headers.get(CSP_HEADER) if isinstance(headers, dict) else object()


def _script_guard(server: Any) -> bool:
    """Whether the server's script guard is loaded (`script_guard.py` marks its web app); a
    server not started yet has no web app: whether its config enables the guard."""
    web_app = getattr(server, "web_app", None)
    if web_app is not None:
        return web_app.settings.get(GUARD_SETTING) is True
    return server.jpserver_extensions.get(SCRIPT_GUARD) is True


def _page_guards() -> list[str]:
    """The guards penguin's labextension declares (its package.json's `penguin.pageGuards`), as
    the first of this process's labextension folders that holds it is what the pages load; none
    when it is not installed."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab_server.config import get_federated_extensions

    found = get_federated_extensions(jupyter_path("labextensions")).get(LABEXTENSION)
    if found is None:
        return []
    with open(os.path.join(found["ext_path"], "package.json"), encoding="utf-8") as handle:
        declared = (json.load(handle).get("penguin") or {}).get("pageGuards") or []
    return [name for name in declared if isinstance(name, str)]


def _disabled_extensions() -> list[str]:
    """The extensions the page config of this process's Jupyter paths disables (what `jupyter
    labextension disable` writes to labconfig/page_config.json)."""
    from jupyter_core.paths import jupyter_path
    from jupyterlab_server.config import get_page_config

    disabled = get_page_config(jupyter_path("labextensions")).get("disabledExtensions") or []
    return [name for name in disabled if isinstance(name, str)]
