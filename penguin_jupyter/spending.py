"""Budgets that stop a Task before it spends (docs/cost.md "Budgets").

Owns `Budgets` (the four caps: this Task's `--budget`, the project's `budget_usd_per_session`
and `budget_usd_per_day`, the administrator's `max_usd_per_day`) and `SpendMeter`, the
`llm.spend.SpendGate` a session and everything it runs (its turns, compaction, subagents, the
vision describer, the title) share: before a request it admits the estimate against every cap
— this Task's and this session's spend are kept here, today's in the data root's ledger
(`state/spend_ledger.py`, shared by every kernel of the user) — and afterwards it counts what
the request cost. A request whose price is unknown is refused while any cap is set (a budget
that cannot be checked must not be passed silently). Showing the figures is the host's job.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from .llm.spend import RequestEstimate, SpendTicket
from .prices import format_usd
from .state import spend_ledger


@dataclass(frozen=True)
class Budgets:
    """USD caps; None means no cap. `*_source` names where a cap was set, for the stop line."""

    task_usd: float | None = None
    session_usd: float | None = None
    day_usd: float | None = None
    policy_day_usd: float | None = None
    config_source: str = "the project config"
    policy_source: str = "the administrator's policy"

    def any(self) -> bool:
        return any(
            cap is not None for cap in (self.task_usd, self.session_usd, self.day_usd, self.policy_day_usd)
        )


@dataclass
class TaskSpend:
    """What the running (or last) Task spent: priced USD and the requests with no known price."""

    usd: float = 0.0
    requests: int = 0
    unpriced_requests: int = 0

    def add(self, usd: float | None) -> None:
        self.requests += 1
        if usd is None:
            self.unpriced_requests += 1
        else:
            self.usd += usd


@dataclass
class SpendMeter:
    """One session's budgets and spend (a subagent shares its parent's meter). `root` is the
    data root whose ledger holds today's spend (None: no daily accounting, e.g. a bare core)."""

    root: Path | None
    budgets: Budgets = field(default_factory=Budgets)
    task: TaskSpend = field(default_factory=TaskSpend)
    session: TaskSpend = field(default_factory=TaskSpend)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def begin_task(self, task_budget_usd: float | None) -> None:
        """A new Task starts: its spend from zero, under `task_budget_usd` (None: no cap)."""
        with self._lock:
            self.task = TaskSpend()
            self.budgets = replace(self.budgets, task_usd=task_budget_usd)

    def today(self) -> spend_ledger.DaySpend | None:
        """Today's spend by every kernel of the user (None: no data root, or unreadable)."""
        if self.root is None:
            return None
        try:
            return spend_ledger.today(self.root)
        except OSError:
            return None

    # --- SpendGate ------------------------------------------------------------------------------

    def admit(self, estimate: RequestEstimate) -> SpendTicket | str:
        usd = estimate.usd
        budgets = self.budgets
        if budgets.any() and usd is None:
            return (
                f"model {estimate.model_id} has no known price, so a budget cannot be checked; set "
                "price = {input = …, cached = …, output = …} (USD per million tokens) in its [[models]] entry"
            )
        with self._lock:
            refusal = self._in_memory_refusal(usd or 0.0)
        if refusal is not None:
            return refusal
        return self._reserve_today(usd)

    def _in_memory_refusal(self, usd: float) -> str | None:
        task_cap, session_cap = self.budgets.task_usd, self.budgets.session_usd
        if task_cap is not None and self.task.usd + usd > task_cap:
            return _stop_line(f"this cell's budget of {format_usd(task_cap)}", self.task.usd, usd)
        if session_cap is not None and self.session.usd + usd > session_cap:
            where = f"budget_usd_per_session in {self.budgets.config_source}"
            return _stop_line(
                f"the session budget of {format_usd(session_cap)} ({where})", self.session.usd, usd
            )
        return None

    def _day_cap(self) -> tuple[float, str] | None:
        """The tighter of the two daily caps, with how the stop line names it."""
        caps: list[tuple[float, str]] = []
        if self.budgets.day_usd is not None:
            caps.append(
                (
                    self.budgets.day_usd,
                    f"today's budget of {format_usd(self.budgets.day_usd)} "
                    f"(budget_usd_per_day in {self.budgets.config_source})",
                )
            )
        if self.budgets.policy_day_usd is not None:
            caps.append(
                (
                    self.budgets.policy_day_usd,
                    f"the administrator's daily cap of "
                    f"{format_usd(self.budgets.policy_day_usd)} ({self.budgets.policy_source})",
                )
            )
        return min(caps, key=lambda cap: cap[0]) if caps else None

    def _reserve_today(self, usd: float | None) -> SpendTicket | str:
        cap = self._day_cap()
        if self.root is None:
            if cap is not None:
                return f"{cap[1]} cannot be checked: no data root keeps today's spend"
            return _Ticket(self, None, None)
        try:
            ticket, today = spend_ledger.reserve(self.root, usd or 0.0, None if cap is None else cap[0])
        except OSError as exc:
            if cap is not None:  # fails closed: a daily cap that cannot be read stops the request
                return f"{cap[1]} cannot be checked: {exc}"
            return _Ticket(self, None, None)
        if ticket is None and cap is not None:
            spent = today.spent_usd + today.reserved_usd
            return _stop_line(cap[1], spent, usd or 0.0, spent_what="spent today by all your kernels")
        return _Ticket(self, ticket, today.day)

    def count(self, usd: float | None) -> None:
        """A completed request's cost joins this Task's and this session's spend."""
        with self._lock:
            self.task.add(usd)
            self.session.add(usd)


@dataclass
class _Ticket:
    """An admitted request: settled with its cost, or released (each once)."""

    meter: SpendMeter
    ledger_ticket: str | None
    day: str | None
    done: bool = False

    def settle(self, usd: float | None) -> None:
        if self.done:
            return
        self.done = True
        self.meter.count(usd)
        if self.meter.root is not None:
            try:
                spend_ledger.settle(self.meter.root, self.ledger_ticket, usd, self.day)
            except OSError:
                pass  # today's total misses one request; the next admission reads what is there

    def release(self) -> None:
        if self.done:
            return
        self.done = True
        if self.meter.root is not None and self.ledger_ticket is not None:
            try:
                spend_ledger.release(self.meter.root, self.ledger_ticket, self.day)
            except OSError:
                pass  # a reservation left behind expires with this process


def _stop_line(budget: str, spent: float, next_usd: float, spent_what: str = "spent") -> str:
    return f"{budget}: {format_usd(spent)} {spent_what}, the next request could cost up to {format_usd(next_usd)}"
