"""What `%penguin usage` says about money (docs/cost.md "Where cost is shown").

Owns `spend_lines`: the last Task's and the session's cost, today's spend by every kernel of the
user (the data root's ledger), and the budgets in force. The figures are the session's
`SpendMeter`'s; formatting one amount is `prices.format_usd`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...prices import format_usd
from ..transcript.cost_line import cost_text, task_cost

if TYPE_CHECKING:
    from ...spending import SpendMeter


def spend_lines(meter: SpendMeter | None, kernel_budget_usd: float | None) -> list[str]:
    lines: list[str] = []
    if meter is not None and (meter.task.requests or meter.session.requests):
        lines.append(f"last Task {cost_text(task_cost(meter))}")
    if meter is not None:
        today = meter.today()
        if today is not None:
            unpriced = f" (+{today.unpriced_requests} of unknown price)" if today.unpriced_requests else ""
            lines.append(
                f"today ({today.day}): {format_usd(today.spent_usd)} over {today.requests} requests{unpriced}, "
                "all your kernels"
            )
    lines.extend(_budget_lines(meter, kernel_budget_usd))
    return lines


def _budget_lines(meter: SpendMeter | None, kernel_budget_usd: float | None) -> list[str]:
    budgets = meter.budgets if meter is not None else None
    caps = [
        ("each cell's Task (%penguin budget)", kernel_budget_usd),
        ("this session (budget_usd_per_session)", budgets.session_usd if budgets else None),
        ("today (budget_usd_per_day)", budgets.day_usd if budgets else None),
        ("today, the administrator's cap (max_usd_per_day)", budgets.policy_day_usd if budgets else None),
    ]
    set_caps = [f"{label}: {format_usd(usd)}" for label, usd in caps if usd is not None]
    return ["budgets: " + "; ".join(set_caps)] if set_caps else ["budgets: none (a cell's --budget USD caps its Task)"]
