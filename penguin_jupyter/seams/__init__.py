"""The seams: every place penguin_jupyter relies on another library beyond its public API, or
replaces something on another library's object, in this one package (docs/seams.md).

Owns the `Seam` record and the registry of all of them: what each relies on, which kind it is,
the check that runs on the user's machine before its first use, whether it is on and why, and
what happens when it is off. The code that touches each internal lives in the module that
declares it (`llm_sdk`, `kernel`, `threads`, `polars_udfs`, `matplotlib_show`, `task_heap`,
`dask_clients`, `tornado_routing`); the
callers elsewhere use only that module's functions. Leaves to the callers what they do when a
seam is off (each says it in `when_off`).

Kinds:

* **fast path** — performance only. Off when its check fails (one logged line) or when
  `PENGUIN_SDK_INTERNALS=off`; the slower public path runs instead.
* **rule** — behaviour the project promises (one HTTP request per attempt, a credential the SDK
  accepts). On unless its check fails; then every `%%penguin` cell says so in one line
  (`off_lines`).
* **protection** — a security property (redaction, no-fetch, approval routing). Each sits on a
  public seam or fails closed: when its check fails, the protection is achieved another way or
  the work it guards is refused, and every `%%penguin` cell says so in one line.

The check of a seam runs once per process, when the seam is first used (or when `%penguin status`
lists it); a use may still find one object out of shape and turn the seam off (`turn_off`). A
seam that goes off is logged once (`logging`, warning); a host that tells the user itself — the
notebook, whose cells show `off_lines` — logs rules and protections at info instead
(`host_tells_user`), so the line is not said twice.
Imports only the standard library, so any layer may import it; which layers may import which
seam module is `tests/test_layering.py`'s (the kernel seams: `notebook/` only).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "SEAM_MODULES",
    "SWITCH",
    "NotInUse",
    "Seam",
    "all_seams",
    "declare",
    "host_tells_user",
    "internals_allowed",
    "off_lines",
    "status_lines",
]

log = logging.getLogger(__name__)

Kind = Literal["fast path", "rule", "protection"]
# The switch that turns every internal-based fast path off (rules and protections stay as they are).
SWITCH = "PENGUIN_SDK_INTERNALS"
_OFF_VALUES = ("off", "0", "false", "no")
# Every module of this package that declares seams (`%penguin status` imports them all).
SEAM_MODULES = (
    "llm_sdk",
    "kernel",
    "threads",
    "polars_udfs",
    "matplotlib_show",
    "task_heap",
    "dask_clients",
    "tornado_routing",
)


def internals_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """False when `PENGUIN_SDK_INTERNALS` says off (`off`, `0`, `false`, `no`)."""
    value = (os.environ if environ is None else environ).get(SWITCH, "")
    return value.strip().lower() not in _OFF_VALUES


class NotInUse(Exception):
    """Raised by a check when the seam has nothing to do here (its library is not loaded, no kernel)."""


Check = Callable[[], "str | None"]  # None: the shape is as expected; else one line saying what is not


@dataclass(eq=False)
class Seam:
    """One reliance on another library: `what` it uses, its `kind`, its `check`, and `when_off`."""

    name: str
    what: str
    kind: Kind
    when_off: str
    check: Check
    on: bool | None = None  # None: not decided yet
    reason: str = ""  # why it is off, or a remark on how it is on
    not_in_use: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def enabled(self) -> bool:
        """Whether the seam may be used: decided on the first call (the check runs then)."""
        if self.on is None:
            self._decide()
        return bool(self.on)

    def _decide(self) -> None:
        with self._lock:
            if self.on is not None:
                return
            if self.kind == "fast path" and not internals_allowed():
                self.on, self.reason = False, f"{SWITCH}=off"
                return
            try:
                problem = self.check()
            except NotInUse as absent:
                self.not_in_use = str(absent)
                return
            except Exception as exc:  # a check that cannot even run says the shape is not what it reads
                problem = f"{type(exc).__name__}: {exc}"
            self.not_in_use = ""
            if problem is None:
                self.on = True
                return
            self.on, self.reason = False, problem
        _log_off(self)

    def turn_off(self, reason: str) -> None:
        """A use found an object out of the checked shape: the seam is off from now on (logged once)."""
        with self._lock:
            if self.on is False:
                return
            self.on, self.reason = False, reason
        _log_off(self)

    def verify(self, problem: str | None) -> bool:
        """A use checked the very object it is about to touch: with a `problem` the seam is off from
        now on; without, it is on (unless it was turned off already). Returns whether it is on."""
        if problem is not None:
            self.turn_off(problem)
            return False
        with self._lock:
            if self.on is None:
                self.on = True
        return bool(self.on)

    def note(self, remark: str) -> None:
        """A remark on how the seam is on (e.g. found under another name), shown by `%penguin status`."""
        self.reason = remark

    def off_line(self) -> str:
        return f"penguin: {self.name} is off ({self.reason}): {self.when_off}"

    def status_line(self) -> str:
        if self.on is None:
            self.enabled()
        if self.on is None:
            return f"{self.name}: not in use ({self.not_in_use})"
        if self.on:
            return f"{self.name}: on" + (f" ({self.reason})" if self.reason else "")
        return f"{self.name}: off — {self.reason}; {self.when_off}"

    def reset(self) -> None:
        """Forget the decision (tests: a changed environment or a simulated upgrade)."""
        self.on, self.reason, self.not_in_use = None, "", ""


_SEAMS: dict[str, Seam] = {}
_HOST = {"tells": False}


def host_tells_user() -> None:
    """The host shows `off_lines` to the user itself (the notebook's cells)."""
    _HOST["tells"] = True


def _log_off(seam: Seam) -> None:
    quiet = _HOST["tells"] and seam.kind != "fast path"
    log.log(logging.INFO if quiet else logging.WARNING, seam.off_line())


def declare(name: str, *, what: str, kind: Kind, when_off: str, check: Check) -> Seam:
    """Register one seam (once per name: a module imported twice keeps the first)."""
    seam = _SEAMS.get(name)
    if seam is None:
        seam = _SEAMS[name] = Seam(name, what, kind, when_off, check)
    return seam


def all_seams() -> list[Seam]:
    """Every seam of every module of this package, in declaration order."""
    from importlib import import_module

    for module in SEAM_MODULES:
        import_module(f"{__name__}.{module}")
    return list(_SEAMS.values())


def status_lines() -> list[str]:
    """One line per seam: on, off and why (with what that changes), or not in use here."""
    return [seam.status_line() for seam in all_seams()]


def off_lines() -> list[str]:
    """The line each rule or protection that is off says in a `%%penguin` cell (checked already,
    or turned off by a use; fast paths only change performance and say nothing there)."""
    return [seam.off_line() for seam in _SEAMS.values() if seam.kind != "fast path" and seam.on is False]
