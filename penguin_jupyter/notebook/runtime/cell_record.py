"""What one `%%penguin` cell keeps of its Task for the static transcript.

Owns the list of complete messages shown in the cell (its own Task's, and background
subagents' that arrived while it ran), the last token usage, how the Task ended (aborted,
failed, interrupted) and the status word of the transcript. Rendering is the views' job and
the bundle is `transcript_bundle.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...omni import AbortPayload, OmniMessage, TextPayload, TokenUsagePayload, is_partial_payload, user_text


@dataclass
class CellRecord:
    prompt: str
    messages: list[OmniMessage] = field(default_factory=list)
    usage: OmniMessage | None = None
    aborted: bool = False
    interrupted: bool = False
    failed: str | None = None
    seen_hops: set[str] = field(default_factory=set)  # subagents with messages in this cell
    background_hops: set[str] = field(default_factory=set)  # background subagents shown here

    def __post_init__(self) -> None:
        if not self.messages:
            self.messages.append(user_text(self.prompt))  # the engine never echoes its input

    def remember(self, msg: OmniMessage) -> None:
        """Keep a complete message (partials only stream); note main-Task usage and aborts."""
        if not is_partial_payload(msg):
            self.messages.append(msg)
        if msg.origin:
            self.seen_hops.add(msg.origin[0])
        elif isinstance(msg.payload, TokenUsagePayload):
            self.usage = msg
        elif isinstance(msg.payload, AbortPayload):
            self.aborted = True

    def status(self) -> str:
        """The transcript's status: aborted, failed, or the last answer's stop reason."""
        if self.aborted or self.interrupted:
            return "aborted"
        if self.failed:
            return "failed"
        for msg in reversed(self.messages):
            payload = msg.payload
            if isinstance(payload, TextPayload) and not msg.origin and payload.role == "assistant":
                return payload.stop_reason or "completed"
        return "completed"
