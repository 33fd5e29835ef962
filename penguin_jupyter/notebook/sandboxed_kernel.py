"""The kernel class of "Python 3 (penguin sandbox)" (docs/security.md "The sandboxed kernel").

Owns `SandboxedKernel`: an ordinary IPython kernel that, once ipykernel has bound its five ZMQ
sockets (Unix sockets: `kernel_sandbox/sockets.py`) and before the shell exists — so before any
extension, startup file or cell runs — loads the sandbox's seccomp filter on every thread
(`environment/sandbox/enclosing.confine_kernel`), which from then on refuses new Unix sockets.
If it cannot, the kernel stops with one line on stderr: it never runs half-confined. The
launcher (`kernel_sandbox/launcher.py`) names this class with `--IPKernelApp.kernel_class`;
everything else about the sandbox (mounts, namespaces, proxy) was set up before the kernel
started.
"""

from __future__ import annotations

import os
import signal
import stat
import time

from ipykernel.ipkernel import IPythonKernel

from ..environment.sandbox.enclosing import confine_kernel

SOCKET_WAIT_S = 10.0
PORTS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


class SandboxedKernel(IPythonKernel):
    def __init__(self, **kwargs: object) -> None:
        _wait_for_sockets(kwargs.get("parent"))
        try:
            confine_kernel()
        except OSError as exc:
            os.write(2, f"penguin sandbox kernel: {exc}; stopping (nothing ran)\n".encode("utf-8", "replace"))
            os.kill(os.getpid(), signal.SIGKILL)  # at once: no thread, no exit handler runs anything more
        super().__init__(**kwargs)


def _wait_for_sockets(app: object) -> None:
    """Until every ipc socket of the kernel app exists (the heartbeat binds in its own thread)."""
    ip = getattr(app, "ip", None)
    if getattr(app, "transport", None) != "ipc" or not isinstance(ip, str):
        return
    paths = [f"{ip}-{getattr(app, name, 0)}" for name in PORTS]
    deadline = time.monotonic() + SOCKET_WAIT_S
    while time.monotonic() < deadline and not all(_is_socket(path) for path in paths):
        time.sleep(0.01)


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False
