"""The jupyter_client kernel provisioner the sandboxed kernelspec names (`penguin-sandbox`,
entry point group `jupyter_client.kernel_provisioners`).

Owns two things a kernelspec alone cannot do, both before the launcher runs: where no sandbox
can start (no bubblewrap, user namespaces off, not Linux) or the workspace would be `/`, the
kernel is refused with one line that JupyterLab shows in its "Error Starting Kernel" dialog —
a user who picked the sandbox never gets a kernel outside it; and the client's connection is
switched to `transport: ipc` in a private folder, so the server talks to the kernel's Unix
sockets directly (`sockets.py` links them) instead of through the launcher's TCP relay. The rest
is `LocalProvisioner`'s: the launcher (`launcher.py`) is the kernel process it starts,
signals and waits for.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

from .launcher import refusal_line, refusal_reason


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
        return result

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart)
        if not restart and self._ipc_folder is not None:
            shutil.rmtree(self._ipc_folder, ignore_errors=True)
            self._ipc_folder = None
