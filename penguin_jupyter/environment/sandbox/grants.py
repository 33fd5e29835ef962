"""How the approval layer tells a command how it may run: one grant per approved call.

Owns `SandboxGrant` (in the sandbox or not, and the hosts the approval added to the project's
allowed ones) and `SandboxGrants`, the ledger the host fills when it allows a call and the
command tools read when they spawn it, keyed by the call as approved (`CommandCall`: its id, its
command, whether it asked to leave the sandbox and the hosts it named — a subagent's call reaches
the host origin-tagged, with all of these unchanged, and two calls that share them all are
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


@dataclass(frozen=True)
class CommandCall:
    """What a grant is keyed by: the call as the approval layer saw it."""

    tool_call_id: str
    command: str
    unsandboxed: bool = False
    hosts: tuple[str, ...] = ()  # the `network_hosts` it named, normalized (`HostRule.text()`)


class SandboxGrants:
    """Thread-safe and bounded (the oldest grant goes first); a grant is taken once."""

    def __init__(self) -> None:
        self._grants: OrderedDict[CommandCall, list[SandboxGrant]] = OrderedDict()
        self._lock = threading.Lock()

    def give(self, key: CommandCall, grant: SandboxGrant) -> None:
        with self._lock:
            self._grants.setdefault(key, []).append(grant)
            self._grants.move_to_end(key)
            while len(self._grants) > MAX_GRANTS:
                self._grants.popitem(last=False)

    def take(self, key: CommandCall) -> SandboxGrant | None:
        with self._lock:
            waiting = self._grants.get(key)
            if not waiting:
                return None
            grant = waiting.pop(0)
            if not waiting:
                del self._grants[key]
            return grant
