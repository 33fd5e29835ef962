"""The live state of one session's model context, shared by the engine and its compactor.

Owns `ContextState`: the current LLM, the carry-over and pending summary waiting for the next
run, the turn and token counters compaction is triggered by, and the two transitions on it
(a turn's token usage; a fresh context after compaction). The loop that drives it is
`context_engine.py`; compaction is `compaction.py`; the resume snapshot is
`settings.EngineState`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..interfaces import LLMInterface
from ..omni import OmniMessage, TokenCounts, TokenUsagePayload, payload_of
from .protocols import CreateLLM
from .settings import EngineState

__all__ = ["ContextState"]


@dataclass
class ContextState:
    llm: LLMInterface
    carry_over: list[OmniMessage] = field(default_factory=list)
    pending_summary: OmniMessage | None = None
    session_turns: int = 0
    from_compaction: bool = False
    session_tokens: TokenCounts = field(default_factory=TokenCounts)
    last_request_total: int = 0

    @classmethod
    def resumed(cls, llm: LLMInterface, state: EngineState) -> ContextState:
        return cls(
            llm=llm,
            carry_over=list(state.carry_over),
            pending_summary=state.pending_summary,
            session_turns=state.session_turns,
            from_compaction=state.from_compaction,
            session_tokens=state.session_tokens,
            last_request_total=state.last_request_total,
        )

    def snapshot(self, pending_trace_rotation: bool) -> EngineState:
        return EngineState(
            carry_over=list(self.carry_over),
            pending_summary=self.pending_summary,
            session_turns=self.session_turns,
            from_compaction=self.from_compaction,
            session_tokens=self.session_tokens,
            last_request_total=self.last_request_total,
            pending_trace_rotation=pending_trace_rotation,
        )

    def observe_usage(self, msg: OmniMessage) -> None:
        """A `token_usage` event: the request's total and the session's running counts."""
        usage = payload_of(msg, TokenUsagePayload)
        self.last_request_total = usage.request.total
        self.session_tokens = usage.session

    def count_turn(self, msg: OmniMessage) -> None:
        """A model turn's `token_usage`: observed, and one more turn in this context."""
        self.observe_usage(msg)
        self.session_turns += 1

    def start_new_context(self, create_llm: CreateLLM) -> None:
        """After compaction: a fresh LLM continuing from the session totals, counters reset."""
        self.llm = create_llm(self.session_tokens)
        self.session_turns = 0
        self.last_request_total = 0
        self.from_compaction = True

    def stash(self, repairs: list[OmniMessage]) -> None:
        """Put messages in front of the carry-over (a failed summary's tool-call repairs)."""
        if repairs:
            self.carry_over = [*repairs, *self.carry_over]
