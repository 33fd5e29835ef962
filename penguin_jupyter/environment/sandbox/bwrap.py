"""The bwrap command line that runs one process tree in the sandbox.

Owns the namespaces and process flags (docs/security.md "Sandbox"): a new PID namespace whose
init dies with bwrap (`--unshare-pid --die-with-parent`: when the command's tree ends or bwrap is
killed, every process in it is killed, daemons that `setsid` or double-fork included), a new
session (`--new-session`: no terminal to push input into), its own network namespace with only
loopback (`--unshare-net`), IPC, UTS and cgroup namespaces, no capabilities even for root
(`--cap-drop ALL`: root inside cannot remount or unmount the view), the seccomp filter
(`--seccomp FD`), an info pipe (`--info-fd FD`: the sandbox init's pid, whose process group
receives an interrupt) and, with allowed hosts, the proxy's socket at `PROXY_SOCKET` and
`inner.py` as the first program. Any argv can be wrapped — a `bash -lc` command, an MCP server,
a kernel (docs/security.md "The sandboxed kernel"). The mounts are `mounts.py`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from .mounts import FilesystemView

PROXY_SOCKET = "/run/penguin/proxy.sock"
PROXY_URL = "http://127.0.0.1:3128"
INNER_SCRIPT = str(Path(__file__).with_name("inner.py"))
NAMESPACE_FLAGS = (
    "--die-with-parent",
    "--new-session",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
)


def bwrap_argv(
    bwrap: str,
    view: FilesystemView,
    command: Sequence[str],
    *,
    seccomp_fd: int | None,
    info_fd: int | None = None,
    proxy_socket: str | None = None,
    cwd: str | None = None,
) -> list[str]:
    """`bwrap … -- command`. With `proxy_socket` (a host path), `inner.py` bridges the sandbox's
    127.0.0.1:3128 to it and loads the seccomp filter read from `seccomp_fd` itself; without it,
    bwrap loads the filter. `seccomp_fd=None`: the command loads the filter itself (a sandboxed
    kernel, once its own sockets are bound: `enclosing.py`), so neither does."""
    argv = [bwrap, *NAMESPACE_FLAGS, *view.args]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    if cwd is not None:
        argv += ["--chdir", cwd]
    if proxy_socket is None:
        filter_args = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
        return [*argv, *filter_args, "--", *command]
    argv += ["--ro-bind", proxy_socket, PROXY_SOCKET]
    inner = [sys.executable, "-I", "-S", INNER_SCRIPT, PROXY_SOCKET, str(seccomp_fd) if seccomp_fd is not None else "-"]
    return [*argv, "--", *inner, *command]


def sandbox_environment(
    env: Mapping[str, str], has_hosts: bool, through_proxy: Sequence[str] = ()
) -> dict[str, str]:
    """The environment a sandboxed process gets from `env`: `TMPDIR` its private /tmp, every
    inherited proxy setting removed (nothing outside is reachable anyway) and, with allowed
    hosts, the bridge's URL as the proxy. The sandbox's own loopback stays direct, except the
    names in `through_proxy` (a model endpoint on this machine, which only the proxy can reach)."""
    clean = {k: v for k, v in env.items() if k.upper() not in PROXY_VARIABLES}
    clean["TMPDIR"] = "/tmp"
    if not has_hosts:
        return clean
    local = ",".join(name for name in ("localhost", "127.0.0.1", "::1") if name not in through_proxy)
    return {
        **clean,
        "HTTP_PROXY": PROXY_URL,
        "HTTPS_PROXY": PROXY_URL,
        "http_proxy": PROXY_URL,
        "https_proxy": PROXY_URL,
        "NO_PROXY": local,
        "no_proxy": local,
    }


PROXY_VARIABLES = frozenset(
    {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY", "RSYNC_PROXY"}
)
