"""Best-effort Trace recording for the engine (docs/engine.md "Collaborators and settings" (the trace sink), docs/engine.md "Compaction" deferred rotation).

Owns the filter (never partials, never origin-tagged messages), the deferred rotation
(`rotate()`, then session_meta and the tool list, then the message) and the stderr logging
of sink failures (unless the sink reports them itself, as `TraceWriter` does). The file format is the trace package's business.
"""

from __future__ import annotations

import logging

from ..omni import OmniMessage, is_partial_payload
from .protocols import TraceSink

log = logging.getLogger(__name__)

__all__ = ["Recorder"]


class Recorder:
    def __init__(
        self,
        sink: TraceSink | None,
        *,
        session_meta: OmniMessage | None = None,
        tool_list: OmniMessage | None = None,
        rotation_pending: bool = False,
    ) -> None:
        self.sink = sink
        self.session_meta = session_meta
        self.tool_list = tool_list
        self.rotation_pending = rotation_pending

    def record(self, msg: OmniMessage) -> None:
        if self.sink is None or is_partial_payload(msg) or msg.origin:
            return
        if self.rotation_pending:
            self.rotation_pending = False
            try:
                rotate = getattr(self.sink, "rotate", None)
                if rotate is not None:
                    rotate()
                for head in (self.session_meta, self.tool_list):
                    if head is not None:
                        self.sink.write(head)
            except Exception as exc:  # recording is best effort: a trace failure never stops the Task
                log.warning("[trace] rotate failed: %s", exc)
        try:
            self.sink.write(msg)
        except Exception as exc:  # recording is best effort: a trace failure never stops the Task
            if not getattr(self.sink, "reports_failures", False):  # else the session tells the user once
                log.warning("[trace] write failed: %s", exc)
