"""How the Jupyter server reaches a kernel that has no network: ZMQ over Unix sockets.

The sandbox has its own network namespace, so nothing outside can reach a TCP port inside it.
A pathname Unix socket, though, is a file: the kernel binds its five ZMQ sockets with
`transport: ipc` in a private folder bound into the sandbox at the same path (`KernelSockets`
writes the kernel its own connection file, same key and ports), and the client reaches them:

* when the client's connection file already says `ipc` (the kernelspec's provisioner,
  `provisioner.py`, asks for it; jupyter_client and ipykernel support it), through symbolic
  links at the paths it connects to — no copy of any byte;
* when it says `tcp` (a client that launches the kernelspec's argv itself), through a relay in
  the launcher: it listens on the client's five ports and copies bytes to and from the sockets
  (ZMTP is the same stream over both transports).

The launcher (`launcher.py`) owns when; the kernel loads its seccomp filter (which forbids new
Unix sockets) only after binding them (`environment/sandbox/enclosing.py`).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from collections.abc import Mapping
from typing import Any

from ..environment.sandbox.proxy import relay
from ..private_files import write_private_bytes

PORT_NAMES = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
KEYS = frozenset({"key", "signature_scheme", "transport", "ip", *PORT_NAMES})


class BadConnectionFile(ValueError):
    """A connection file the launcher cannot use; `str()` is the one line to show."""


def read_connection_file(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except (OSError, ValueError) as exc:
        raise BadConnectionFile(f"cannot read the connection file {path} ({exc})") from None
    if not isinstance(info, dict) or not set(info) >= KEYS:
        raise BadConnectionFile(f"the connection file {path} lacks {', '.join(sorted(KEYS - set(info or {})))}")
    if info["transport"] not in ("tcp", "ipc") or not all(isinstance(info[p], int) and info[p] > 0 for p in PORT_NAMES):
        raise BadConnectionFile(f"the connection file {path} names no usable transport and ports")
    return info


class KernelSockets:
    """Use: `KernelSockets(info, folder)`, start the kernel with `connection_file`, then
    `close()` once it ended."""

    def __init__(self, info: Mapping[str, Any], folder: str) -> None:
        self.folder = folder
        self.base = os.path.join(folder, "k")  # the kernel binds ipc://<base>-<port>
        self.connection_file = os.path.join(folder, "connection.json")
        own = {**info, "transport": "ipc", "ip": self.base}
        write_private_bytes(self.connection_file, json.dumps(own).encode("utf-8"))
        self.links: list[str] = []
        self._listeners: list[socket.socket] = []
        self._closed = False
        targets = {info[name]: f"{self.base}-{info[name]}" for name in PORT_NAMES}
        if info["transport"] == "ipc":
            for port, target in targets.items():
                link = f"{info['ip']}-{port}"
                if os.path.islink(link):
                    os.unlink(link)  # left by an earlier run of this kernel (a restart)
                os.symlink(target, link)
                self.links.append(link)
            return
        try:
            for port, target in targets.items():
                listener = socket.create_server((info["ip"], port), reuse_port=False)
                self._listeners.append(listener)
                threading.Thread(target=self._accept, args=(listener, target), daemon=True).start()
        except OSError:
            self.close()
            raise

    def _accept(self, listener: socket.socket, target: str) -> None:
        while not self._closed:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=self._forward, args=(client, target), daemon=True).start()

    @staticmethod
    def _forward(client: socket.socket, target: str) -> None:
        kernel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            kernel.connect(target)  # not bound yet: the client's ZMQ reconnects
            relay(client, kernel)
        except OSError:
            pass
        finally:
            client.close()
            kernel.close()

    def close(self) -> None:
        self._closed = True
        for listener in self._listeners:
            with contextlib.suppress(OSError):
                listener.close()
        for link in self.links:
            with contextlib.suppress(OSError):
                os.unlink(link)

