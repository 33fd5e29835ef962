"""`plt.show()` inside `run_python` code: the figures go to the model (docs/seams.md).

Owns `capture_show`: while a `run_python` call runs, `matplotlib.pyplot.show` called *on that
call's worker thread* turns the new figures into images for the model instead of drawing them
into the notebook cell (where the model never sees them). matplotlib has no per-thread hook for
`show`, so the function is replaced on the `pyplot` module — one wrapper, put in place when the
first call starts and taken out when the last one ends (if it is still the one in place) — and
any other thread calling it gets matplotlib's own `show`. The seam `matplotlib.show` (rule)
checks `pyplot.show` is a function before it is wrapped. Off: `plt.show()` in the agent's code
draws into the cell as usual, and the model gets the figures left open when the call ends.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import Any

from . import NotInUse, declare


def _check() -> str | None:
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        raise NotInUse("matplotlib.pyplot not imported")
    return None if callable(getattr(plt, "show", None)) else "matplotlib.pyplot.show is not a function"


SHOW = declare(
    "matplotlib.show",
    what="matplotlib.pyplot.show, wrapped while run_python calls run (their worker threads only)",
    kind="rule",
    when_off="plt.show() in the agent's code draws into the cell; the model gets the figures left open",
    check=_check,
)

_lock = threading.Lock()
_capturers: dict[int, Callable[[], None]] = {}
_installed: dict[str, Any] = {}  # "module", "original", "wrapper" while in place


def capture_show(on_show: Callable[[], None]) -> Callable[[], None]:
    """Until the returned undo is called, `plt.show()` on this thread calls `on_show` instead."""
    import matplotlib.pyplot as plt  # the code is about to import it anyway

    if not SHOW.enabled():
        return lambda: None
    ident = threading.get_ident()
    with _lock:
        _capturers[ident] = on_show
        if not _installed:
            original = plt.show

            @functools.wraps(original)
            def show(*args: Any, **kwargs: Any) -> Any:
                capture = _capturers.get(threading.get_ident())
                return capture() if capture is not None else original(*args, **kwargs)

            _installed.update(module=plt, original=original, wrapper=show)
            plt.show = show

    def undo() -> None:
        with _lock:
            _capturers.pop(ident, None)
            if _capturers or not _installed:
                return
            if getattr(_installed["module"], "show", None) is _installed["wrapper"]:
                _installed["module"].show = _installed["original"]
            _installed.clear()

    return undo
