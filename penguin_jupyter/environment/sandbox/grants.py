"""How the approval layer tells a command how it may run: one grant per approved call.

Owns `SandboxGrant` (in the sandbox or not, and the hosts the approval added to the project's
allowed ones) and `SandboxGrants`, the ledger the host fills when it allows a call and the
command tools read when they spawn it, keyed by the call's id and its command (a subagent's call
reaches the host origin-tagged, with the same id and command; two calls that share both are
decided alike by the same rules). The decision itself is the
host's (`notebook/runtime/approval_router.py`); what a missing grant means is the command
sandbox's (`settings.py`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from .hosts import HostRule

MAX_GRANTS = 1000


@dataclass(frozen=True)
class SandboxGrant:
    sandboxed: bool
    hosts: tuple[HostRule, ...] = ()  # reachable besides the project's allowed hosts


def grant_key(tool_call_id: str, command: str) -> str:
    return f"{tool_call_id}\0{command}"


class SandboxGrants:
    """Thread-safe and bounded (the oldest grant goes first); a grant is taken once."""

    def __init__(self) -> None:
        self._grants: OrderedDict[str, list[SandboxGrant]] = OrderedDict()
        self._lock = threading.Lock()

    def give(self, tool_call_id: str, command: str, grant: SandboxGrant) -> None:
        key = grant_key(tool_call_id, command)
        with self._lock:
            self._grants.setdefault(key, []).append(grant)
            self._grants.move_to_end(key)
            while len(self._grants) > MAX_GRANTS:
                self._grants.popitem(last=False)

    def take(self, tool_call_id: str, command: str) -> SandboxGrant | None:
        key = grant_key(tool_call_id, command)
        with self._lock:
            waiting = self._grants.get(key)
            if not waiting:
                return None
            grant = waiting.pop(0)
            if not waiting:
                del self._grants[key]
            return grant
