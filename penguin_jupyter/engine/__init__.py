"""The context engine (docs/engine.md): the agent loop between an LLM and an Environment.

Public names: `ContextEngine`, `CompactionSettings`, `EngineState` (resume state),
`TraceSink` / `BackgroundNotices` / `NoticeQueue` (seams the session plugs in),
`reconnect_delay_ms`, the fixed texts `DEFAULT_COMPACTION_PROMPT` and
`SUMMARY_RETRY_GUIDANCE`, and the helpers `effective_context_threshold` and
`compactability_of`. Sessions, traces on disk and tools live in their own packages.
"""

from .context_engine import ContextEngine, MessageStream
from .protocols import BackgroundNotices, CreateLLM, FoldInputImages, NoticeQueue, TraceSink
from .settings import (
    DEFAULT_COMPACTION_PROMPT,
    SUMMARY_RETRY_GUIDANCE,
    CompactionSettings,
    EngineState,
    compactability_of,
    effective_context_threshold,
)
from .waits import reconnect_delay_ms

__all__ = [
    "DEFAULT_COMPACTION_PROMPT",
    "SUMMARY_RETRY_GUIDANCE",
    "BackgroundNotices",
    "CompactionSettings",
    "ContextEngine",
    "CreateLLM",
    "EngineState",
    "FoldInputImages",
    "MessageStream",
    "NoticeQueue",
    "TraceSink",
    "compactability_of",
    "effective_context_threshold",
    "reconnect_delay_ms",
]
