"""The sandbox's part of the approval policy (docs/notebook-runtime.md "The approval policy").

Owns `CellSandbox` (what a cell knows of the sandbox: whether it can start here, whether the
administrator's policy requires it, the project's allowed hosts, the kernel's grant ledger),
`cell_sandbox` (a cell's effective mode: `auto` acts as `ask` where no sandbox can start, with
one line the first time a kernel meets that), and the answers the router asks for:

* `sandbox_refusal` — the required sandbox denies `unsandboxed: true`, and every command when
  it cannot start;
* `sandbox_reason` — why `auto` must ask about a command: it set `unsandboxed: true` or names
  hosts the project does not allow;
* `auto_allows` — what `auto` allows with no card: a command (it runs sandboxed) and a read (as
  `read-only`). File writes keep their usual card: `write_file` runs in the kernel, outside the
  sandbox, and a folder a concurrent command turns into a symlink after the decision would take
  the write elsewhere;
* `grant_for` / `sandbox_statement` — how an allowed command runs (the grant handed to the
  spawn through `environment/sandbox/grants.py`) and how the card and the transcript say so.

In a sandboxed kernel ("Python 3 (penguin sandbox)", `kernel_sandbox/`) the kernel itself is in
the sandbox: `auto` also allows with no card the tools that act only in the kernel and its
notebook (`run_python`, the notebook tools) and file writes (the kernel's own view refuses what
the sandbox does not allow, wherever the path leads when it is written), every command runs in
the kernel's sandbox (in any mode), a command that asks to leave it or to reach a host the
kernel was not started with is denied without a card (nothing could grant it), and the first
cell says, once, that the kernel and the user's own cells are confined (`kernel_note`).
What those tools show renders live in the user's JupyterLab, outside the sandbox: unless the
kernel's provisioner judged that JupyterLab hardened (`KernelSandbox.browser_hardened`), `auto`
keeps `run_python`'s and the notebook tools' cards as in a normal kernel (`sandbox_reason` says
why), and the first cell's line says so and how to harden it. Commands and file writes stay
without a card there: what they produce reaches the page only through those tools (a written
file JupyterLab opens is rendered untrusted), and the sandbox holds them either way.

Which tool runs a command, writes files or acts only in the kernel is read from its declaration
(the `ShellCommand` and `WritesPath` roles, `in_kernel`). The rest of the policy (rules, modes,
who is asked) is `approval_router.py`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ...environment.registry import declaration_of
from ...environment.sandbox import (
    CommandCall,
    HostRule,
    SandboxGrant,
    SandboxGrants,
    SandboxSupport,
    not_covered,
    parse_host,
    sandbox_support,
)
from ...environment.sandbox.enclosing import KernelSandbox, kernel_sandbox
from ...interfaces import Permission
from ...omni import OmniMessage, ToolCallPayload, read_call_arguments

AUTO = "auto"
NO_SANDBOX_NOTE = "penguin: no sandbox here ({reason}): --approve auto acts as ask (every command asks)"
REQUIRED_NO_SANDBOX_NOTE = (
    "penguin: the administrator's policy ({path}) requires the sandbox, which cannot start here "
    "({reason}): commands are refused"
)
KERNEL_NOTE = (
    "penguin: this kernel runs in the penguin sandbox, and so do your own cells: they can write only "
    "{workspace} and /tmp, cannot read your credentials (~/.ssh, ~/.aws, …) or other sessions, and "
    "reach only {network}; under --approve auto, run_python, notebook edits and file writes need no card"
)
OPEN_BROWSER_KERNEL_NOTE = (
    "penguin: this kernel runs in the penguin sandbox, and so do your own cells (writes: {workspace} and "
    "/tmp; network: {network}); but its JupyterLab is not known to be hardened ({reason}), so under "
    "--approve auto run_python and the notebook tools still ask (commands and file writes do not); "
    'to harden it: docs/security.md "The sandboxed kernel"'
)
OPEN_BROWSER_REASON = (
    "asked: this kernel's JupyterLab is not known to be hardened ({reason}), and what {tool} shows "
    "would run in your page there"
)
BROKEN_KERNEL_NOTE = (
    "penguin: this kernel was started in the penguin sandbox, but {problem}: it is treated as not "
    "sandboxed (--approve auto acts as ask)"
)
IN_KERNEL_STATEMENT = "in the sandboxed kernel (writes: the workspace and /tmp; network: {network})"


@dataclass(frozen=True)
class CellSandbox:
    support: SandboxSupport
    grants: SandboxGrants
    required_by: str = ""  # the policy file, when it requires the sandbox
    allowed_hosts: tuple[HostRule, ...] = ()

    @property
    def required(self) -> bool:
        return bool(self.required_by)

    @property
    def kernel(self) -> KernelSandbox | None:
        """This kernel's own sandbox, when it runs in one with its walls up."""
        return self.support.kernel if self.support.available else None


