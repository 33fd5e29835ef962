"""Rate-limited widget updates (docs/notebook.md "Rendering" cost limits).

Owns the update budget: one `ThrottledSetter` per active widget attribute sends at most
`MAX_UPDATES_PER_SECOND` values; values set in between are coalesced, and a flush timer on the
event loop guarantees the last value is always sent. Knows nothing about what the value means.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

MAX_UPDATES_PER_SECOND = 20
MIN_INTERVAL_S = 1.0 / MAX_UPDATES_PER_SECOND
# Streaming text blocks (assistant text, thinking, tool output) re-send their open widget's
# whole value on every update, so they update half as often: measured, this halves their value
# bytes and their share of iopub messages while 10 frames a second still reads as live.
TEXT_UPDATES_PER_SECOND = 10
TEXT_INTERVAL_S = 1.0 / TEXT_UPDATES_PER_SECOND
# A long streamed text updates when what is new is a share of what is shown (or a second passed):
# the number of updates, and so their envelopes, then depends on the text's length, not on how
# long it streams (docs/notebook-streaming.md "Two kinds of streamed block", its Rate paragraph).
TEXT_MAX_INTERVAL_S = 1.0


class ThrottledSetter:
    """`set(value)` → the widget's `attr` gets it now, or at most `min_interval_s` later
    (coalesced; 50 ms unless the caller asks for a slower rate). With `ready`, a value is sent
    `min_interval_s` after the last one only once `ready()` says it is worth sending, and at the
    latest `max_interval_s` after it."""

    def __init__(
        self,
        widget: object,
        attr: str = "value",
        loop: asyncio.AbstractEventLoop | None = None,
        *,
        min_interval_s: float = MIN_INTERVAL_S,
        ready: Callable[[], bool] | None = None,
        max_interval_s: float = TEXT_MAX_INTERVAL_S,
    ) -> None:
        self.widget = widget
        self.attr = attr
        self.min_interval_s = max(min_interval_s, MIN_INTERVAL_S)
        self.max_interval_s = max(max_interval_s, self.min_interval_s)
        self.ready = ready
        self._timer_at = 0.0
        self.sent_count = 0
        self._pending: Callable[[], object] | None = None
        self._has_pending = False
        self._last_sent = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None
        try:
            self._loop = loop or asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    def set(self, value: object) -> None:
        self.set_lazy(lambda: value)

    def set_lazy(self, make_value: Callable[[], object]) -> None:
        """Like `set`, but the value is computed only when it is actually sent."""
        self._pending = make_value
        self._has_pending = True
        interval = self.min_interval_s if self.ready is None or self.ready() else self.max_interval_s
        now = time.monotonic()
        wait = self._last_sent + interval - now
        if wait <= 0 or self._loop is None:
            self.flush()
        elif self._timer is None or self._timer_at > now + wait + 0.001:  # none yet, or a later one
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._loop.call_later(wait, self.flush)
            self._timer_at = now + wait

    def mark_sent(self) -> None:
        """Count the widget's current value as sent now (it went with the widget's `comm_open`)."""
        self._last_sent = time.monotonic()
        self.sent_count += 1

    def flush(self) -> None:
        """Send the pending value now (no-op when nothing is pending)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        make_value = self._pending
        if not self._has_pending or make_value is None:
            return
        self._pending, self._has_pending = None, False
        self._last_sent = time.monotonic()
        self.sent_count += 1
        setattr(self.widget, self.attr, make_value())
