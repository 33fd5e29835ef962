"""The jupyter_client kernel provisioner the sandboxed kernelspec names (`penguin-sandbox`,
entry point group `jupyter_client.kernel_provisioners`).

Owns two things a kernelspec alone cannot do, both before the launcher runs: where no sandbox
can start (no bubblewrap, user namespaces off, not Linux) or the workspace would be `/`, the
kernel is refused with one line that JupyterLab shows in its "Error Starting Kernel" dialog —
a user who picked the sandbox never gets a kernel outside it; and the client's connection is
switched to `transport: ipc` in a private folder, so the server talks to the kernel's Unix
sockets directly (`sockets.py` links them) instead of through the launcher's TCP relay. A kill
gives the launcher a moment to clean up (SIGTERM, then SIGKILL). The rest is `LocalProvisioner`'s: the launcher (`launcher.py`) is the kernel process it starts,
signals and waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from typing import Any

from jupyter_client.provisioning import LocalProvisioner

from .launcher import refusal_line, refusal_reason

KILL_GRACE_S = 3.0


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
