"""PartialAggregator (docs/protocol.md "PartialAggregator"): folds `partial_*` fragments into complete messages.

Owns fragment bookkeeping only; renderers and trace tools use it to turn a live stream
back into the messages a Trace or a model context would hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import builders
from .models import (
    OmniMessage,
    PartialTextPayload,
    PartialThinkingPayload,
    PartialToolCallOutputPayload,
    PartialToolCallPayload,
    StopReason,
)

PartialPayload = (
    PartialTextPayload | PartialThinkingPayload | PartialToolCallPayload | PartialToolCallOutputPayload
)


@dataclass
class _Fragment:
    kind: str
    tool_call_id: str
    origin: list[str] | None
    body: list[str] = field(default_factory=list)
    name: str = ""
    images: list[str] | None = None
    stop_reason: StopReason = "completed"

    def apply(self, payload: PartialPayload) -> None:
        if isinstance(payload, PartialTextPayload):
            self.body.append(payload.text)
        elif isinstance(payload, PartialThinkingPayload):
            self.body.append(payload.thinking)
        elif isinstance(payload, PartialToolCallPayload):
            self.body.append(payload.arguments)
            if payload.name:
                self.name = payload.name
        else:
            self.body.append(payload.output)
            if payload.images:
                self.images = list(payload.images)
        self.stop_reason = payload.stop_reason

    def finalize(self) -> OmniMessage:
        text = "".join(self.body)
        if self.kind == "partial_text":
            msg = builders.assistant_text(text, self.stop_reason)
        elif self.kind == "partial_thinking":
            msg = builders.thinking(text, self.stop_reason)
        elif self.kind == "partial_tool_call":
            msg = builders.tool_call(self.name, text, self.tool_call_id, self.stop_reason)
        else:
            msg = builders.tool_call_output(text, self.tool_call_id, self.stop_reason, self.images)
        if self.origin:
            msg = msg.model_copy(update={"origin": list(self.origin)})
        return msg


class PartialAggregator:
    """Feed messages in stream order with `push`; each call returns what is now complete."""

    def __init__(self) -> None:
        self._open: dict[tuple[tuple[str, ...], str, str], _Fragment] = {}

    def push(self, msg: OmniMessage) -> list[OmniMessage]:
        payload = msg.payload
        if not isinstance(payload, PartialPayload):
            return [msg]
        call_id = getattr(payload, "tool_call_id", "")
        key = (tuple(msg.origin or ()), payload.type, call_id)
        out: list[OmniMessage] = []
        fragment = self._open.get(key)
        if payload.event_type == "start" and fragment is not None:
            out.append(self._open.pop(key).finalize())
            fragment = None
        if fragment is None:
            fragment = _Fragment(payload.type, call_id, msg.origin)
            self._open[key] = fragment
        fragment.apply(payload)
        if payload.event_type == "stop":
            out.append(self._open.pop(key).finalize())
        return out

    def flush(self) -> list[OmniMessage]:
        """Finalize every still-open fragment, in opening order."""
        out = [fragment.finalize() for fragment in self._open.values()]
        self._open.clear()
        return out
