"""Engine configuration values: compaction settings, their fixed texts, and the resume state.

Owns `CompactionSettings`, the default compaction prompt (docs/state.md "The system prompt"), the retry guidance of a
rejected summary (docs/engine.md "Compaction"), the effective-threshold rule (docs/engine.md "Compaction", applied by the session
which knows the model's context window), `compactability_of`, and `EngineState` — the
replayed state a resumed session hands to a new engine. The loop itself is elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..omni import OmniMessage, TokenCounts
from ..omni.models import CompactionMode

__all__ = [
    "DEFAULT_COMPACTION_PROMPT",
    "SUMMARY_RETRY_GUIDANCE",
    "Compactability",
    "CompactionSettings",
    "EngineState",
    "compactability_of",
    "effective_context_threshold",
]

DEFAULT_COMPACTION_PROMPT = (
    "Summarize the task transcript above. The summary will replace the transcript as its only "
    "record, so include everything needed to continue the task — the original request, current "
    "state, next steps, and any learnings. Do not call any tools; reply with text only, in exactly "
    "this format and nothing after it:\n\n[summary]put the summary text here...[/summary]"
)

SUMMARY_RETRY_GUIDANCE = (
    "Your previous reply was not a usable summary. Reply again with text only, no tool calls, "
    "in exactly this format and nothing after it:\n\n[summary]put the summary text here...[/summary]"
)

Compactability = Literal["unsupported", "ok", "just_compacted", "empty"]

_DEFAULT_WINDOW = 128000
_MIN_WINDOW = 4096
_WINDOW_RESERVE = 2048


@dataclass(frozen=True)
class CompactionSettings:
    """When and how the context is compacted (docs/engine.md "Compaction"). `max_context_length` and
    `max_session_turns` ≤ 0 disable that trigger; an unknown `mode` falls back to summarize."""

    max_context_length: int = 256000
    max_session_turns: int = -1
    mode: CompactionMode = "summarize"
    prompt: str = DEFAULT_COMPACTION_PROMPT

    def __post_init__(self) -> None:
        if self.mode not in ("summarize", "discard"):
            object.__setattr__(self, "mode", "summarize")


def effective_context_threshold(configured: int, context_window: int | str | None) -> int:
    """`configured` when ≤ 0, else `min(configured, W − 2048)` with W the model's window when it
    is a number ≥ 4096, else 128000 (so 32768 → 30720, unknown → 125952)."""
    if configured <= 0:
        return configured
    window = context_window if isinstance(context_window, int) and context_window >= _MIN_WINDOW else None
    return min(configured, (window or _DEFAULT_WINDOW) - _WINDOW_RESERVE)


def compactability_of(configured: bool, session_turns: int, from_compaction: bool) -> Compactability:
    """docs/engine.md "Compaction": unsupported (no capability) · ok (turns > 0) · just_compacted · empty."""
    if not configured:
        return "unsupported"
    if session_turns > 0:
        return "ok"
    return "just_compacted" if from_compaction else "empty"


@dataclass
class EngineState:
    """The engine state that survives between runs; a resumed session passes the replayed one
    as `ContextEngine(initial_state=…)` (the LLM must already hold the committed history via its
    own `set_history`). `ContextEngine.snapshot()` returns the current one."""

    carry_over: list[OmniMessage] = field(default_factory=list)
    pending_summary: OmniMessage | None = None
    session_turns: int = 0
    from_compaction: bool = False
    session_tokens: TokenCounts = field(default_factory=TokenCounts)
    last_request_total: int = 0
    pending_trace_rotation: bool = False
