"""Managed subagent sessions shared by run_subagent, input_subagent and kill_subagent
(docs/subagents.md): the per-Environment manager, the round pump, the approval queue and
the collect window. Spawning child sessions is the injected SubagentRunner's job."""

from .collect import collect_window
from .limits import (
    DEFAULT_SUBAGENT_POLL_YIELD_MS,
    DEFAULT_SUBAGENT_YIELD_MS,
    MAX_BACKGROUND_SUBAGENTS,
)
from .session import ManagedSubagentSession, SubagentExit, SubagentStartError, result_for_exit
from .session_manager import SubagentSessionManager, ensure_subagent_sessions

__all__ = [
    "DEFAULT_SUBAGENT_POLL_YIELD_MS",
    "DEFAULT_SUBAGENT_YIELD_MS",
    "MAX_BACKGROUND_SUBAGENTS",
    "ManagedSubagentSession",
    "SubagentExit",
    "SubagentSessionManager",
    "SubagentStartError",
    "collect_window",
    "ensure_subagent_sessions",
    "result_for_exit",
]