def cell_sandbox(
    mode: str,
    required_by: str,
    grants: SandboxGrants,
    allowed_hosts: Callable[[], tuple[HostRule, ...]],
    announced: set[str],
    *,
    auto_rules: bool = False,
) -> tuple[str, CellSandbox, str | None]:
    """(the cell's effective mode, its sandbox, the one line to show once per kernel). The
    probe runs only when the sandbox matters: `auto`, `auto` rules, a policy that requires it, or
    a kernel started in the sandbox (which says so at its first cell, whatever the mode)."""
    if mode != AUTO and not required_by and not auto_rules and kernel_sandbox() is None:
        return mode, CellSandbox(SandboxSupport(False, "not needed"), grants), None
    support = sandbox_support()
    try:
        hosts = allowed_hosts()
    except Exception:  # a bad [sandbox] table: the session start reports it, one line
        hosts = ()
    sandbox = CellSandbox(support, grants, required_by, hosts)
    kernel_line = kernel_note(announced)
    if support.available or (mode != AUTO and not required_by):  # an auto rule asks, on its card
        return mode, sandbox, kernel_line
    note = (
        REQUIRED_NO_SANDBOX_NOTE.format(path=required_by, reason=support.reason)
        if required_by
        else NO_SANDBOX_NOTE.format(reason=support.reason)
    )
    shown = None if note in announced else note
    announced.add(note)
    return ("ask" if mode == AUTO else mode), sandbox, kernel_line or shown


def kernel_note(announced: set[str]) -> str | None:
    """The line a sandboxed kernel shows at its first cell (None elsewhere, or once shown)."""
    kernel = kernel_sandbox()
    if kernel is None:
        return None
    if kernel.confined and kernel.browser_hardened:
        note = KERNEL_NOTE.format(workspace=_shown(kernel.workspace), network=kernel.network_text())
    elif kernel.confined:
        note = OPEN_BROWSER_KERNEL_NOTE.format(
            workspace=_shown(kernel.workspace), network=kernel.network_text(), reason=kernel.browser_open
        )
    else:
        note = BROKEN_KERNEL_NOTE.format(problem=kernel.problem)
    shown = None if note in announced else note
    announced.add(note)
    return shown


def _shown(path: str) -> str:
    """`path` with the home folder as `~`."""
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path == home or path.startswith(home + os.sep) else path


def _arguments(tool_call: OmniMessage) -> dict[str, object]:
    """The call's arguments (`omni.read_call_arguments`); unreadable ones are none (the tool
    refuses the call)."""
    payload = tool_call.payload
    parsed = read_call_arguments(payload.arguments) if isinstance(payload, ToolCallPayload) else {}
    return parsed if isinstance(parsed, dict) else {}


def _command_argument(tool_call: OmniMessage) -> str | None:
    """The argument the call's tool declares as its shell command (`ShellCommand`), or None."""
    payload = tool_call.payload
    return declaration_of(payload.name).roles.command if isinstance(payload, ToolCallPayload) else None


def is_command(tool_call: OmniMessage) -> bool:
    return _command_argument(tool_call) is not None


def _in_kernel(sandbox: CellSandbox | None, tool_call: OmniMessage) -> bool:
    """A tool whose effects stay in this kernel, which runs in the sandbox: one that acts only in
    the kernel and its notebook (`in_kernel`), or a file write (the kernel's own view refuses
    what the sandbox does not allow, wherever the path leads when it is written)."""
    payload = tool_call.payload
    if sandbox is None or sandbox.kernel is None or not isinstance(payload, ToolCallPayload):
        return False
    declaration = declaration_of(payload.name)
    return declaration.declared and (declaration.in_kernel or bool(declaration.roles.writes))


