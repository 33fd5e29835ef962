"""The view protocol a cell renders through: the live widget view and the plain-text view.

Owns only the contract (`CellView`); `live_view.LiveView` and `plain_view.PlainView` implement
it, the cell (`cell.py`) is its only caller, and the words of event notices come from
`view_notices.py` for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ...omni import OmniMessage
from ..transcript.cell_sources import CellPreview
from .approval_row import ApprovalRow


class CellView(Protocol):
    def handle(self, msg: OmniMessage) -> None:
        """A message of the cell's own Task (subagents' ones carry `origin`)."""

    def handle_background(self, msg: OmniMessage) -> None:
        """A live message of a background subagent (always origin-tagged)."""

    def show_approval(
        self,
        tool_call: OmniMessage,
        row: ApprovalRow | None,
        *,
        background: bool = False,
        preview: CellPreview | None = None,
        touches: Sequence[str] = (),
    ) -> None:
        """The call waiting for a human, with its button row (None: asked elsewhere or not at all).
        `background`: asked for an earlier cell's background subagent. `preview`: the cell a
        notebook tool's card shows (its current source). `touches`: the paths that land elsewhere
        than they read (`CallEffect.where_lines`: through a symlink, outside the workspace)."""

    def show_decision_reason(self, decision: OmniMessage, reason: str) -> None:
        """Why an `approval_decision` was made without a click (`allowed by rule 3 (…) in …`)."""

    def show_note(self, text: str) -> None: ...

    def show_cost(self, text: str) -> None:
        """What the Task has cost so far (transcript/cost_line.py), after each request."""

    def finish(self, status_text: str) -> None: ...

    def display_object(self) -> object | None:
        """What to display when the cell starts (None: the view prints as it goes)."""

    def close(self) -> None:
        """Release the view after the static transcript replaced it."""
