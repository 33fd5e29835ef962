"""The approval router: the one place a notebook decides a tool call.

Owns the policy (the table in docs/notebook-runtime.md): a tool call is judged under the
approval mode of the cell that launched the Task or subagent that made it (`CellApproval`,
which outlives its cell: background subagents keep the approve function bound to it).

1. The launching mode decides by itself when it can (`_auto_decision`: deny-all, allow-all, the
   session's "always allow" set, read-only reads).
2. Otherwise a human is asked: in the launching cell while it runs; after it ended, in the
   running cell (inside the subagent's background card); with no cell running, denied.

A later cell's automatic modes never decide for an earlier cell's agents: the running cell only
lends its buttons. How a cell asks is `approval.CellAsker`'s job; which cell runs is the
kernel runtime's (`running` below).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ...environment.secret_files import credential_read_reason
from ...interfaces import ApprovalDecision, ApproveFn, Permission
from ...omni import OmniMessage
from .approval import CellAsker, tool_name_of
from .options import APPROVAL_MODES

Route = Literal["allow", "deny", "ask-launching-cell", "ask-running-cell"]


@dataclass
class CellApproval:
    """What a cell's agents are judged by: its mode (fixed when the cell starts), its session's
    "always allow" set, the tools' permissions, and how the cell asks while it runs."""

    mode: str
    always_allowed: set[str]
    permission_of: Callable[[str], Permission | None]
    asker: CellAsker
    workspace_dir: str | None = None  # reads outside it (and of credential files) are asked about
    scratchpad_dir: str | None = None  # the session's own scratchpad: the data root's one readable folder
    ended: bool = field(default=False)

    def __post_init__(self) -> None:
        if self.mode not in APPROVAL_MODES:
            raise ValueError(f"unknown approval mode {self.mode!r}")


def route(auto: ApprovalDecision | None, launching_cell_running: bool, a_cell_running: bool) -> Route:
    """The policy table: who decides, from what the launching mode decided by itself."""
    if auto is not None:
        return "allow" if auto == "allow" else "deny"
    if launching_cell_running:
        return "ask-launching-cell"
    return "ask-running-cell" if a_cell_running else "deny"


class ApprovalRouter:
    """Hands each cell its `ApproveFn` (`approve_fn`) and decides every call they make."""

    def __init__(self, running: Callable[[], CellApproval | None]) -> None:
        self._running = running

    def approve_fn(self, launcher: CellApproval) -> ApproveFn:
        """The approve function handed to `session.run` for a cell (and kept by the background
        subagents its Task launches)."""

        async def approve(tool_call: OmniMessage) -> ApprovalDecision:
            return await self.decide(launcher, tool_call)

        return approve

    def _auto_decision(
        self, launcher: CellApproval, tool_call: OmniMessage, reason: str | None
    ) -> ApprovalDecision | None:
        """What the launching cell's mode decides without a human; None when one must be asked.
        A read with a `reason` (a credential file, outside the workspace, a URL) is never allowed
        by read-only or "always allow" alone; allow-all still allows it."""
        mode = launcher.mode
        name = tool_name_of(tool_call)
        if mode == "deny-all":
            return "deny"
        if mode == "allow-all":
            return "allow"
        if reason is not None:
            return None
        if name in launcher.always_allowed:
            return "allow"
        if mode == "read-only":
            return self._read_only_decision(launcher, tool_call)
        return None

    @staticmethod
    def _read_reason(launcher: CellApproval, tool_call: OmniMessage) -> str | None:
        try:
            return credential_read_reason(tool_call, launcher.workspace_dir, launcher.scratchpad_dir)
        except Exception:
            return None

    @staticmethod
    def _read_only_decision(launcher: CellApproval, tool_call: OmniMessage) -> ApprovalDecision | None:
        """read-only: tools whose permission is `r` go ahead, everything else asks. Further
        checks of what a read touches (its arguments are in `tool_call`) belong here."""
        name = tool_name_of(tool_call)
        try:
            permission = launcher.permission_of(name)
        except Exception:
            permission = None
        return "allow" if permission == "r" else None

    async def decide(self, launcher: CellApproval, tool_call: OmniMessage) -> ApprovalDecision:
        running = self._running()
        launching_cell_running = not launcher.ended and running is launcher
        reason = None if launcher.mode in ("deny-all", "allow-all") else self._read_reason(launcher, tool_call)
        auto = self._auto_decision(launcher, tool_call, reason)
        where = route(auto, launching_cell_running, running is not None)
        if where == "ask-launching-cell":
            return await launcher.asker.ask(tool_call, launcher.always_allowed, reason=reason)
        if where == "ask-running-cell" and running is not None:
            return await running.asker.ask_here(tool_call, launcher.always_allowed, reason)
        return "allow" if where == "allow" else "deny"
