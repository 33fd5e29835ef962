"""Traces: the append-only JSONL record of a session, and its replay (docs/traces.md).

`TraceWriter` writes, `read_trace` reads tolerantly, `resume_trace` rebuilds resumable
state, `locate` finds shards on disk, and `SessionLock` keeps one writer per session. Nothing here knows about engines or sessions.
"""

from .locate import TraceFile, find_latest_trace_file, latest_session_id, list_session_files
from .reader import (
    ParsedTrace,
    TraceParseError,
    parse_trace_lines,
    read_trace,
    repaired_lines_diagnostic,
    skipped_lines_diagnostic,
)
from .replay import (
    PROCESS_EXIT_PLACEHOLDER,
    DanglingCompaction,
    ReplayState,
    replay_notes_diagnostic,
    resume_trace,
)
from .session_lock import SessionBusyError, SessionLock
from .writer import TraceWriter, is_recordable, shard_index, trace_file_path

__all__ = [
    "PROCESS_EXIT_PLACEHOLDER",
    "DanglingCompaction",
    "ParsedTrace",
    "ReplayState",
    "SessionBusyError",
    "SessionLock",
    "TraceFile",
    "TraceParseError",
    "TraceWriter",
    "find_latest_trace_file",
    "is_recordable",
    "latest_session_id",
    "list_session_files",
    "parse_trace_lines",
    "read_trace",
    "repaired_lines_diagnostic",
    "replay_notes_diagnostic",
    "resume_trace",
    "shard_index",
    "skipped_lines_diagnostic",
    "trace_file_path",
]
