"""How a Task's cost reads, wherever tokens are shown (docs/cost.md "Where cost is shown").

Owns `task_cost(meter)` (the figures a bundle keeps: this Task's and this session's USD and the
requests whose price is unknown) and `cost_text` (`cost: $0.0123 this Task · $0.45 session`,
or "price unknown"), used by the live header, the static transcript (HTML and plain text) and
`%penguin usage`. Pure formatting: the figures come from the session's `SpendMeter`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypedDict

from ...prices import format_usd

if TYPE_CHECKING:  # the meter's module pulls in the model client; readers of bundles stay light
    from ...spending import SpendMeter


class TaskCost(TypedDict):
    task_usd: float
    session_usd: float
    unpriced_requests: int


def task_cost(meter: SpendMeter | None) -> TaskCost | None:
    """This Task's and this session's spend, or None without a meter (no cost known)."""
    if meter is None:
        return None
    return {
        "task_usd": meter.task.usd,
        "session_usd": meter.session.usd,
        "unpriced_requests": meter.task.unpriced_requests,
    }


def read_task_cost(value: object) -> TaskCost | None:
    """A saved bundle's cost entry, checked (anything unusable: None)."""
    if not isinstance(value, Mapping):
        return None
    task, session, unpriced = (
        value.get("task_usd"),
        value.get("session_usd"),
        value.get("unpriced_requests", 0),
    )
    if not isinstance(task, int | float) or not isinstance(session, int | float):
        return None
    if (
        isinstance(task, bool)
        or isinstance(session, bool)
        or not all(math.isfinite(v) and v >= 0 for v in (task, session))
    ):
        return None
    if not isinstance(unpriced, int) or isinstance(unpriced, bool) or unpriced < 0:
        unpriced = 0
    return {"task_usd": float(task), "session_usd": float(session), "unpriced_requests": unpriced}


def cost_text(cost: TaskCost | None) -> str:
    """`cost: $0.0123 this Task · $0.45 session`; a Task whose requests have no known price says
    "price unknown" (never $0); a mix names the unpriced requests."""
    if cost is None:
        return ""
    unpriced = cost["unpriced_requests"]
    task = cost["task_usd"]
    if unpriced and not task:
        return "cost: price unknown"
    text = f"cost: {format_usd(task)} this Task · {format_usd(cost['session_usd'])} session"
    if unpriced:
        text += f" (+{unpriced} request{'s' if unpriced != 1 else ''} of unknown price)"
    return text
