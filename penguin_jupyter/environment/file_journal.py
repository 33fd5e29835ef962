"""The file journal: what `write_file` and `edit_file` changed during a Task, so it can be undone.

Owns, for one session: before a file tool writes a path for the first time in a Task, the
file's previous bytes (byte for byte, in a 0600 file under a 0700 folder of the session's data
root), the target of the symlink it was, or the fact that it did not exist; `restore(task)` puts
every journaled path back (a symlink as a symlink, never its target's bytes; a file the Task
created is removed) and says, per path, what it did. Only a regular file's bytes are read, never
through a symlink and at most `MAX_JOURNALED_BYTES` (`regular_files.read_regular_bytes`): a FIFO,
a device or a socket, a credential file (`secret_files.secret_file_label`) and a larger file
are not journaled, and undo reports each as not restored, saying why.

A live journal holds an owner lock (`OWNER_LOCK`: an `flock` taken before the file gets its
name, released by the OS when the owning process ends, however it ends). A session's journal is
deleted when the session is disposed (`dispose`); `prune_old_journals` deletes only a journal
whose owner lock it can take — its kernel is gone — and one without a lock (written by an older
version) once older than `MAX_JOURNAL_AGE_S`; a live kernel's journal is never pruned by another.
Deciding when a Task begins and ends, and what to tell the user or the model, is the host's
(notebook/undo/). See docs/undo.md and docs/security.md "The undo journal".
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..private_files import open_private, private_dir, write_private_bytes
from ..regular_files import RefusedFile, not_regular, read_regular_bytes, size_words
from .secret_files import secret_file_label
from .tools.file_utils import atomic_write, os_error_text

try:  # pragma: no cover - platform dependent
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

FILE_JOURNAL_KEY = "file_journal"  # EnvironmentServices.extra key (set by the host)
MAX_JOURNALED_BYTES = 64 * 1024 * 1024
MAX_JOURNAL_AGE_S = 24 * 3600.0
OWNER_LOCK = ".owner.lock"  # in a session's journal folder, flocked while its kernel lives


@dataclass
class FileEntry:
    """One path a Task wrote: how it was before."""

    path: str
    existed: bool
    saved: Path | None = None  # the previous bytes (existed and journaled)
    mode: int | None = None
    skipped: str | None = None  # why the previous content was not kept
    link: str | None = None  # the path was a symlink to this target (restored as a symlink)


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
        self._owner_fd: int | None = None

    def hold(self) -> None:
        """Create the journal's folder and take its owner lock (`prune_old_journals` leaves a
        journal alone while it is held). The lock file is locked under a temporary name and only
        then renamed into place, so no other process can ever take a live journal's lock."""
        private_dir(self.directory)
        if fcntl is None or self._owner_fd is not None:
            return
        temp = self.directory / f".owner-{secrets.token_hex(4)}"
        fd = open_private(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, json.dumps({"pid": os.getpid(), "since": time.time()}).encode())
            os.replace(temp, self.directory / OWNER_LOCK)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self._owner_fd = fd

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
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return FileEntry(path, existed=False)
        except OSError as exc:
            return FileEntry(path, True, skipped=f"could not be journaled: {os_error_text(exc)}")
        if stat.S_ISLNK(info.st_mode):  # kept as the link it is: its target's bytes are never read
            try:
                return FileEntry(path, True, link=os.readlink(path))
            except OSError as exc:
                return FileEntry(path, True, skipped=f"could not be journaled: {os_error_text(exc)}")
        label = secret_file_label(path, workspace_dir)
        if label is not None:
            return FileEntry(path, existed=True, skipped=f"{label} is never journaled")
        kind = not_regular(info)
        if kind is not None:
            return FileEntry(path, True, skipped=f"it was {kind}, not a regular file: not journaled")
        if info.st_size > MAX_JOURNALED_BYTES:
            return FileEntry(path, True, skipped=f"larger than {size_words(MAX_JOURNALED_BYTES)}, not journaled")
        try:
            data = read_regular_bytes(path, MAX_JOURNALED_BYTES, follow_symlinks=False)
            self._count += 1
            saved = private_dir(self.directory / task) / f"{self._count:05d}"
            write_private_bytes(saved, data)
        except RefusedFile as exc:
            return FileEntry(path, True, skipped=f"{exc}: not journaled")
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
                elif entry.link is not None:
                    _put_link(entry.path, entry.link)
                    done.restored.append(entry.path)
                elif entry.saved is None:
                    done.not_restored.append((entry.path, entry.skipped or "not journaled"))
                else:
                    atomic_write(entry.path, self._saved_bytes(entry.saved))
                    if entry.mode is not None:
                        os.chmod(entry.path, entry.mode)
                    done.restored.append(entry.path)
            except _JournalDataMissing as exc:
                done.not_restored.append((entry.path, str(exc)))
            except OSError as exc:
                done.not_restored.append((entry.path, os_error_text(exc)))
        self.discard(task_id)
        return done

    def _saved_bytes(self, saved: Path) -> bytes:
        try:
            return saved.read_bytes()
        except FileNotFoundError:
            raise _JournalDataMissing(
                f"its previous content, kept in the undo journal {self.directory}, was deleted"
            ) from None

    def discard(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
        shutil.rmtree(self.directory / task_id, ignore_errors=True)

    def dispose(self) -> None:
        """The session ended: its journal (the previous contents) is deleted, its lock released."""
        self.disposed = True
        self._current = None
        shutil.rmtree(self.directory, ignore_errors=True)
        if self._owner_fd is not None:
            os.close(self._owner_fd)
            self._owner_fd = None


class _JournalDataMissing(Exception):
    """A journaled previous content is gone; `str()` says which journal and what happened."""


def _put_link(path: str, target: str) -> None:
    """Make `path` the symlink to `target` again, atomically (a temporary link renamed over it)."""
    temp = os.path.join(os.path.dirname(path) or ".", f".{os.path.basename(path)}.undo-{secrets.token_hex(3)}")
    os.symlink(target, temp)
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


@contextlib.contextmanager
def _owner_gone(journal: Path) -> Iterator[bool | None]:
    """Whether the kernel that owned `journal` is gone: its owner lock can be taken (and is held
    for the block, so nobody starts using the journal meanwhile). None when the journal has no
    owner lock (an older version's, or no `fcntl`)."""
    if fcntl is None:
        yield None
        return
    try:
        fd = os.open(journal / OWNER_LOCK, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except FileNotFoundError:
        yield None
        return
    except OSError:
        yield False
        return
    try:
        try:
            gone = stat.S_ISREG(os.fstat(fd).st_mode)
            if gone:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            gone = False  # its kernel holds it: alive
        yield gone
    finally:
        os.close(fd)


def prune_old_journals(parent: Path, max_age_s: float = MAX_JOURNAL_AGE_S) -> None:
    """Delete the session journals under `parent` whose kernel is gone (their owner lock can be
    taken); a journal without an owner lock only once not touched for `max_age_s`."""
    now = time.time()
    with contextlib.suppress(OSError):
        for child in parent.iterdir():
            with contextlib.suppress(OSError), _owner_gone(child) as gone:
                if gone is None:
                    gone = now - child.lstat().st_mtime > max_age_s
                if gone:
                    shutil.rmtree(child, ignore_errors=True)


def open_file_journal(parent: Path, session_id: str) -> FileJournal:
    """A fresh journal for `session_id` under `parent` (0700, its owner lock held), the journals
    of kernels that are gone pruned first."""
    private_dir(parent)
    prune_old_journals(parent)
    journal = FileJournal(parent / session_id)
    journal.hold()
    return journal


def journal_before_write(services: Any, abs_path: str, workspace_dir: str | None) -> None:
    """What a file tool calls before writing: the host's journal, if it set one, records the path."""
    extra = getattr(services, "extra", None)
    journal = extra.get(FILE_JOURNAL_KEY) if isinstance(extra, dict) else None
    if isinstance(journal, FileJournal):
        try:
            journal.before_write(abs_path, workspace_dir)
        except Exception as exc:  # journaling must never stop the write the user approved
            log.warning("[penguin] undo journal: %s", exc)
