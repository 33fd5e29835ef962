"""Whether a sandbox can start on this machine: probed once per process, with the reason if not.

Owns `sandbox_support()`: Linux only (macOS's Seatbelt and Windows are not implemented: see
docs/security.md "Sandbox"), a CPU the seccomp filter knows, bubblewrap found (`PENGUIN_BWRAP`
names it — `none` turns the sandbox off, which is then said like any other reason — else
`bwrap` on PATH; both as the process was started with them, `process_start.py`), and a trial run of `true` under the very flags commands get (user
namespaces off, a container without the rights, or a missing /proc show up here). The answer is
kept for the life of the process: a later change of the environment does not change it. A
process that is itself a sandboxed kernel (`enclosing.py`) needs no bubblewrap: its commands run
in the kernel's sandbox, which is available when its walls are up (`kernel` says so). What a
caller does with "unavailable" (auto behaves as ask, one line at the first cell; a required
sandbox refuses commands) is the caller's business.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass

from ...process_start import start_environment_value
from .bwrap import NAMESPACE_FLAGS
from .enclosing import KernelSandbox, kernel_sandbox
from .seccomp import program_for

BWRAP_ENV = "PENGUIN_BWRAP"
PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SandboxSupport:
    available: bool
    reason: str = ""  # why not, one line ("" when available)
    bwrap: str = ""  # the bubblewrap binary when available
    kernel: KernelSandbox | None = None  # set: this process is a sandboxed kernel, which holds every command


_lock = threading.Lock()
_support: SandboxSupport | None = None


def sandbox_support() -> SandboxSupport:
    global _support
    if _support is not None:
        return _support
    with _lock:
        if _support is None:
            _support = _probe()
        return _support


def _probe() -> SandboxSupport:
    kernel = kernel_sandbox()
    if kernel is not None:
        if kernel.confined:
            return SandboxSupport(True, "", "", kernel)
        return SandboxSupport(False, f"this kernel was started in the penguin sandbox, but {kernel.problem}")
    if sys.platform == "darwin":
        return SandboxSupport(False, "macOS is not supported yet (the Seatbelt sandbox is planned)")
    if not sys.platform.startswith("linux"):
        return SandboxSupport(False, f"no sandbox on {sys.platform} (Linux with bubblewrap only)")
    program = program_for()
    if program is None:
        import platform

        return SandboxSupport(
            False, f"no seccomp filter for this CPU ({platform.machine()}; x86_64 and aarch64 only)"
        )
    named = _at_start(BWRAP_ENV).strip()
    if named.lower() == "none":
        return SandboxSupport(False, f"turned off ({BWRAP_ENV}=none)")
    bwrap = named or shutil.which("bwrap", path=_at_start("PATH") or os.defpath) or ""
    if not bwrap or not os.access(bwrap, os.X_OK):
        return SandboxSupport(False, "bubblewrap is not installed (apt-get install bubblewrap)")
    return _trial(bwrap, program)


def _at_start(name: str) -> str:
    """`name` as this process was started with it: a kernel's own code cannot point the sandbox
    at another program by changing `os.environ` (or PATH) before the first command."""
    value = start_environment_value(name)
    return os.environ.get(name, "") if value is None else value


def _trial(bwrap: str, program: bytes) -> SandboxSupport:
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, program)
        os.close(write_fd)
        write_fd = -1
        args = [bwrap, *NAMESPACE_FLAGS, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--seccomp", str(read_fd), "--", "true"]
        done = subprocess.run(
            args, pass_fds=(read_fd,), capture_output=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return SandboxSupport(False, f"bubblewrap could not run ({exc})")
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
    if done.returncode == 0:
        return SandboxSupport(True, "", bwrap)
    detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
    first = detail[0] if detail else f"exit code {done.returncode}"
    if "namespace" in first.lower() or "uid map" in first.lower():
        first += " — user namespaces are off or not allowed here"
    return SandboxSupport(False, f"bubblewrap cannot start a sandbox here ({first})")
