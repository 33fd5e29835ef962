"""The file journal: what `write_file` and `edit_file` changed during a Task, so it can be undone.

Owns, for one session: before a file tool writes a path for the first time in a Task, the
file's previous bytes (byte for byte, in a 0600 file under a 0700 folder of the session's data
root) or the fact that it did not exist; `restore(task)` puts every journaled file back (a file
the Task created is removed) and says, per path, what it did. A credential file
(`secret_files.secret_file_label`) is never journaled, and a file above `MAX_JOURNALED_BYTES`
neither: undo reports both as not restored. A session's journal is deleted when the session is
disposed (`dispose`), and a journal left behind by a kernel that died is deleted once older
than `MAX_JOURNAL_AGE_S` (`prune_old_journals`). Deciding when a Task begins and ends, and what
to tell the user or the model, is the host's (notebook/undo/). See docs/undo.md and
docs/security.md "The undo journal".
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..private_files import private_dir, write_private_bytes
from .secret_files import secret_file_label
from .tools.file_utils import atomic_write, os_error_text

log = logging.getLogger(__name__)

FILE_JOURNAL_KEY = "file_journal"  # EnvironmentServices.extra key (set by the host)
MAX_JOURNALED_BYTES = 64 * 1024 * 1024
MAX_JOURNAL_AGE_S = 24 * 3600.0


@dataclass
class FileEntry:
    """One path a Task wrote: how it was before."""

    path: str
    existed: bool
    saved: Path | None = None  # the previous bytes (existed and journaled)
    mode: int | None = None
    skipped: str | None = None  # why the previous content was not kept


@dataclass
class FileRestore:
    """What `restore` did, path by path."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    not_restored: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


class FileJournal:
    """One session's journal; `begin(task)` … `end()` brackets what a Task's file tools write."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._tasks: dict[str, list[FileEntry]] = {}
        self._current: str | None = None
        self._count = 0
        self.disposed = False

    def begin(self, task_id: str) -> None:
        self._current = task_id
        self._tasks.setdefault(task_id, [])

    def end(self) -> None:
        self._current = None

    def entries(self, task_id: str) -> list[FileEntry]:
        return list(self._tasks.get(task_id, []))

    def before_write(self, abs_path: str, workspace_dir: str | None = None) -> None:
        """Called by a file tool just before it writes `abs_path` (first write per Task counts)."""
        task = self._current
        if task is None or self.disposed:
            return
        entries = self._tasks[task]
        if any(entry.path == abs_path for entry in entries):
            return
        entries.append(self._entry(task, abs_path, workspace_dir))

    def _entry(self, task: str, path: str, workspace_dir: str | None) -> FileEntry:
        if not os.path.lexists(path):
            return FileEntry(path, existed=False)
        label = secret_file_label(path, workspace_dir)
        if label is not None:
            return FileEntry(path, existed=True, skipped=f"{label} is never journaled")
        try:
            info = os.stat(path)
            if info.st_size > MAX_JOURNALED_BYTES:
                return FileEntry(path, True, skipped=f"larger than {MAX_JOURNALED_BYTES >> 20} MB, not journaled")
            with open(path, "rb") as handle:
                data = handle.read()
            self._count += 1
            saved = private_dir(self.directory / task) / f"{self._count:05d}"
            write_private_bytes(saved, data)
        except OSError as exc:
            return FileEntry(path, True, skipped=f"could not be journaled: {os_error_text(exc)}")
        return FileEntry(path, True, saved=saved, mode=info.st_mode & 0o7777)

    def restore(self, task_id: str) -> FileRestore:
        """Put back every file the Task wrote (newest first); its journal is then discarded."""
        done = FileRestore()
        if self.disposed:
            done.not_restored += [(e.path, "the session's journal was deleted") for e in self._tasks.get(task_id, [])]
            return done
        for entry in reversed(self._tasks.get(task_id, [])):
            try:
                if not entry.existed:
                    if os.path.lexists(entry.path):
                        os.remove(entry.path)
                        done.removed.append(entry.path)
                elif entry.saved is None:
                    done.not_restored.append((entry.path, entry.skipped or "not journaled"))
                else:
                    atomic_write(entry.path, entry.saved.read_bytes())
                    if entry.mode is not None:
                        os.chmod(entry.path, entry.mode)
                    done.restored.append(entry.path)
            except OSError as exc:
                done.not_restored.append((entry.path, os_error_text(exc)))
        self.discard(task_id)
        return done

    def discard(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
        shutil.rmtree(self.directory / task_id, ignore_errors=True)

    def dispose(self) -> None:
        """The session ended: its journal (the previous contents) is deleted."""
        self.disposed = True
        self._current = None
        shutil.rmtree(self.directory, ignore_errors=True)


def prune_old_journals(parent: Path, max_age_s: float = MAX_JOURNAL_AGE_S) -> None:
    """Delete the session journals under `parent` not touched for `max_age_s` (a dead kernel's)."""
    now = time.time()
    with contextlib.suppress(OSError):
        for child in parent.iterdir():
            with contextlib.suppress(OSError):
                if now - child.stat().st_mtime > max_age_s:
                    shutil.rmtree(child, ignore_errors=True)


def open_file_journal(parent: Path, session_id: str) -> FileJournal:
    """A fresh journal for `session_id` under `parent` (0700), old journals pruned first."""
    private_dir(parent)
    prune_old_journals(parent)
    return FileJournal(parent / session_id)


def journal_before_write(services: Any, abs_path: str, workspace_dir: str | None) -> None:
    """What a file tool calls before writing: the host's journal, if it set one, records the path."""
    extra = getattr(services, "extra", None)
    journal = extra.get(FILE_JOURNAL_KEY) if isinstance(extra, dict) else None
    if isinstance(journal, FileJournal):
        try:
            journal.before_write(abs_path, workspace_dir)
        except Exception as exc:  # journaling must never stop the write the user approved
            log.warning("[penguin] undo journal: %s", exc)
