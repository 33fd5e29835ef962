"""The spending seam between a model and whoever keeps budgets (docs/cost.md "Budgets").

Owns `RequestEstimate` (what one request could cost at most, before it is sent: the input it
will send at the input price, plus the output cap at the output price) and the `SpendGate`
protocol a `GenerativeModel` consults before every request (`admit`: a ticket to send with, else
the one line saying which budget it could cross) and the ticket it settles when the request
completed (with its cost) or releases when it did not. Every
request goes through it — the session's turns, compaction, subagents and the vision describer
— because every one is a `GenerativeModel`. What the budgets are and where spend is kept is
the gate's business (`penguin_jupyter.spending`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..prices import PER_TOKENS, ModelPrice

# The output bound assumed for a request sent without an output cap (a one-shot side request):
# the session default's `max_tokens` (state/system_config.py DEFAULT_MAX_TOKENS).
UNCAPPED_OUTPUT_TOKENS = 32_000


@dataclass(frozen=True)
class RequestEstimate:
    """At most what one request can cost: `usd` is None when the model's price is unknown."""

    model_id: str
    input_tokens: int
    max_output_tokens: int
    price: ModelPrice | None

    @property
    def usd(self) -> float | None:
        if self.price is None:
            return None
        return (
            self.input_tokens * self.price.input + self.max_output_tokens * self.price.output
        ) / PER_TOKENS


class SpendTicket(Protocol):
    """An admitted request: exactly one of `settle` (it completed) or `release` (it did not)
    is called."""

    def settle(self, usd: float | None) -> None:
        """The request completed and cost `usd` (None: its price is unknown)."""
        ...

    def release(self) -> None:
        """The request did not complete (failed, aborted, timed out)."""
        ...


class SpendGate(Protocol):
    """Budgets, as a model sees them."""

    def admit(self, estimate: RequestEstimate) -> SpendTicket | str:
        """A ticket to send the request with, or the one line that says which budget it could cross."""
        ...
