"""Truncated-output archive (docs/environment.md "The truncated-output archive"): keeps the full text a tool produced past
its visible window so the model can recover it from the session scratchpad.

Owns the per-call capture (UTF-8 byte budget, head + rolling tail, surrogate repair), redaction
of configured secrets in what is saved, and the exclusive 0600 file write in a 0700 directory.
Deciding *when* to capture and how the notes read is close_out.py's job.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
from dataclasses import dataclass

from ..omni import repair_surrogates
from ..private_files import write_private_bytes
from ..redaction import EMPTY, Redactor

log = logging.getLogger(__name__)

ARCHIVE_BYTE_BUDGET = 8 * 1024 * 1024 - 1
ARCHIVE_DIR_NAME = "truncated-tool-output"
MIDDLE_MARKER = "\n[archive middle truncated]\n"
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class ArchiveSaved:
    path: str
    archive_truncated: bool


@dataclass(frozen=True)
class ArchiveFailed:
    code: str


ArchiveSaveResult = ArchiveSaved | ArchiveFailed


def archive_file_name(tool_name: str, tool_call_id: str) -> str:
    safe = _UNSAFE_NAME_CHARS.sub("_", tool_name)[:48] or "tool"
    digest = hashlib.sha256(tool_call_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{safe}-{digest}.log"


def _error_code(exc: OSError) -> str:
    if exc.errno is not None and exc.errno in errno.errorcode:
        return errno.errorcode[exc.errno]
    return type(exc).__name__


class ArchiveCapture:
    """The bytes of one tool call's full output, bounded by `budget` (head + rolling tail)."""

    def __init__(
        self,
        directory: str,
        tool_name: str,
        tool_call_id: str,
        budget: int = ARCHIVE_BYTE_BUDGET,
        *,
        redactor: Redactor = EMPTY,
    ):
        self.directory = directory
        self.redactor = redactor
        self.tool_name = tool_name
        self.tool_call_id = tool_call_id
        self.budget = budget
        marker_len = len(MIDDLE_MARKER.encode("utf-8"))
        content = max(0, budget - marker_len)
        self._head_limit = content // 2
        self._tail_limit = content - self._head_limit
        self._data = bytearray()  # exact contents while under budget; the head window after
        self._tail = bytearray()
        self._overflowed = False
        self._pending_high = ""
        self._done = False

    def append(self, text: str) -> None:
        if self._done or not text:
            return
        text = self._pending_high + text
        self._pending_high = ""
        if "\ud800" <= text[-1] <= "\udbff":
            text, self._pending_high = text[:-1], text[-1]
        self._append_bytes(repair_surrogates(text).encode("utf-8"))

    def replace(self, text: str) -> None:
        """Compatibility path: the tool's complete output replaces what was captured."""
        self._data = bytearray()
        self._tail = bytearray()
        self._overflowed = False
        self._pending_high = ""
        self.append(text)

    def _append_bytes(self, data: bytes) -> None:
        if not self._overflowed:
            self._data += data
            if len(self._data) <= self.budget:
                return
            self._overflowed = True
            rest = bytes(self._data[self._head_limit :])
            del self._data[self._head_limit :]
            self._tail = bytearray(rest[-self._tail_limit :] if self._tail_limit else b"")
            return
        self._tail += data
        if len(self._tail) > self._tail_limit:
            del self._tail[: len(self._tail) - self._tail_limit]

    def _file_bytes(self) -> tuple[bytes, bool]:
        pending = b"\xef\xbf\xbd" if self._pending_high else b""
        if not self._overflowed:
            data = bytes(self._data) + pending
            if len(data) <= self.budget:
                return data, False
            # The trailing replacement char tipped it over: fall back to the windowed form.
            self._append_bytes(pending)
            pending = b""
        head = bytes(self._data).decode("utf-8", "ignore").encode("utf-8")
        tail = (bytes(self._tail) + pending)[-self._tail_limit :] if self._tail_limit else b""
        tail = tail.decode("utf-8", "ignore").encode("utf-8")
        return head + MIDDLE_MARKER.encode("utf-8") + tail, True

    def cancel(self) -> None:
        self._done = True
        self._data = bytearray()
        self._tail = bytearray()

    def save(self) -> ArchiveSaveResult:
        if self._done:
            return ArchiveFailed("ALREADY_SAVED")
        self._done = True
        data, truncated = self._file_bytes()
        self._data = bytearray()
        self._tail = bytearray()
        if self.redactor:
            data = self.redactor.text(data.decode("utf-8", "replace")).encode("utf-8")
        path = os.path.join(self.directory, archive_file_name(self.tool_name, self.tool_call_id))
        try:
            write_private_bytes(path, data, exclusive=True)
        except OSError as exc:
            code = _error_code(exc)
            log.warning(
                '[penguin] tool "%s" truncated output archive write failed (%s).', self.tool_name, code
            )
            return ArchiveFailed(code)
        return ArchiveSaved(os.path.abspath(path), truncated)


def archive_directory(scratchpad_dir: str) -> str:
    return os.path.join(scratchpad_dir, ARCHIVE_DIR_NAME)


def archive_budget_mib(budget: int = ARCHIVE_BYTE_BUDGET) -> int:
    mib = 1024 * 1024
    return -(-budget // mib)