def open_browser_reason(sandbox: CellSandbox | None, tool_call: OmniMessage) -> str | None:
    """Why `auto` asks about a kernel tool that may change what renders live (not a read:
    `run_python`, the notebook edits and runs) in a sandboxed kernel whose JupyterLab is not known
    to be hardened (the card says it; the decision is `auto_allows`'), or None."""
    payload = tool_call.payload
    kernel = sandbox.kernel if sandbox is not None else None
    if kernel is None or kernel.browser_hardened or not isinstance(payload, ToolCallPayload):
        return None
    declaration = declaration_of(payload.name)
    if not declaration.in_kernel or declaration.permission == "r":
        return None
    return OPEN_BROWSER_REASON.format(reason=kernel.browser_open, tool=payload.name)


def _asked_hosts(arguments: dict[str, object]) -> tuple[HostRule, ...]:
    """The `network_hosts` the call names (a bad entry is left out: the tool refuses the call)."""
    raw = arguments.get("network_hosts")
    hosts: list[HostRule] = []
    for entry in raw if isinstance(raw, list) else []:
        try:
            hosts.append(parse_host(entry))
        except ValueError:
            continue
    return tuple(dict.fromkeys(hosts))


def _unsandboxed(arguments: dict[str, object]) -> bool:
    return arguments.get("unsandboxed") is True


def runs_sandboxed(sandbox: CellSandbox | None, mode: str, tool_call: OmniMessage) -> bool:
    """A call the sandbox holds whatever it names: a command this cell will run in the sandbox
    (`auto`, the required sandbox, a sandboxed kernel), where a word naming a credential file
    reads nothing (the location is hidden); in a sandboxed kernel also a tool of the kernel and a
    file write, whose path the kernel's own view judges when it is opened."""
    if _in_kernel(sandbox, tool_call):
        return True
    if sandbox is None or not sandbox.support.available or not is_command(tool_call):
        return False
    return (mode == AUTO or sandbox.required or sandbox.kernel is not None) and not _unsandboxed(_arguments(tool_call))


def sandbox_refusal(sandbox: CellSandbox | None, tool_call: OmniMessage) -> str | None:
    """The administrator's required sandbox: a command that cannot run in it is denied. In a
    sandboxed kernel, a command that asks to leave it or for a host it cannot reach is denied."""
    if sandbox is None or not is_command(tool_call):
        return None
    if sandbox.kernel is not None:
        return _kernel_refusal(sandbox.kernel, _arguments(tool_call))
    if not sandbox.required:
        return None
    if not sandbox.support.available:
        return (
            f"denied by the administrator's policy ({sandbox.required_by}): the sandbox is required "
            f"and cannot start here ({sandbox.support.reason})"
        )
    if _unsandboxed(_arguments(tool_call)):
        return (
            f"denied by the administrator's policy ({sandbox.required_by}): the sandbox is required, "
            "so unsandboxed: true is refused"
        )
    return None


def _kernel_refusal(kernel: KernelSandbox, arguments: dict[str, object]) -> str | None:
    if _unsandboxed(arguments):
        return "denied: this kernel runs in the penguin sandbox, so nothing it starts can leave it (unsandboxed: true)"
    missing = not_covered(_asked_hosts(arguments), kernel.hosts)
    if missing:
        return (
            f"denied: this kernel's sandbox reaches only {kernel.network_text()}; "
            f"{', '.join(rule.text() for rule in missing)} cannot be added while it runs (list it in the "
            "project's [sandbox] allowed_hosts and restart the kernel)"
        )
    return None


