"""How long a model endpoint may stay silent: the connect / first-response budget.

A request's first wait — from sending it to the endpoint's first response (HTTP headers, or the
first event where the SDK gives no earlier signal) — has its own limit, separate from the idle
timeout between chunks: `connect_timeout_ms` per attempt, and `answer_budget_ms` for a whole run
of consecutive unanswered attempts, the engine's reconnect waits between them included. So an
endpoint that accepts the connection and never answers costs at most `answer_budget_ms` (30 s
at the defaults: attempts of 10 s, 10 s and the 4 s left after the 2 s and 4 s reconnect waits),
with the engine's retry countdown shown between attempts. The attempt that exhausts the budget
reports a permanent failure, which ends the Task instead of climbing the rest of the ladder.

Owns that arithmetic (`AnswerBudget`); measuring the wait and building outcomes is the model's.
See docs/model-requests.md ("Dead endpoints").
"""

from __future__ import annotations

import time
from collections.abc import Callable

DEFAULT_CONNECT_TIMEOUT_MS = 10_000
DEFAULT_ANSWER_BUDGET_MS = 30_000
# An unanswered attempt more than this long after the previous one starts a fresh run (a new
# Task later on, not the next rung of the reconnect ladder, whose longest wait is 30 s).
STREAK_GAP_S = 45.0


class AnswerBudget:
    """Consecutive unanswered attempts share one budget; any answer resets it."""

    def __init__(
        self, connect_timeout_ms: int, budget_ms: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.connect_timeout_s = connect_timeout_ms / 1000 if connect_timeout_ms > 0 else None
        self.budget_s = budget_ms / 1000 if budget_ms > 0 else None
        self._clock = clock
        self._streak_start: float | None = None
        self._last_silence_end: float | None = None
        self.attempts = 0

    def begin_attempt(self) -> float | None:
        """Seconds this attempt may wait for a first response (None: no limit). Starts a new run
        unless the previous unanswered attempt ended within `STREAK_GAP_S`."""
        now = self._clock()
        if self._last_silence_end is None or now - self._last_silence_end > STREAK_GAP_S:
            self._streak_start, self.attempts = now, 0
        self.attempts += 1
        window = self.connect_timeout_s
        if self.budget_s is not None and self._streak_start is not None:
            left = max(0.0, self._streak_start + self.budget_s - now)
            window = left if window is None else min(window, left)
        return window

    def answered(self) -> None:
        self._streak_start = self._last_silence_end = None
        self.attempts = 0

    def unanswered(self) -> bool:
        """Record an attempt that got no response; True when the run's budget is spent (the
        caller reports a permanent failure and the next attempt starts a fresh run)."""
        now = self._clock()
        spent = (
            self.budget_s is not None
            and self._streak_start is not None
            and now - self._streak_start >= self.budget_s - 0.001
        )
        if spent:
            self.answered()
        else:
            self._last_silence_end = now
        return spent
