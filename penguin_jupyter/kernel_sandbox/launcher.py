"""The process a "Python 3 (penguin sandbox)" kernelspec starts: it runs ipykernel in the sandbox.

Owns one kernel's launch, outside the sandbox, for its whole life (docs/security.md "The
sandboxed kernel"): it refuses to start — one line on stderr, exit 1, nothing run — where no
sandbox can start or the workspace is `/`; else it reads the client's connection file, takes the
workspace from its own working directory (JupyterLab starts a kernel in the notebook's folder),
prepares the data root's slice (`data_slice.py`), the kernel's sockets (`sockets.py`), the hosts
its proxy lets through (`endpoints.py`) and the marker the kernel reads
(`environment/sandbox/enclosing.py`), then runs `python -m ipykernel_launcher` with
`SandboxedKernel` (`notebook/sandboxed_kernel.py`) under bwrap with the view and namespaces of
a sandboxed command (`environment/sandbox/`), the proxy in this process. An interrupt is
forwarded to the kernel's process group inside; a termination kills bwrap, and with it every
process of the sandbox. When the kernel ends, what its sessions wrote is published and the
private folders are removed. What the kernelspec and the provisioner say is theirs.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from ..environment.sandbox import SandboxLaunch, filesystem_view, sandbox_support
from ..environment.sandbox.enclosing import MARKER_PATH, marker_text
from ..environment.sandbox.hosts import HostRule
from ..environment.sandbox.mounts import ExtraMount
from ..private_files import UnsafePathError
from ..state import paths
from ..state.errors import ConfigError
from ..state.project_config import load_project_config
from .data_slice import DataSlice, owner_of_this_process, prepare_slice
from .endpoints import kernel_hosts
from .sockets import BadConnectionFile, KernelSockets, read_connection_file

KERNEL_NAME = "Python 3 (penguin sandbox)"
KERNEL_CLASS = "penguin_jupyter.notebook.sandboxed_kernel.SandboxedKernel"
PUBLISH_EVERY_S = 2.0
WAIT_SLICE_S = 0.05  # how late an interrupt or a termination may be handled
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class LaunchRefused(Exception):
    """The kernel cannot start in the sandbox; `str()` is the one line to show."""


def refusal_reason(cwd: str) -> str | None:
    """Why no sandboxed kernel can start here (None: it can). Also the provisioner's check."""
    support = sandbox_support()
    if not support.available:
        return support.reason
    if os.path.realpath(cwd) == "/":
        return "the workspace would be / (the whole machine): open the notebook in a folder of its own"
    return None


def refusal_line(reason: str) -> str:
    return f"{KERNEL_NAME} cannot start: {reason}. Nothing was started; pick another kernel, or fix this and try again."


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] != "-f":
        _say("usage: python -m penguin_jupyter.kernel_sandbox -f CONNECTION_FILE [kernel options]")
        return 2
    try:
        return KernelRun(args[1], args[2:]).run()
    except LaunchRefused as exc:
        _say(refusal_line(str(exc)))
        return 1


