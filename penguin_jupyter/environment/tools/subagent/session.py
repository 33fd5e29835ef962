"""ManagedSubagentSession: one spawned child session driven round by round
(docs/subagents.md "The child stream" to docs/subagents.md "Rounds": the round pump).

Owns the pump (one `handle.run` per round as an asyncio task), the buffered origin-tagged
child messages (4096, oldest dropped) or, for background launches, the live message tap; the
unread direct-child text; the round's exit; the approval queue; the per-round settle watcher
(background completion reports); and `kill()`. Tools drive it through `collect.py`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ....interfaces import AbortSignal, ApproveFn, SubagentHandle
from ....omni import AbortPayload, OmniMessage, PartialTextPayload
from ...types import ToolFailed, ToolResult
from .approvals import ApprovalQueue
from .limits import MESSAGE_BUFFER_CAP, TEXT_BUFFER_CAP, TEXT_DROP_LABEL
from .text_buffer import CappedText
from .wake import WakeSignal

log = logging.getLogger(__name__)

MessageTap = Callable[[OmniMessage], None]


@dataclass(frozen=True)
class SubagentExit:
    status: Literal["completed", "failed"]
    note: str | None = None


def result_for_exit(exit_info: SubagentExit | None) -> ToolResult:
    """The finished round's result; a failed round is raised as `ToolFailed`."""
    if exit_info is None:
        return ToolResult(stop_reason="completed")
    if exit_info.status == "failed":
        raise ToolFailed(note=exit_info.note)
    return ToolResult(stop_reason=exit_info.status, note=exit_info.note)


class SubagentStartError(RuntimeError):
    pass


class ManagedSubagentSession:
    def __init__(self, handle: SubagentHandle) -> None:
        self.handle = handle
        self.last_used = time.monotonic()
        self.wake = WakeSignal()
        self.approvals = ApprovalQueue(self.wake)
        self._signal = AbortSignal()
        self._messages: deque[OmniMessage] = deque(maxlen=MESSAGE_BUFFER_CAP)
        self._text = CappedText(TEXT_BUFFER_CAP, TEXT_DROP_LABEL)
        self._tap: MessageTap | None = None
        self._running = False
        self._exit: SubagentExit | None = None
        self._killed = False
        self._task: asyncio.Task | None = None
        self._settle_watcher: Callable[[], None] | None = None

    # --- state -------------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.handle.session_id

    @property
    def running(self) -> bool:
        return self._running

    @property
    def pump_task(self) -> asyncio.Task | None:
        """The current round's task (a killed round disposes the child when it ends)."""
        return self._task

    @property
    def killed(self) -> bool:
        return self._killed

    @property
    def exit(self) -> SubagentExit | None:
        """The most recent round's exit (None before the first round ends)."""
        return self._exit

    @property
    def pending_approvals(self) -> int:
        return len(self.approvals)

    @property
    def has_pending_output(self) -> bool:
        return bool(self._messages) or not self._text.empty

    def take_meta(self) -> OmniMessage | None:
        """The child's origin-tagged session_meta once, when the handle offers it early."""
        take = getattr(self.handle, "take_session_meta", None)
        return take() if callable(take) else None

    # --- rounds ------------------------------------------------------------------------------

    def start_run(self, prompt: str) -> None:
        """Start one round in the background of the running loop."""
        if self._killed:
            raise SubagentStartError("subagent session disposed")
        if self._running:
            raise SubagentStartError("subagent is still running")
        self._running = True
        self._exit = None
        self._task = asyncio.get_running_loop().create_task(self._pump(prompt))

    def drain_messages(self) -> list[OmniMessage]:
        messages = list(self._messages)
        self._messages.clear()
        return messages

    def drain_text(self) -> str:
        return self._text.drain()

    # --- background launches -----------------------------------------------------------------

    def set_standing_approver(self, approve: ApproveFn) -> None:
        self.approvals.set_standing(approve)

    def set_message_tap(self, tap: MessageTap) -> None:
        """Forward child messages live from now on (flushing what is buffered first)."""
        backlog = self.drain_messages()
        self._tap = tap
        for message in backlog:
            tap(message)

    def on_settled(self, watcher: Callable[[], None]) -> None:
        """Call `watcher` at the end of every round until disarmed (now, if idle with an exit)."""
        self._settle_watcher = watcher
        if not self._running and self._exit is not None:
            asyncio.get_running_loop().call_soon(self._fire_settle_watcher)

    def disarm_settle_watcher(self) -> None:
        self._settle_watcher = None

    # --- cleanup -----------------------------------------------------------------------------

    def kill(self) -> None:
        """Abort the round, deny pending approvals, release the child session. Idempotent."""
        if self._killed:
            return
        self._killed = True
        self._settle_watcher = None
        self._signal.abort("subagent killed")
        self.approvals.deny_all()
        if not self._running:
            self.handle.dispose()
        self.wake.notify()

    # --- the pump ----------------------------------------------------------------------------

    async def _pump(self, prompt: str) -> None:
        wrote_text = False
        child_abort: str | None = None
        try:
            async for message in self.handle.run(prompt, signal=self._signal, approve=self.approvals.request):
                self._buffer(message)
                if message.origin is not None and len(message.origin) == 1:
                    payload = message.payload
                    if isinstance(payload, AbortPayload):
                        child_abort = payload.reason or "aborted"
                    elif (
                        isinstance(payload, PartialTextPayload)
                        and payload.event_type == "delta"
                        and payload.text
                    ):
                        wrote_text = True
                        self._text.append(payload.text)
                self.wake.notify()
            if child_abort is not None:
                self._exit = SubagentExit("failed", f"[subagent aborted: {child_abort}]")
            elif not wrote_text:
                self._exit = SubagentExit("completed", "[subagent finished without a text answer]")
            else:
                self._exit = SubagentExit("completed")
        except Exception as exc:  # the subagent's failure is its exit, reported to the parent
            self._exit = SubagentExit("failed", f"[subagent error: {exc}]")
        finally:
            self._running = False
            if self._killed:
                self.handle.dispose()
            self.wake.notify()
            self._fire_settle_watcher()

    def _buffer(self, message: OmniMessage) -> None:
        if self._tap is not None:
            try:
                self._tap(message)
            except Exception as exc:  # a listener's bug must not stop the subagent
                log.warning("[penguin] subagent message listener failed: %s", exc)
        else:
            self._messages.append(message)

    def _fire_settle_watcher(self) -> None:
        watcher = self._settle_watcher
        if watcher is not None and not self._killed:
            try:
                watcher()
            except Exception as exc:  # a listener's bug must not stop the subagent
                log.warning("[penguin] subagent completion report failed: %s", exc)
