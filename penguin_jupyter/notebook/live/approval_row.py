"""The Approve / Deny / Always-allow row of an approval card, and the Future a click resolves.

Owns `ApprovalRow` (the buttons: Approve, Deny, "Always allow <tool>" for this session and, when
the router offers one, "Save to project: <the exact rule>"; a click may arrive on a kernel
subshell thread, so it only schedules the answer on the loop) and `RuleOffer` (that rule and how
to save it). Asking — which channel, waiting for the click, stdin — is runtime/approval.py's;
where the row sits in the card is the view's.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .live_shared import plain_button, plain_hbox, plain_html

if TYPE_CHECKING:
    from ...state.approval_rules import Rule

Choice = Literal["allow", "deny", "always", "save"]

DECISION_LABELS: dict[Choice, str] = {
    "allow": "approved",
    "deny": "denied",
    "always": "approved (always for this tool)",
    "save": "approved (rule saved to the project)",
}
SAVE_PREFIX = "Save to project: "


@dataclass(frozen=True)
class RuleOffer:
    """The allow rule a card offers to save to the project, and the function that saves it."""

    rule: Rule
    save: Callable[[], Rule]


class ApprovalRow:
    """Approve / Deny / Always-allow buttons whose click resolves `future` on `loop`."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        tool_name: str,
        reason: str | None = None,
        offer: RuleOffer | None = None,
    ) -> None:
        self.loop = loop
        self.future: asyncio.Future[Choice] = loop.create_future()
        self.approve_button = plain_button("Approve", button_style="success", icon="check")
        self.deny_button = plain_button("Deny", button_style="danger", icon="times")
        self.always_button = plain_button(f"Always allow {tool_name}", width="auto")
        self.always_button.tooltip = f"Always allow {tool_name} for the rest of this session (not saved)"
        self.save_button = None
        buttons = [self.approve_button, self.deny_button, self.always_button]
        if offer is not None:
            self.save_button = plain_button(f"{SAVE_PREFIX}{offer.rule.text()}", width="auto")
            self.save_button.tooltip = f"Approve, and add this rule to the project's approval_rules.toml: {offer.rule.text()}"
            self.save_button.on_click(lambda _b: self._clicked("save"))
            buttons.append(self.save_button)
        self.status = plain_html(f"<b>{html.escape(reason)}</b>" if reason else "")
        self.widget = plain_hbox([*buttons, self.status], wrap=True)  # a long rule wraps, never cut
        self.approve_button.on_click(lambda _b: self._clicked("allow"))
        self.deny_button.on_click(lambda _b: self._clicked("deny"))
        self.always_button.on_click(lambda _b: self._clicked("always"))

    def _clicked(self, choice: Choice) -> None:
        self.loop.call_soon_threadsafe(self._resolve, choice)

    def _resolve(self, choice: Choice) -> None:
        if self.future.done():
            return
        self.future.set_result(choice)
        self.close(DECISION_LABELS[choice])

    def withdraw(self, note: str) -> None:
        """Nobody can answer any more (interrupt, Stop, the cell ended): deny, say why (on the loop)."""
        if not self.future.done():
            self.future.set_result("deny")
        self.close(note)

    def close(self, note: str) -> None:
        for button in (self.approve_button, self.deny_button, self.always_button, self.save_button):
            if button is not None:
                button.disabled = True
        self.status.value = f"<i>{note}</i>"