class KernelRun:
    def __init__(self, connection_file: str, kernel_args: Sequence[str]) -> None:
        self.connection_file = connection_file
        self.kernel_args = list(kernel_args)
        self.workspace = os.path.realpath(os.getcwd())
        self._private: str | None = None
        self._slice: DataSlice | None = None
        self._sockets: KernelSockets | None = None
        self._launch: SandboxLaunch | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopped = threading.Event()

    def run(self) -> int:
        reason = refusal_reason(self.workspace)
        if reason is not None:
            raise LaunchRefused(reason)
        try:
            self._prepare()
            return self._serve()
        except (BadConnectionFile, ConfigError, UnsafePathError) as exc:
            raise LaunchRefused(str(exc)) from None
        except OSError as exc:
            raise LaunchRefused(f"the sandbox could not be set up ({exc})") from None
        finally:
            self._clean_up()

    # --- before the kernel -----------------------------------------------------------------------

    def _prepare(self) -> None:
        info = read_connection_file(self.connection_file)
        root = paths.resolve_root(None).absolute()
        project = paths.DEFAULT_PROJECT_ID
        config_file = paths.project_config_path(root, project)
        hosts = kernel_hosts(load_project_config(root, project), str(config_file), os.environ)
        self._private = private = tempfile.mkdtemp(prefix="penguin-kernel-")
        for name in ("tmp", "kernel"):
            os.mkdir(os.path.join(private, name), 0o700)
        empty = os.path.join(private, "empty")
        os.close(os.open(empty, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444))
        marker = os.path.join(private, "marker.json")
        Path(marker).write_text(marker_text(self.workspace, hosts))
        self._slice = prepare_slice(root, owner_of_this_process())
        self._sockets = KernelSockets(info, os.path.join(private, "kernel"))
        extra = (
            *self._slice.mounts,
            ExtraMount(self._sockets.folder, self._sockets.folder, True),
            ExtraMount(MARKER_PATH, marker, False),
        )
        view = filesystem_view(self.workspace, os.path.join(private, "tmp"), empty, extra=extra)
        command = [
            sys.executable, "-m", "ipykernel_launcher", "-f", self._sockets.connection_file,
            f"--IPKernelApp.kernel_class={KERNEL_CLASS}",
            "--HistoryManager.hist_file=/tmp/.ipython-history.sqlite",
            *self.kernel_args,
        ]  # fmt: skip
        env = dict(os.environ)
        # ipykernel watches its parent: inside, that is the sandbox's init, pid 1 (not the launcher)
        env["JPY_PARENT_PID"] = "1"
        env.update(_private_config(os.path.join(private, "tmp"), env))
        self._launch = SandboxLaunch(
            bwrap=sandbox_support().bwrap,
            view=view,
            command=command,
            env=env,
            cwd=self.workspace,
            hosts=hosts,
            proxy_socket=os.path.join(private, "proxy.sock") if hosts else None,
            command_loads_filter=True,
            through_proxy=_loopback_names(hosts),
        )

    # --- while it runs ---------------------------------------------------------------------------

    def _serve(self) -> int:
        launch = self._launch
        assert launch is not None
        self._proc = subprocess.Popen(
            launch.argv, env=launch.env, pass_fds=launch.pass_fds, cwd=self.workspace, start_new_session=True
        )
        launch.started()
        signal.signal(signal.SIGINT, self._interrupt)
        for number in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, self._terminate)
        publisher = threading.Thread(target=self._publish_while_running, name="penguin-publish", daemon=True)
        publisher.start()
        # Python runs signal handlers in the main thread only, and a signal the kernel delivers to
        # another thread (the proxy's, the publisher) does not interrupt a blocking wait: poll.
        while (code := self._proc.poll()) is None:
            time.sleep(WAIT_SLICE_S)
        self._stopped.set()
        return code if code >= 0 else 128 - code

    def _interrupt(self, _number: int, _frame: FrameType | None) -> None:
        group = self._launch.inner_group(wait=False) if self._launch is not None else None
        if group is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGINT)

    def _terminate(self, _number: int, _frame: FrameType | None) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()  # bwrap: the sandbox's init dies with it, and every process in it

    def _publish_while_running(self) -> None:
        while not self._stopped.wait(PUBLISH_EVERY_S):
            with contextlib.suppress(OSError):
                if self._slice is not None:
                    self._slice.publish()

    # --- after it ended --------------------------------------------------------------------------

    def _clean_up(self) -> None:
        self._stopped.set()
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        if self._launch is not None:
            for note in self._launch.close():
                _say(f"penguin sandbox kernel: {note}")
        if self._sockets is not None:
            self._sockets.close()
        if self._slice is not None:
            self._slice.dispose()
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)


def _loopback_names(hosts: tuple[HostRule, ...]) -> tuple[str, ...]:
    return tuple(name for name in LOOPBACK_NAMES if any(rule.host == name for rule in hosts))


def _private_config(private_tmp: str, env: dict[str, str]) -> dict[str, str]:
    """IPython and matplotlib need writable folders of their own (the home folder is read-only
    in the sandbox; IPython would otherwise drop the user's profile for an empty temporary one):
    copies in the private /tmp of the user's IPython profiles (configuration and startup files,
    no history or database) and of matplotlib's matplotlibrc and font cache."""
    home = os.path.expanduser("~")
    changed = {}
    ipython_source = env.get("IPYTHONDIR") or os.path.join(home, ".ipython")
    ipython = os.path.join(private_tmp, ".ipython")
    os.mkdir(ipython, 0o700)
    for profile in glob.glob(os.path.join(glob.escape(ipython_source), "profile_*")):
        target = os.path.join(ipython, os.path.basename(profile))
        _copy_files(glob.glob(os.path.join(glob.escape(profile), "*.py")), target)
        _copy_files(glob.glob(os.path.join(glob.escape(profile), "*.json")), target)
        _copy_files(glob.glob(os.path.join(glob.escape(profile), "startup", "*")), os.path.join(target, "startup"))
    changed["IPYTHONDIR"] = "/tmp/.ipython"
    if not env.get("MPLCONFIGDIR"):
        config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        cache_home = env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
        seeds = [os.path.join(config_home, "matplotlib", "matplotlibrc")]
        seeds += glob.glob(os.path.join(glob.escape(cache_home), "matplotlib", "fontlist-*.json"))
        _copy_files(seeds, os.path.join(private_tmp, "matplotlib"))
        changed["MPLCONFIGDIR"] = "/tmp/matplotlib"
    return changed


def _copy_files(sources: list[str], folder: str) -> None:
    """Copy the regular files among `sources` (links not followed) into `folder` (made 0700)."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    for source in sources:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(source).st_mode):
                shutil.copyfile(source, os.path.join(folder, os.path.basename(source)), follow_symlinks=False)


def _say(line: str) -> None:
    """One line on the launcher's stderr (the kernel's log: the Jupyter server's terminal)."""
    os.write(2, (line + "\n").encode("utf-8", "replace"))
