"""An Environment's sandbox: how each command it spawns runs, and the private /tmp they share.

Owns `SandboxConfig` (what the Agent hands every Environment it builds: whether the
administrator's policy requires the sandbox, the project's allowed hosts, the host's grant
ledger), `SandboxPlan` (one command's answer: sandboxed or not, the hosts it may reach, or the
one line why it does not run) and `CommandSandbox`, which also wraps long-lived processes
(`server_launch`: an MCP stdio server, for a spawner that passes no file descriptors): `plan()` reads the grant the approval layer
gave the call (`grants.py`) — with a ledger present a call without one runs sandboxed (fail
closed), without a ledger (the Python API without a host) it runs as it always did — and a
required sandbox wins over everything; `warm_start()` starts a command in the Environment's
warm sandbox (`warm.py`: one bwrap per session, replaced when the view changes) and
`launch()` builds a per-command `SandboxLaunch` for what it does not take (network hosts);
`dispose()` ends the warm sandbox and removes the private temporary folder. Whether a sandbox can start at all is `support.py`'s. In
a sandboxed kernel (`enclosing.py`) every command runs as it is, inside the kernel's sandbox
(no nested bwrap): it cannot leave it (`unsandboxed: true` is refused) nor reach a host the
kernel was not started with.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .bwrap import bwrap_argv, sandbox_environment
from .enclosing import KernelSandbox, kernel_sandbox
from .grants import CommandCall, SandboxGrant, SandboxGrants
from .hosts import BadHost, HostRule, not_covered, parse_hosts
from .launch import KernelLaunch, ProcessLaunch, SandboxLaunch
from .mounts import filesystem_view
from .proxy import HostProxy
from .seccomp import program_for
from .support import sandbox_support
from .warm import WarmChild, WarmSandbox, WarmSandboxError

log = logging.getLogger(__name__)

SANDBOX_NOTE = "[sandboxed: writes only in the workspace and /tmp; network: {network}]"
SERVER_FILTER_FD = 9


@dataclass
class ServerLaunch:
    """A sandboxed long-lived process's argv and environment; `close()` once it ended."""

    argv: list[str]
    env: dict[str, str]
    proxy: HostProxy | None = None

    def close(self) -> None:
        if self.proxy is not None:
            self.proxy.close()


@dataclass(frozen=True)
class SandboxConfig:
    required_by: str = ""  # the policy file when the administrator's policy requires the sandbox
    allowed_hosts: tuple[HostRule, ...] = ()  # the project's `[sandbox] allowed_hosts`
    grants: SandboxGrants | None = None  # the host's ledger; None: nobody decides per call


@dataclass(frozen=True)
class SandboxPlan:
    sandboxed: bool
    hosts: tuple[HostRule, ...] = ()
    refusal: str | None = None  # set: the command does not run, and this line says why
    in_kernel: bool = False  # in a sandboxed kernel: it runs as it is, inside the kernel's sandbox

    def note(self) -> str | None:
        if not self.sandboxed:
            return None
        network = ", ".join(rule.text() for rule in self.hosts) or "none"
        return SANDBOX_NOTE.format(network=network)


