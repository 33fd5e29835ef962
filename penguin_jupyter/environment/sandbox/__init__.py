"""The sandbox every process the agent starts can run in (docs/security.md "Sandbox").

bubblewrap builds the view (`mounts.py`: read everything but the credential locations, which
are hidden; write the workspace and a private /tmp; `.git` config and hooks, `.penguin/` and
`.env` read-only) and the namespaces (`bwrap.py`: no network, own PID namespace dying with
bwrap, no capabilities); `seccomp.py` closes Unix sockets; `proxy.py` (outside) and `inner.py`
(inside) let allowed hosts through. `support.py` says whether it can start here; `grants.py`
carries the approval layer's decision to the spawn; `command_sandbox.py` turns both into a
`SandboxPlan` and, per process, a start in the session's warm sandbox (`warm.py`, `warm_host.py`
inside) or a `SandboxLaunch` (`launch.py`) of its own. Any argv can be wrapped:
a command, an MCP server, a kernel (`kernel_sandbox/`, docs "The sandboxed kernel"); `enclosing.py` is the kernel's side.
"""

from .command_sandbox import SANDBOX_NOTE, CommandSandbox, SandboxConfig, SandboxPlan
from .grants import CommandCall, SandboxGrant, SandboxGrants
from .hosts import BadHost, HostRule, not_covered, parse_host, parse_hosts
from .launch import SandboxLaunch
from .mounts import FilesystemView, filesystem_view
from .support import SandboxSupport, sandbox_support

__all__ = [
    "SANDBOX_NOTE",
    "BadHost",
    "CommandCall",
    "CommandSandbox",
    "FilesystemView",
    "HostRule",
    "SandboxConfig",
    "SandboxGrant",
    "SandboxGrants",
    "SandboxLaunch",
    "SandboxPlan",
    "SandboxSupport",
    "filesystem_view",
    "not_covered",
    "parse_host",
    "parse_hosts",
    "sandbox_support",
]
