"""TraceWriter: the append-only JSONL sink of one session (docs/traces.md "Layout and writer").

Owns file naming (`<traces>/<yyyy-mm-dd>/<session_id>_<NNN>.jsonl`), which messages are
recordable, redaction of configured secrets before a line is written (a `Redactor`, see
docs/security.md), the single-`os.write` append on an O_APPEND descriptor of a private file
(0600 in 0700 directories), serialization of concurrent writes and rotations, torn-tail
healing, and the record of write failures — of the file or of a record that cannot be serialized
(the first one as a line for the user, whether the latest write failed), which the session
exposes as `recording_error`. Reading and replay live in `reader.py` and `replay.py`; deciding *what* to
record is the engine's and session's job.
"""

from __future__ import annotations

import os
import re
import threading
from datetime import date as Date
from pathlib import Path

from ..omni import OmniMessage, is_partial_payload, to_dict, to_json
from ..omni.wire import dumps_compact
from ..private_files import open_private_append
from ..redaction import Redactor

_SHARD_RE = re.compile(r"^(?P<stem>.+)_(?P<index>\d{3,})\.jsonl$")


def trace_file_path(traces_dir: str | os.PathLike[str], session_id: str, day: Date, index: int = 1) -> Path:
    """`<traces>/<yyyy-mm-dd>/<session_id>_<NNN>.jsonl` (NNN zero-padded to 3 digits)."""
    return Path(traces_dir) / day.strftime("%Y-%m-%d") / f"{session_id}_{index:03d}.jsonl"


def shard_index(path: str | os.PathLike[str]) -> int:
    """The NNN of a shard file name (1 when the name carries no index)."""
    match = _SHARD_RE.match(Path(path).name)
    return int(match.group("index")) if match else 1


def is_recordable(msg: OmniMessage) -> bool:
    """session_meta, complete model messages and events — never partials, never origin-tagged."""
    if msg.origin:
        return False
    return not is_partial_payload(msg)


class TraceWriter:
    """Appends one JSON line per recordable message with a single `os.write`.

    `write()` and `rotate()` are synchronous and serialized by a lock, so submission order is
    file order (a rotation never splits a record). A failed write raises to its caller only;
    later writes proceed. Failures are also kept here (`failure`, `recording`)
    for whoever tells the user, so the sink reports its own failures (`reports_failures`) and
    the engine need not log each one. Satisfies the engine's trace sink protocol (`write(msg)`,
    `rotate()`). With a `redactor`, every configured secret in a record is replaced by its
    placeholder first.
    """

    reports_failures = True

    def __init__(self, path: str | os.PathLike[str], *, redactor: Redactor | None = None) -> None:
        self._path = Path(path)
        self.redactor = redactor
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._torn_tail = False
        self._closed = False
        self._failure: str | None = None
        self._failing = False

    @property
    def failure(self) -> str | None:
        """The first write failure, as one line naming the file and the reason (None if none)."""
        return self._failure

    @property
    def recording(self) -> bool:
        """False while the latest write failed (recording is off until one succeeds again)."""
        return not self._failing

    @property
    def path(self) -> Path:
        """The shard currently written to."""
        return self._path

    # --- public sink ---------------------------------------------------------------------------

    def write(self, msg: OmniMessage) -> None:
        """Append `msg` (when recordable). Any failure — the file, or a record that cannot be
        serialized or redacted — is noted (`failure`, `recording`) and raised."""
        if not is_recordable(msg):
            return
        try:
            data = (self._line(msg) + "\n").encode("utf-8")
        except Exception as exc:
            with self._lock:
                self._note_failure(exc, what=f"a {getattr(msg.payload, 'type', None) or msg.type} record")
            raise
        with self._lock:
            try:
                self._append(data)
            except Exception as exc:
                self._note_failure(exc)
                raise
            self._failing = False

    def rotate(self) -> Path:
        """Switch to the next shard (`_002`, `_003`, …); the old file is left as is."""
        with self._lock:
            self._close_fd()
            match = _SHARD_RE.match(self._path.name)
            stem = match.group("stem") if match else self._path.stem
            index = shard_index(self._path) + 1
            self._path = self._path.with_name(f"{stem}_{index:03d}.jsonl")
            self._torn_tail = False
            return self._path

    def close(self) -> None:
        with self._lock:
            self._close_fd()
            self._closed = True

    # --- internals ---------------------------------------------------------------------------

    def _line(self, msg: OmniMessage) -> str:
        line = to_json(msg)
        redactor = self.redactor
        if redactor is None or not redactor.found_in(line):
            return line
        # Redact the decoded strings, not the JSON text, so the line stays valid JSON.
        return dumps_compact(redactor.value(to_dict(msg)))

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        fd = open_private_append(self._path)
        self._torn_tail = _ends_torn(self._path)
        self._fd = fd
        self._closed = False
        return fd

    def _close_fd(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None

    def _note_failure(self, exc: Exception, what: str | None = None) -> None:
        self._failing = True
        if self._failure is None:
            if isinstance(exc, OSError):
                reason = exc.strerror or str(exc) or type(exc).__name__
            else:
                detail = (str(exc).strip().splitlines() or [""])[0]
                reason = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
            if what is not None:
                reason = f"{what} could not be serialized ({reason})"
            self._failure = f"cannot write the trace {self._path}: {reason}"

    def _append(self, data: bytes) -> None:
        fd = self._open()
        if self._torn_tail:
            data = b"\n" + data
        written = 0
        while written < len(data):
            try:
                n = os.write(fd, data[written:] if written else data)
            except OSError:
                if written:
                    self._torn_tail = True
                raise
            if n <= 0:
                if written:
                    self._torn_tail = True
                raise OSError(f"Trace append made no progress at byte {written} of {len(data)}")
            written += n
        self._torn_tail = False


def _ends_torn(path: Path) -> bool:
    """True when `path` is non-empty and its last byte is not a newline."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) != b"\n"
    except OSError:
        return False
