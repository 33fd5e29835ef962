"""ApprovalQueue: how a managed child session's tool approvals reach the parent's human
(docs/subagents.md "Rounds": the approval queue).

The child's approve callback only queues a request. Requests are handed out one at a time to a
sink: the window sink of an active run_subagent / input_subagent call (precedence), else the
standing sink of a background launch. A window that ends mid-question leaves its request
queued; a late answer still applies (first decision wins). A sink that raises counts as deny;
`deny_all` (kill/dispose) denies everything pending.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from ....interfaces import ApprovalDecision, ApproveFn
from ....omni import OmniMessage
from .wake import WakeSignal, resolve_soon


@dataclass
class PendingApproval:
    call: OmniMessage
    future: asyncio.Future
    settled: bool = False


@dataclass
class _WindowSink:
    approve: ApproveFn
    detached: asyncio.Event = field(default_factory=asyncio.Event)


async def _ask(approve: ApproveFn, call: OmniMessage) -> ApprovalDecision:
    try:
        return await approve(call)
    except Exception:  # the Human boundary: an approve callback that throws denies
        return "deny"


def _decision(done: asyncio.Future) -> ApprovalDecision:
    return "deny" if done.cancelled() else done.result()


class ApprovalQueue:
    def __init__(self, wake: WakeSignal) -> None:
        self._wake = wake
        self._pending: list[PendingApproval] = []
        self._window: _WindowSink | None = None
        self._standing: ApproveFn | None = None
        self._pumping = False
        self._answers: set[asyncio.Future] = set()
        self.closed = False

    def __len__(self) -> int:
        return len(self._pending)

    async def request(self, call: OmniMessage) -> ApprovalDecision:
        """The approve callback handed to the child session."""
        if self.closed:
            return "deny"
        future = asyncio.get_running_loop().create_future()
        self._pending.append(PendingApproval(call, future))
        self._wake.notify()
        self._start_pump()
        return await future

    def attach_window(self, approve: ApproveFn) -> Callable[[], None]:
        """Attach a window sink (replacing any other); returns its detach function."""
        sink = _WindowSink(approve)
        self._window = sink
        self._start_pump()

        def detach() -> None:
            if self._window is sink:
                self._window = None
            sink.detached.set()

        return detach

    def set_standing(self, approve: ApproveFn) -> None:
        self._standing = approve
        self._start_pump()

    def deny_all(self) -> None:
        self.closed = True
        for request in list(self._pending):
            self._settle(request, "deny")

    def _settle_from(self, request: PendingApproval, done: asyncio.Future[ApprovalDecision]) -> None:
        self._settle(request, _decision(done))

    def _settle(self, request: PendingApproval, decision: ApprovalDecision) -> None:
        if request.settled:
            return
        request.settled = True
        if request in self._pending:
            self._pending.remove(request)
        resolve_soon(request.future, decision)
        self._wake.notify()

    def _start_pump(self) -> None:
        if not self._pumping and self._pending and (self._window or self._standing):
            self._pumping = True
            task = asyncio.ensure_future(self._pump())
            self._answers.add(task)
            task.add_done_callback(self._answers.discard)

    async def _pump(self) -> None:
        try:
            while (self._window is not None or self._standing is not None) and self._pending:
                request = self._pending[0]
                window = self._window
                if window is None:
                    assert self._standing is not None
                    self._settle(request, await _ask(self._standing, request.call))
                    continue
                answer = asyncio.ensure_future(_ask(window.approve, request.call))
                self._answers.add(answer)
                answer.add_done_callback(self._answers.discard)
                answer.add_done_callback(functools.partial(self._settle_from, request))
                detached = asyncio.ensure_future(window.detached.wait())
                try:
                    await asyncio.wait({answer, detached}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    detached.cancel()
                if request.settled:
                    continue
                if self._window is not None and self._window is not window:
                    continue  # a newer window took over: ask there
                if self._standing is not None:
                    continue  # the window left; the standing sink answers next
                break  # detached unanswered: stays queued for the next sink
        finally:
            self._pumping = False
