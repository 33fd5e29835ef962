"""A finished Task's transcript output, re-shown when its undo state changes.

Owns `TranscriptDisplay`: the static transcript's display handle, its bundle and redactor, and
`mark(state, note)`, which sets the bundle's `undo` entry (available / blocked / undone, see
transcript_bundle.undo_state) and shows the cell's transcript again — by display id (the page
that ran the Task; not for "blocked", which a later Task's end sets and which must not add an
output update to that Task's cell) and, when the frontend bridge is connected, through its
`set_transcript` op on the Task's cell (a reloaded page, where display ids are gone) so the saved
notebook keeps the mark. The Undo button itself is the labextension's (render.ts); see docs/undo.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...redaction import Redactor
from ..link.frontend_bridge import BridgeError
from ..transcript.transcript_bundle import TRANSCRIPT_MIME, transcript_mimebundle

if TYPE_CHECKING:
    from IPython.display import DisplayHandle

    from ..link.frontend_bridge import NotebookBridge

log = logging.getLogger(__name__)
MARK_TIMEOUT_S = 10.0


@dataclass
class TranscriptDisplay:
    handle: DisplayHandle | None  # None where nothing was displayed by id
    bundle: Mapping[str, object]
    redactor: Redactor
    cell_id: str | None
    task_id: str

    def mimebundle(self, state: str, note: str = "") -> dict[str, object]:
        self.bundle = {**self.bundle, "undo": {"task_id": self.task_id, "state": state, "note": note}}
        return transcript_mimebundle(self.bundle, redactor=self.redactor)

    async def mark(self, state: str, note: str, bridge: NotebookBridge | None, *, by_display: bool = True) -> None:
        """Show the transcript again in `state`; `by_display=False` leaves the running cell's
        output stream alone (only the bridge marks it, as at a later Task's end)."""
        data = self.mimebundle(state, note)
        if self.handle is not None and by_display:
            try:
                self.handle.update(data, raw=True)
            except Exception as exc:  # the undo mark is extra: logged, the undo itself stands
                log.warning("[penguin] could not update the transcript: %s", exc)
        if bridge is not None and bridge.connected and self.cell_id:
            try:
                await bridge.request(
                    "set_transcript", cell_id=self.cell_id, mime=TRANSCRIPT_MIME, data=data, timeout_s=MARK_TIMEOUT_S
                )
            except BridgeError as exc:
                log.info("[penguin] the transcript of cell %s was not marked: %s", self.cell_id, exc)
