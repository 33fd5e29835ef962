"""Paced teardown of a finished live view (docs/notebook.md "Rendering" cost limits).

Owns `close_widgets_paced`, `close_widgets_now` and `widget_tree`, the one way live widgets are
closed (every widget a Task made is closed when it ends, docs/notebook.md "Rendering"). When a Task ends, the display update that puts the static transcript
in place of the live view already removes its widgets from the page; what is left is to close
their comms, so the kernel and the frontend free the models. Each close is one `comm_close`
iopub message, and a long Task has a few hundred models (its widgets, their layouts and styles):
closed at once they are a burst far above the update budget. Here they are queued and closed
`CLOSE_BATCH` at a time (more for a backlog) every `CLOSE_INTERVAL_S` on the event loop (one queue for the kernel, so
the teardowns of several Tasks share the budget). Without a running loop they close at once.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable

import ipywidgets as widgets

from .live_shared import is_shared

CLOSE_BATCH = 10
CLOSE_INTERVAL_S = 0.5  # 20 comm_close messages a second for one Task's teardown
# A backlog (Tasks ending faster than 20 models a second close: Run All of quick cells makes
# about 25 a second) closes faster, an eighth of it per batch, up to 50 (100 a second): it
# drains in a few seconds instead of growing, still a tenth of jupyter_server's 1,000/s limit.
MAX_CLOSE_BATCH = 50
BACKLOG_SHARE = 8
# The first batch waits a full second: the end of a Task is already a burst (the last updates,
# the final tool card, the display update), and closes must not land in the same second.
START_DELAY_S = 1.0

_queue: deque[widgets.Widget] = deque()
_timer: asyncio.TimerHandle | None = None
_timer_loop: asyncio.AbstractEventLoop | None = None


def widget_tree(roots: Iterable[widgets.Widget]) -> list[widgets.Widget]:
    """`roots`, their descendants and the layouts/styles they use, each once, parents first
    (without the models `live_shared` keeps for every view)."""
    found: dict[int, widgets.Widget] = {}
    pending = list(roots)
    while pending:
        widget = pending.pop()
        if id(widget) in found or is_shared(widget):
            continue
        found[id(widget)] = widget
        pending.extend(getattr(widget, "children", ()) or ())
        for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
            if isinstance(part, widgets.Widget):
                pending.append(part)
    return list(found.values())


def close_widgets_now(roots: Iterable[widgets.Widget]) -> None:
    """Close `roots` and everything under them at once: for the few widgets a live view replaces
    while the Task runs (an approval row once decided, a rewritten text block). Off the page, the
    paced teardown at the end would no longer find them."""
    for widget in widget_tree(roots):
        widget.close()


def close_widgets_paced(roots: Iterable[widgets.Widget], last: Iterable[widgets.Widget] = ()) -> None:
    """Close `roots` and everything under them, a batch at a time (see the module docstring),
    then the models in `last` (the retired shared layouts and styles those widgets used)."""
    global _timer, _timer_loop
    final = list(last)
    tree = [w for w in widget_tree(roots) if not any(w is model for model in final)] + final
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        for widget in tree:
            widget.close()
        return
    _queue.extend(tree)
    if _timer is None or _timer_loop is not loop:  # (a timer of a closed loop never fires)
        _timer, _timer_loop = loop.call_later(START_DELAY_S, _close_batch, loop), loop


def _close_batch(loop: asyncio.AbstractEventLoop) -> None:
    global _timer
    _timer = None
    batch = min(MAX_CLOSE_BATCH, max(CLOSE_BATCH, -(-len(_queue) // BACKLOG_SHARE)))
    for _ in range(min(batch, len(_queue))):
        _queue.popleft().close()
    if _queue:
        _timer = loop.call_later(CLOSE_INTERVAL_S, _close_batch, loop)
