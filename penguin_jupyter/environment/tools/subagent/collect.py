"""collect_window: the yield window shared by run_subagent and input_subagent (docs/subagents.md "Rounds").

Repeatedly passes the buffered origin-tagged child messages through and emits the unread
direct-child text as the calling tool's own deltas, with the call's approve attached as the
window approval sink. Ends when the round finishes, the call's signal aborts, or the window
elapses, then drains once more. Deciding the result is the caller's job.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from ....omni import OmniMessage
from ...types import ToolExecutionContext
from ..common import delta
from .session import ManagedSubagentSession


async def collect_window(
    session: ManagedSubagentSession, yield_ms: int, ctx: ToolExecutionContext
) -> AsyncIterator[OmniMessage]:
    signal = ctx.signal
    detach = session.approvals.attach_window(ctx.approve) if ctx.approve is not None else None
    deadline = time.monotonic() + yield_ms / 1000
    try:
        while True:
            for message in session.drain_messages():
                yield message
            text = session.drain_text()
            if text:
                yield delta(ctx, text)
            if not session.running or (signal is not None and signal.aborted):
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            if session.has_pending_output:
                continue  # output arrived while suspended in a yield
            await session.wake.wait(remaining, signal)
        for message in session.drain_messages():
            yield message
        tail = session.drain_text()
        if tail:
            yield delta(ctx, tail)
    finally:
        if detach is not None:
            detach()