def sandbox_reason(sandbox: CellSandbox | None, tool_call: OmniMessage) -> str | None:
    """Why `auto` asks about a command (shown on the card), or None."""
    if sandbox is None or not is_command(tool_call):
        return None
    arguments = _arguments(tool_call)
    if _unsandboxed(arguments):
        return "asked: runs outside the sandbox (unsandboxed: true) with full access to your files and network"
    allowed = sandbox.kernel.hosts if sandbox.kernel is not None else sandbox.allowed_hosts
    missing = not_covered(_asked_hosts(arguments), allowed)
    if not missing:
        return None
    hosts = ", ".join(rule.text() for rule in missing)
    return f"asked: needs network access to {hosts} (not among the project's allowed hosts)"


def auto_allows(
    sandbox: CellSandbox | None, tool_call: OmniMessage, permission_of: Callable[[str], Permission | None]
) -> bool:
    """What `auto` allows with no card once `sandbox_reason` found nothing to ask about."""
    if _in_kernel(sandbox, tool_call) and open_browser_reason(sandbox, tool_call) is None:
        return True
    if is_command(tool_call):
        return sandbox is not None and sandbox.support.available
    payload = tool_call.payload
    # (a permission that cannot be read raises: the router then asks, saying so)
    permission = permission_of(payload.name) if isinstance(payload, ToolCallPayload) else None
    return permission == "r"


def rule_sandbox_reason(sandbox: CellSandbox | None, tool_call: OmniMessage, mode: str) -> str | None:
    """Why an `auto` rule cannot run this call sandboxed with no card (then it asks), or None."""
    if sandbox is None or not sandbox.support.available:
        reason = sandbox.support.reason if sandbox is not None else "none configured"
        return f"asked: an auto rule matches, but no sandbox can start here ({reason})"
    return None if mode == AUTO else sandbox_reason(sandbox, tool_call)  # auto has it already


def grant_for(sandbox: CellSandbox | None, mode: str, tool_call: OmniMessage, *, by_rule: bool = False) -> SandboxGrant:
    """How an allowed command runs: in the sandbox under `auto` or an `auto` rule (unless the
    call set `unsandboxed` and was approved) or when the policy requires it, with the hosts it
    named."""
    arguments = _arguments(tool_call)
    if sandbox is None:
        return SandboxGrant(False)
    chose_sandbox = (mode == AUTO or by_rule) and sandbox.support.available and not _unsandboxed(arguments)
    if sandbox.required or chose_sandbox:
        return SandboxGrant(True, _asked_hosts(arguments))
    return SandboxGrant(False)


def give_grant(
    sandbox: CellSandbox | None, mode: str, tool_call: OmniMessage, *, by_rule: bool = False
) -> SandboxGrant | None:
    """Record the grant of an allowed command for its spawn; None for other tools."""
    payload = tool_call.payload
    if sandbox is None or not is_command(tool_call) or not isinstance(payload, ToolCallPayload):
        return None
    key_name = _command_argument(tool_call)
    command = _arguments(tool_call).get(key_name) if key_name is not None else None
    grant = grant_for(sandbox, mode, tool_call, by_rule=by_rule)
    arguments = _arguments(tool_call)
    key = CommandCall(
        payload.tool_call_id,
        command if isinstance(command, str) else "",
        _unsandboxed(arguments),
        tuple(rule.text() for rule in _asked_hosts(arguments)),
    )
    sandbox.grants.give(key, grant)
    return grant


def kernel_statement(sandbox: CellSandbox | None, tool_call: OmniMessage) -> str | None:
    """What the card and the transcript add for a tool allowed in the sandboxed kernel."""
    if sandbox is None or sandbox.kernel is None or not (_in_kernel(sandbox, tool_call) or is_command(tool_call)):
        return None
    return IN_KERNEL_STATEMENT.format(network=sandbox.kernel.network_text())


def sandbox_statement(sandbox: CellSandbox | None, grant: SandboxGrant) -> str:
    """What the card and the transcript add for an allowed command."""
    kernel = sandbox.kernel if sandbox is not None else None
    if kernel is not None:
        return IN_KERNEL_STATEMENT.format(network=kernel.network_text())
    if not grant.sandboxed:
        return "outside the sandbox"
    hosts = (*(sandbox.allowed_hosts if sandbox is not None else ()), *grant.hosts)
    network = ", ".join(dict.fromkeys(rule.text() for rule in hosts)) or "none"
    return f"in the sandbox (writes: the workspace and /tmp; network: {network})"
