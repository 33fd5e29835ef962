"""Redaction at the kernel's sink: everything published for a Task's cell passes the redactor.

Owns the one kernel-wide filter a `%%penguin` cell switches on (docs/security.md "Redaction at
the sink"), installed once per kernel and left in place: `_redacting_send` wraps the kernel
`Session.send` — jupyter_client's public method, on the running kernel's `Session` objects
(`seams.kernel.SESSION_SEND`, checked before it is installed) — the one call every message the
kernel publishes goes through (streams, `display_data` / `update_display_data` data *and*
metadata, `execute_result`, `error`, `comm_open` / `comm_msg` — the live widgets' state, tool
names and approval reasons included — and stdin prompts).

* A message whose parent is a Task's cell (registered by `open_task`) is sent with every string
  of its content and metadata passed through that Task's `Redactor.markup` (raw, JSON-escaped and
  HTML-escaped forms; base64 images are left as they are). Comms other than widgets' are left
  alone: the notebook bridge's requests (`link/`) edit the notebook itself and carry its cells'
  sources as they are. Whatever thread or subprocess produced it does not matter: ipykernel
  attributes it to the cell, and so does this filter.
* The stream hold-back: while the Task runs, the text of a `stream` message (stdout, stderr:
  `print` from any thread, a thread's traceback, `os.write(1/2, …)`, a subprocess inheriting the
  fds — ipykernel reads and flushes them in pieces) stops before any tail that could still grow
  into a secret (`live_holdback.SecretHoldBack`, the live view's rule); the tail waits for the
  next message of that stream, so a secret cut by a pipe read or a flush boundary is redacted
  whole instead of leaving in two pieces. `TaskSink.close` (the cell's end) sends what is still
  held. It sits at the same public seam as the redaction, so nothing private of ipykernel's is
  needed for it.

When the seam's check fails, `open_task` raises `SinkUnavailable` and the caller refuses to run
(fail closed). What a user's own cells publish is not touched (their parent is not a Task's
cell); threads a Task started that print after its cell ended are redacted by
`output/output_router.py`.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ...redaction import Redactor
from ...seams.kernel import SESSION_SEND, kernel_sessions, send_problem
from ..kernel_shapes import JsonObject, MessageSession
from ..live.live_holdback import SecretHoldBack

Send = Callable[..., object]  # a Session's `send`, as the filter calls it

_INSTALLED = "_penguin_task_sink"
_BINARY_IMAGE = "image/"
_SVG = "image/svg+xml"
# Ended Tasks stay registered (their threads may still publish for their cell), the oldest
# forgotten beyond this many.
KEPT_TASKS = 256
WIDGET_TARGET = "jupyter.widget"


class SinkUnavailable(RuntimeError):
    """The kernel's sink cannot be wrapped here: a Task with secrets to protect must not run."""


class TaskSink:
    """One Task's registration: its cell's request id, its redactor and (while open) its hold-back."""

    def __init__(self, parent_id: str, redactor: Redactor) -> None:
        self.parent_id = parent_id
        self.redactor = redactor
        self.holdback: SecretHoldBack | None = SecretHoldBack(redactor) if redactor else None

    def close(self) -> None:
        """The cell ended: no tail is held back any more; what is held goes out now, redacted."""
        _HELD.stop_holding(self)
        for name in ("stdout", "stderr"):  # what the streams still buffer passes the filter first
            stream = getattr(sys, name, None)
            try:
                stream.flush() if stream is not None else None
            except Exception:  # a closed stream has nothing held that could still go out
                pass
        _HELD.release(self)


_tasks: OrderedDict[str, TaskSink] = OrderedDict()


def open_task(kernel: object, redactor: Redactor) -> TaskSink | None:
    """Register the request `kernel` is handling now as a Task's cell (None without a kernel).
    Raises `SinkUnavailable` when the kernel's `Session.send` cannot be wrapped and `redactor`
    has secrets to protect."""
    parent = kernel.get_parent() if kernel is not None and hasattr(kernel, "get_parent") else None
    parent_id = _msg_id(parent)
    if not parent_id:
        return None
    if not _install(kernel):
        if redactor:
            raise SinkUnavailable(SESSION_SEND.off_line())
        return None
    sink = _tasks[parent_id] = TaskSink(parent_id, redactor)
    _tasks.move_to_end(parent_id)
    while len(_tasks) > KEPT_TASKS:
        _, forgotten = _tasks.popitem(last=False)
        _HELD.stop_holding(forgotten)
        _HELD.release(forgotten)
    return sink


def _msg_id(parent: object) -> str:
    """The request id of a parent (a message, or its header)."""
    if not isinstance(parent, dict):
        return ""
    header = parent.get("header", parent)
    return str(header.get("msg_id", "") or "") if isinstance(header, dict) else ""


