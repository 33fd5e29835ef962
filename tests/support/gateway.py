"""Remote-kernel test support: a real Jupyter Kernel Gateway on 127.0.0.1.

Owns `KernelGateway`: `jupyter kernelgateway` in its own process group, started from its own
directory (so its kernels' working directory is not the notebook's, as on a real remote host),
with a token and the deployment settings docs/deploying.md "Remote kernels and gateways" documents
(`KG_ENV_PROCESS_WHITELIST` passing PENGUIN_HOME and HOME to kernels). JupyterLab is pointed at
it with `lab_args()` (tests/support/browser.py's `JupyterLab(extra_args=...)`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.browser import REPO_ROOT, _free_port

FORWARDED = ("PENGUIN_HOME", "HOME", "PYTHONPATH")


class KernelGateway:
    """`jupyter kernelgateway` on a random loopback port, run in `cwd` with `env`."""

    def __init__(self, base: Path, penguin_home: Path, home: Path) -> None:
        self.cwd = base / "gateway-cwd"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.penguin_home = penguin_home
        self.home = home
        self.port = _free_port()
        self.token = "penguin-gateway-" + os.urandom(8).hex()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = base / "kernel-gateway.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            HOME=str(self.home),
            PENGUIN_HOME=str(self.penguin_home),
            PYTHONPATH=os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p),
            KG_ENV_PROCESS_WHITELIST=",".join(FORWARDED),
        )
        env.pop("JPY_SESSION_NAME", None)
        return env

    def start(self, timeout: float = 90.0) -> KernelGateway:
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            "kernelgateway",
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={self.port}",
            "--KernelGatewayApp.port_retries=0",
            f"--KernelGatewayApp.auth_token={self.token}",
            "--JupyterWebsocketPersonality.list_kernels=True",  # JupyterLab lists kernels (its /api/status too)
        ]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=self.cwd, env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the kernel gateway exited ({self.proc.returncode}):\n{self.log_tail()}")
            with contextlib.suppress(OSError):
                if self.api("GET", "/api/kernelspecs") is not None:
                    return self
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the kernel gateway did not answer within {timeout:.0f}s:\n{self.log_tail()}")

    def api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def lab_args(self) -> tuple[str, ...]:
        """What `jupyter lab` needs to run its kernels on this gateway."""
        return (f"--GatewayClient.url={self.url}", f"--GatewayClient.auth_token={self.token}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        pgid = os.getpgid(self.proc.pid)
        os.killpg(pgid, signal.SIGTERM)  # the gateway shuts its kernels down on SIGTERM
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        self.proc.wait(timeout=10)