class CommandSandbox:
    def __init__(self, config: SandboxConfig, workspace_dir: str) -> None:
        self.config = config
        self.workspace_dir = workspace_dir
        self._root: str | None = None
        self._sockets = itertools.count(1)
        self._warm: WarmSandbox | None = None
        self._warm_lock = threading.Lock()
        self._warm_failed = False

    @property
    def required(self) -> bool:
        return bool(self.config.required_by)

    def plan(self, call: CommandCall) -> SandboxPlan:
        """How the approved command `call` runs."""
        grants = self.config.grants
        grant = grants.take(call) if grants is not None else None
        unsandboxed = call.unsandboxed
        kernel = kernel_sandbox()
        if kernel is not None and kernel.confined:
            return _kernel_plan(call, kernel)
        if grant is None:
            grant = SandboxGrant(sandboxed=grants is not None)
        if self.required and unsandboxed:
            return SandboxPlan(
                True,
                refusal=(
                    f"[not run: the administrator's policy ({self.config.required_by}) requires the sandbox; "
                    "unsandboxed: true is refused]"
                ),
            )
        if not (grant.sandboxed or self.required):
            return SandboxPlan(False)
        return self._sandboxed(grant)

    def _sandboxed(self, grant: SandboxGrant) -> SandboxPlan:
        support = sandbox_support()
        if not support.available:
            return SandboxPlan(True, refusal=f"[not run: the sandbox cannot start here: {support.reason}]")
        if os.path.realpath(self.workspace_dir) == "/":
            return SandboxPlan(
                True,
                refusal="[not run: the workspace is / (the whole machine); a sandbox cannot protect anything]",
            )
        hosts = tuple(dict.fromkeys((*self.config.allowed_hosts, *grant.hosts)))
        return SandboxPlan(True, hosts)

    def launch(
        self, command: Sequence[str], cwd: str | None, env: Mapping[str, str], plan: SandboxPlan
    ) -> ProcessLaunch:
        """The launch of `command` (an argv) in this sandbox."""
        if plan.in_kernel:
            return KernelLaunch(command, env)
        support = sandbox_support()
        root = self._private_root()
        view = filesystem_view(self.workspace_dir, os.path.join(root, "tmp"), os.path.join(root, "empty"))
        socket_path = os.path.join(root, f"proxy-{next(self._sockets)}.sock") if plan.hosts else None
        return SandboxLaunch(
            bwrap=support.bwrap,
            view=view,
            command=command,
            env=env,
            cwd=cwd,
            hosts=plan.hosts,
            proxy_socket=socket_path,
        )

    def warm_start(
        self,
        command: Sequence[str],
        cwd: str | None,
        env: Mapping[str, str],
        plan: SandboxPlan,
        host_env: Mapping[str, str],
    ) -> WarmChild | None:
        """`command` started in this Environment's warm sandbox (`warm.py`: one bwrap for the
        session, not one per command), or None when it needs its own bwrap: network hosts (its
        proxy and notes are its own), or no warm sandbox can start (the per-command bwrap then
        reports why). The warm sandbox is replaced when the view a command would get changed
        (a credential file appeared, a `.git` was made): it never holds an older view."""
        if plan.in_kernel or plan.hosts or not plan.sandboxed or plan.refusal is not None:
            return None
        support = sandbox_support()
        root = self._private_root()
        view = filesystem_view(self.workspace_dir, os.path.join(root, "tmp"), os.path.join(root, "empty"))
        with self._warm_lock:
            warm = self._warm
            if warm is not None and (not warm.usable or warm.view != view):
                warm.retire()
                warm = self._warm = None
            if warm is None:
                if self._warm_failed:
                    return None
                try:
                    warm = self._warm = WarmSandbox(support.bwrap, view, host_env)
                except WarmSandboxError as exc:
                    self._warm_failed = True
                    log.info("penguin: no warm sandbox (%s); each command gets its own", exc)
                    return None
        try:
            return warm.start(command, cwd, env)
        except WarmSandboxError:
            return None

    def server_launch(
        self, command: Sequence[str], cwd: str | None, env: Mapping[str, str], hosts: tuple[HostRule, ...]
    ) -> ServerLaunch:
        """A long-lived process (an MCP stdio server) in this sandbox, for a spawner that passes no
        file descriptors: the seccomp filter comes from a file through the shell's redirection.
        Raises RuntimeError with the one-line reason when the sandbox cannot start here."""
        kernel = kernel_sandbox()
        if kernel is not None and kernel.confined:  # already inside the kernel's sandbox
            return ServerLaunch(list(command), dict(env))
        support = sandbox_support()
        if not support.available:
            raise RuntimeError(f"the sandbox cannot start here: {support.reason}")
        root = self._private_root()
        program = program_for()
        if program is None:
            raise RuntimeError("the sandbox cannot start here: no seccomp filter for this machine")
        filter_path = os.path.join(root, "seccomp.bpf")
        if not os.path.exists(filter_path):
            with open(filter_path, "wb") as handle:
                handle.write(program)
        view = filesystem_view(self.workspace_dir, os.path.join(root, "tmp"), os.path.join(root, "empty"))
        allowed = tuple(dict.fromkeys((*self.config.allowed_hosts, *hosts)))
        proxy = None
        socket_path = None
        if allowed:
            socket_path = os.path.join(root, f"proxy-{next(self._sockets)}.sock")
            proxy = HostProxy(allowed, socket_path)
            proxy.start()
        argv = bwrap_argv(support.bwrap, view, command, seccomp_fd=SERVER_FILTER_FD, proxy_socket=socket_path, cwd=cwd)
        wrapped = ["/bin/sh", "-c", f'exec "$@" {SERVER_FILTER_FD}<"$0"', filter_path, *argv]
        return ServerLaunch(wrapped, sandbox_environment(env, proxy is not None), proxy)

    def _private_root(self) -> str:
        if self._root is None or not os.path.isdir(self._root):
            self._root = tempfile.mkdtemp(prefix="penguin-sandbox-")
            os.mkdir(os.path.join(self._root, "tmp"), 0o700)
            empty = os.path.join(self._root, "empty")
            os.close(os.open(empty, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444))
        return self._root

    def dispose(self) -> None:
        with self._warm_lock:
            warm, self._warm = self._warm, None
        if warm is not None:
            warm.close()
        root, self._root = self._root, None
        if root is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(root)


def _kernel_plan(call: CommandCall, kernel: KernelSandbox) -> SandboxPlan:
    """A command in a sandboxed kernel: in the kernel's sandbox, or not at all."""
    if call.unsandboxed:
        return SandboxPlan(
            True,
            refusal="[not run: this kernel runs in the penguin sandbox, so nothing it starts can leave it "
            "(unsandboxed: true)]",
        )
    try:
        missing = not_covered(parse_hosts(call.hosts), kernel.hosts)
    except BadHost as exc:
        return SandboxPlan(True, refusal=f"[not run: {exc}]")
    if missing:
        return SandboxPlan(
            True,
            refusal=(
                f"[not run: this kernel's sandbox reaches only {kernel.network_text()}; "
                f"{', '.join(rule.text() for rule in missing)} cannot be added while it runs (list it in "
                "the project's [sandbox] allowed_hosts and restart the kernel)]"
            ),
        )
    return SandboxPlan(True, kernel.hosts, in_kernel=True)
