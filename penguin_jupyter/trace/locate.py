"""Finding Trace files on disk (docs/traces.md "Resume" steps 1 and 7).

Owns the scan of `<traces>/<yyyy-mm-dd>/<session_id>_<NNN>.jsonl`: the latest shard of a
session, the latest resumable session id, and the list of sessions of an agent.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..omni import is_session_meta
from .reader import read_trace

_TRACE_FILE_RE = re.compile(r"^(?P<session>.+)_(?P<index>\d{3})\.jsonl$")


@dataclass(frozen=True)
class TraceFile:
    path: Path
    date_dir: str
    session_id: str
    index: int


def _subdirs(path: Path) -> list[Path]:
    try:
        return [p for p in path.iterdir() if p.is_dir()]
    except OSError:
        return []


def iter_trace_files(traces_dir: str | os.PathLike[str]) -> list[TraceFile]:
    """Every shard under `traces_dir` (unsorted)."""
    found: list[TraceFile] = []
    for day in _subdirs(Path(traces_dir)):
        try:
            names = [p for p in day.iterdir() if p.is_file()]
        except OSError:
            continue
        for file in names:
            match = _TRACE_FILE_RE.match(file.name)
            if match:
                found.append(TraceFile(file, day.name, match.group("session"), int(match.group("index"))))
    return found


def find_latest_trace_file(traces_dir: str | os.PathLike[str], session_id: str) -> TraceFile | None:
    """The highest-index shard of `session_id` across all date dirs, or None."""
    best: TraceFile | None = None
    for file in iter_trace_files(traces_dir):
        if file.session_id == session_id and (best is None or file.index > best.index):
            best = file
    return best


def _has_records(path: Path) -> bool:
    try:
        return any(not is_session_meta(m) for m in read_trace(path))
    except OSError:
        return False


def latest_session_id(traces_dir: str | os.PathLike[str]) -> str | None:
    """Date dirs descending, files descending: the first file with a non-meta record names it."""
    files = sorted(iter_trace_files(traces_dir), key=lambda f: (f.date_dir, f.path.name), reverse=True)
    for file in files:
        if _has_records(file.path):
            return file.session_id
    return None


def list_session_files(traces_dir: str | os.PathLike[str]) -> list[TraceFile]:
    """The latest shard of every session, newest session first."""
    latest: dict[str, TraceFile] = {}
    for file in iter_trace_files(traces_dir):
        current = latest.get(file.session_id)
        if current is None or file.index > current.index:
            latest[file.session_id] = file
    return sorted(latest.values(), key=lambda f: (f.date_dir, f.session_id), reverse=True)