def redact_published(value: object, redactor: Redactor) -> object:
    """A copy of `value` (message content or metadata) with `redactor.markup` applied to every
    string and dict key; base64 images (`image/*` entries but SVG, `data:…;base64,` URLs) are left alone."""
    if isinstance(value, str):
        if value.startswith("data:") and ";base64," in value[:100]:
            return value
        return redactor.markup(value)
    if isinstance(value, dict):
        return {
            (redactor.markup(k) if isinstance(k, str) else k): (
                v if isinstance(k, str) and k.startswith(_BINARY_IMAGE) and k != _SVG else redact_published(v, redactor)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_published(item, redactor) for item in value]
    return value


# --- the Session.send filter ---------------------------------------------------------------------


def _install(kernel: object) -> bool:
    """Wrap `send` on each of the kernel's sessions (once); False when the seam is off."""
    sessions: list[MessageSession] = kernel_sessions(kernel)
    problems = [problem for problem in map(send_problem, sessions) if problem is not None]
    if not SESSION_SEND.verify(problems[0] if problems else None):
        return False
    for session in sessions:
        if not getattr(session, _INSTALLED, False):
            session.send = _redacting_send(session.send, session)
            setattr(session, _INSTALLED, True)
    return True


@dataclass
class _Tail:
    """Text of one stream held back, and how to send it: the call that would have sent it."""

    text: str
    send: Send
    session: MessageSession
    socket: object
    ident: object
    parent: JsonObject


class _HeldTails:
    """The held-back tails, by (the Task's request id, stream name)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tails: dict[tuple[str, str], _Tail] = {}

    def split(self, task: TaskSink, key: tuple[str, str], text: str, make_tail: Callable[[str], _Tail]) -> str:
        """What of `text` (after the tail held for `key`) may go now; the rest is held."""
        with self._lock:
            held = self._tails.pop(key, None)
            text = held.text + text if held is not None else text
            holdback = task.holdback
            end = holdback.safe_end(text) if holdback else len(text)
            if end < len(text):
                self._tails[key] = make_tail(text[end:])
        return text[:end]

    def stop_holding(self, task: TaskSink) -> None:
        with self._lock:
            task.holdback = None

    def release(self, task: TaskSink) -> None:
        """Send what is held for a Task (its cell ended), redacted."""
        with self._lock:
            keys = [key for key in self._tails if key[0] == task.parent_id]
            tails = [(key[1], self._tails.pop(key)) for key in keys]
        for name, tail in tails:
            content = redact_published({"name": name, "text": tail.text}, task.redactor)
            msg = tail.session.msg("stream", content, parent=tail.parent)
            tail.send(tail.socket, msg, ident=tail.ident)


_HELD = _HeldTails()


def _redacting_send(original: Send, session: MessageSession) -> Send:
    def send(
        stream: object,
        msg_or_type: object,
        content: object = None,
        parent: object = None,
        ident: object = None,
        buffers: object = None,
        track: bool = False,
        header: object = None,
        metadata: object = None,
    ) -> object:
        parent_header = msg_or_type.get("parent_header") if isinstance(msg_or_type, dict) else parent
        task = _tasks.get(_msg_id(parent_header))
        if task is not None and task.redactor and _shown_by_frontend(msg_or_type, content):
            if _message_type(msg_or_type) == "stream":
                held = _held_back(task, msg_or_type, content, parent_header, original, session, stream, ident)
                if held is None:
                    return None  # all of it waits for the next write
                msg_or_type, content = held
            msg_or_type, content, metadata = _redacted(task.redactor, msg_or_type, content, metadata)
        return original(
            stream,
            msg_or_type,
            content=content,
            parent=parent,
            ident=ident,
            buffers=buffers,
            track=track,
            header=header,
            metadata=metadata,
        )

    return send


def _message_type(msg_or_type: object) -> object:
    if isinstance(msg_or_type, dict):
        header = msg_or_type.get("header")
        return header.get("msg_type") if isinstance(header, dict) else None
    return msg_or_type


def _held_back(
    task: TaskSink,
    msg_or_type: object,
    content: object,
    parent_header: object,
    original: Send,
    session: MessageSession,
    socket: object,
    ident: object,
) -> tuple[object, object] | None:
    """A stream message's (msg_or_type, content) with the held tail before its text and any tail
    that could still grow into a secret held back; None when nothing of it may go yet."""
    body = msg_or_type.get("content") if isinstance(msg_or_type, dict) else content
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        return msg_or_type, content
    key = (task.parent_id, str(body.get("name", "")))
    parent = parent_header.get("header", parent_header) if isinstance(parent_header, dict) else {}
    text = _HELD.split(task, key, body["text"], lambda tail: _Tail(tail, original, session, socket, ident, dict(parent)))
    if not text:
        return None
    body = {**body, "text": text}
    if isinstance(msg_or_type, dict):
        return {**msg_or_type, "content": body}, content
    return msg_or_type, body


def _redacted(redactor: Redactor, msg_or_type: object, content: object, metadata: object) -> tuple[object, object, object]:
    if isinstance(msg_or_type, dict):
        msg_or_type = dict(msg_or_type)
        for part in ("content", "metadata"):
            if isinstance(msg_or_type.get(part), dict):
                msg_or_type[part] = redact_published(msg_or_type[part], redactor)
        return msg_or_type, content, metadata
    content = redact_published(content, redactor) if isinstance(content, dict) else content
    metadata = redact_published(metadata, redactor) if isinstance(metadata, dict) else metadata
    return msg_or_type, content, metadata


def _shown_by_frontend(msg_or_type: object, content: object) -> bool:
    """False for the messages of a comm that is not a widget's: the notebook bridge's requests
    (`link/`) edit the notebook itself, and a cell's own source must reach it as it is. A comm
    the kernel does not know is taken for a widget's (redacted)."""
    msg_type = _message_type(msg_or_type)
    if isinstance(msg_or_type, dict):
        content = msg_or_type.get("content")
    if msg_type not in ("comm_open", "comm_msg") or not isinstance(content, dict):
        return True
    target = content.get("target_name") if msg_type == "comm_open" else _comm_target(content.get("comm_id"))
    return target in (None, WIDGET_TARGET)


def _comm_target(comm_id: object) -> str | None:
    try:
        from comm import get_comm_manager

        known = get_comm_manager().comms.get(comm_id) if isinstance(comm_id, str) else None
    except Exception:  # no comm manager (not a kernel): nothing to tell apart
        return None
    return getattr(known, "target_name", None) if known is not None else None
