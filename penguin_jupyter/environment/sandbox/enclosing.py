"""The inside of a sandboxed kernel (docs/security.md "The sandboxed kernel"): confining it, and
knowing that it is confined.

Owns the marker the kernel's launcher (`penguin_jupyter/kernel_sandbox/`) binds read-only at
`MARKER_PATH` in the sandbox — the workspace and the hosts the kernel may reach — and
`kernel_sandbox()`, which believes it only when the walls are really up: the marker is on a
read-only mount, the process has no capabilities and no_new_privs, every thread runs under the
seccomp filter, and the network namespace has nothing but loopback. Anything short of that is a
`problem` (one line), and the harness then treats the kernel as not sandboxed. Also owns
`browser_open`, the provisioner's verdict on the browser that shows the kernel's outputs
(`BROWSER_VARIABLE`, read from the environment the kernel was started with, which its own code
cannot change: `process_start`); absent or unreadable, the browser is taken as not hardened. Also owns
`confine_kernel()`: the seccomp filter (`seccomp.py`) loaded on every thread of the process at
once (TSYNC), called once the kernel has bound its sockets (which the filter's `AF_UNIX` rule
would refuse) and before any code of the user or the model runs. Answers are kept for the life
of the process. What a sandboxed kernel allows without a card is the notebook's business.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from ...process_start import start_environment_value
from .hosts import BadHost, HostRule, parse_hosts
from .seccomp import program_for

MARKER_DIR = "/run/penguin"
MARKER_PATH = f"{MARKER_DIR}/kernel.json"
MARKER_VERSION = 1
_SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_PR_SET_NO_NEW_PRIVS = 38
BROWSER_VARIABLE = "PENGUIN_SANDBOX_BROWSER"  # "hardened", or "open: <why>" (kernel_sandbox/browser_judge.py)
BROWSER_HARDENED = "hardened"
BROWSER_UNKNOWN = "the kernel was not started by its provisioner, so nothing judged the server"


@dataclass(frozen=True)
class KernelSandbox:
    workspace: str  # where the kernel may write (with its private /tmp)
    hosts: tuple[HostRule, ...]  # the model endpoints and allowed hosts its proxy lets through
    problem: str = ""  # set: the marker is there but a wall is not up (one line why)
    browser_open: str = BROWSER_UNKNOWN  # why its outputs' browser may not be hardened; "" when it is

    @property
    def confined(self) -> bool:
        return not self.problem

    @property
    def browser_hardened(self) -> bool:
        return not self.browser_open

    def network_text(self) -> str:
        return ", ".join(rule.text() for rule in self.hosts) or "none"


def marker_text(workspace: str, hosts: tuple[HostRule, ...]) -> str:
    """What the launcher writes for the kernel to read at `MARKER_PATH`."""
    return json.dumps({"version": MARKER_VERSION, "workspace": workspace, "hosts": [rule.text() for rule in hosts]})


_lock = threading.Lock()
_known: list[KernelSandbox | None] = []


def kernel_sandbox() -> KernelSandbox | None:
    """This kernel's sandbox; None in a kernel (or any process) that was not started in one."""
    with _lock:
        if not _known:
            _known.append(_read(Path(MARKER_PATH)))
        return _known[0]


def _read(marker: Path) -> KernelSandbox | None:
    try:
        text = marker.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return KernelSandbox("", (), f"its marker {marker} cannot be read ({exc.strerror})")
    try:
        data = json.loads(text)
        workspace, hosts = data["workspace"], parse_hosts(data["hosts"])
        if data.get("version") != MARKER_VERSION or not isinstance(workspace, str):
            raise ValueError("unknown version")
    except (ValueError, KeyError, TypeError, BadHost) as exc:
        return KernelSandbox("", (), f"its marker {marker} is not one this version writes ({exc})")
    return KernelSandbox(workspace, hosts, _walls_down(marker), browser_verdict(start_environment_value(BROWSER_VARIABLE)))


def browser_verdict(value: str | None) -> str:
    """Why the browser may not be hardened ("" when the provisioner said it is), from what the
    kernel was started with (None: that cannot be read)."""
    if value == BROWSER_HARDENED:
        return ""
    reason = (value or "").removeprefix("open: ").strip()
    return reason if value and value.startswith("open: ") and reason else BROWSER_UNKNOWN


def _walls_down(marker: Path) -> str:
    """The first wall that is not up, or ""."""
    if not os.statvfs(marker).f_flag & os.ST_RDONLY:
        return f"its marker {marker} is writable"
    status = _status_fields(Path("/proc/self/status"))
    if status.get("CapEff", "").strip("0"):
        return f"it holds capabilities (CapEff {status.get('CapEff')})"
    if status.get("NoNewPrivs") != "1":
        return "no_new_privs is not set"
    for task in sorted(Path("/proc/self/task").iterdir()):
        if _status_fields(task / "status").get("Seccomp") != "2":
            return f"thread {task.name} runs without the seccomp filter"
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:
        return f"it has network interfaces besides loopback ({', '.join(interfaces)})"
    return ""


def _status_fields(path: Path) -> dict[str, str]:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


def confine_kernel() -> None:
    """Load the seccomp filter on every thread of this process; raises OSError (the kernel must
    then stop) when it cannot."""
    program = program_for()
    number = _SECCOMP_SYSCALL.get(platform.machine())
    if program is None or number is None:
        raise OSError(f"no seccomp filter for this CPU ({platform.machine()})")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot set no_new_privs")
    buffer = ctypes.create_string_buffer(program, len(program))

    class _SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    result = libc.syscall(number, _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(fprog))
    if result != 0:  # -1 with errno, or the id of a thread that could not be synchronized
        detail = os.strerror(ctypes.get_errno()) if result < 0 else f"thread {result} could not take it"
        raise OSError(f"cannot load the seccomp filter on every thread ({detail})")
