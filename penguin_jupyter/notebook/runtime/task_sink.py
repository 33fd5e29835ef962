"""Redaction at the kernel's sink: everything published for a Task's cell passes the redactor.

Owns the two kernel-wide filters a `%%penguin` cell switches on (docs/security.md "Redaction at
the sink"), installed once per kernel and left in place:

* `_redacting_send` wraps the kernel `Session.send`, the one call every message the kernel
  publishes goes through (streams, `display_data` / `update_display_data` data *and* metadata,
  `execute_result`, `error`, `comm_open` / `comm_msg` — the live widgets' state, tool names and
  approval reasons included — and stdin prompts). A message whose parent is a Task's cell
  (registered by `open_task`) is sent with every string of its content and metadata passed
  through that Task's `Redactor.markup` (raw, JSON-escaped and HTML-escaped forms; base64
  images are left as they are). Comms other than widgets' are left alone: the notebook
  bridge's requests (`link/`) edit the notebook itself and carry its cells' sources as they are. Whatever thread or subprocess produced it does not matter:
  ipykernel attributes it to the cell, and so does this filter.
* `_StreamHoldBack` sits in each of the kernel's `OutStream`s (stdout, stderr: `print` from any
  thread, a thread's traceback, `os.write(1/2, …)`, a subprocess inheriting the fds, all read
  by ipykernel's fd watcher in pieces): while the Task runs, the text of a flush stops before
  any tail that could still grow into a secret (`live_holdback.SecretHoldBack`, the live view's
  rule) and the tail waits for the next flush, so a secret cut by a pipe read or a flush
  boundary is redacted whole instead of leaving in two pieces. `TaskSink.close` (the cell's
  end) flushes what is still held.

What a user's own cells publish is not touched (their parent is not a Task's cell); threads a
Task started that print after its cell ended are redacted by `kernel_tools/output_router.py`.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from ...redaction import Redactor
from ..kernel_tools.output_router import kernel_stream
from ..live.live_holdback import SecretHoldBack

_INSTALLED = "_penguin_task_sink"
_BINARY_IMAGE = "image/"
_SVG = "image/svg+xml"
# Ended Tasks stay registered (their threads may still publish for their cell), the oldest
# forgotten beyond this many.
KEPT_TASKS = 256


class TaskSink:
    """One Task's registration: its cell's request id, its redactor and (while open) its hold-back."""

    def __init__(self, parent_id: str, redactor: Redactor) -> None:
        self.parent_id = parent_id
        self.redactor = redactor
        self.holdback: SecretHoldBack | None = SecretHoldBack(redactor) if redactor else None

    def close(self) -> None:
        """The cell ended: no tail is held back any more; what is held goes out now, redacted."""
        self.holdback = None
        for name in ("stdout", "stderr"):
            stream = kernel_stream(getattr(sys, name, None))
            if getattr(stream, _INSTALLED, False):
                try:
                    stream.flush()
                except Exception:  # a closed stream has nothing held that could still go out
                    pass


_tasks: OrderedDict[str, TaskSink] = OrderedDict()
WIDGET_TARGET = "jupyter.widget"


def open_task(kernel: Any, redactor: Redactor) -> TaskSink | None:
    """Register the request `kernel` is handling now as a Task's cell (None without a kernel)."""
    parent = kernel.get_parent() if kernel is not None and hasattr(kernel, "get_parent") else None
    parent_id = _msg_id(parent)
    if not parent_id:
        return None
    _install(kernel)
    sink = _tasks[parent_id] = TaskSink(parent_id, redactor)
    _tasks.move_to_end(parent_id)
    while len(_tasks) > KEPT_TASKS:
        _tasks.popitem(last=False)
    return sink


def _msg_id(parent: Any) -> str:
    """The request id of a parent (a message, or its header)."""
    if not isinstance(parent, dict):
        return ""
    header = parent.get("header", parent)
    return str(header.get("msg_id", "") or "") if isinstance(header, dict) else ""


def redact_published(value: Any, redactor: Redactor) -> Any:
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


def _install(kernel: Any) -> None:
    streams = [kernel_stream(getattr(sys, name, None)) for name in ("stdout", "stderr")]
    streams = [s for s in streams if s is not None and callable(getattr(s, "_flush_buffers", None))]
    sessions = [getattr(kernel, "session", None), _shell_session(kernel)]
    for session in [*sessions, *(getattr(s, "session", None) for s in streams)]:
        if session is not None and not getattr(session, _INSTALLED, False):
            session.send = _redacting_send(session.send)
            setattr(session, _INSTALLED, True)
    for stream in streams:
        if not getattr(stream, _INSTALLED, False):
            _StreamHoldBack(stream)


def _shell_session(kernel: Any) -> Any:
    publisher = getattr(getattr(kernel, "shell", None), "display_pub", None)
    return getattr(publisher, "session", None)


def _redacting_send(original: Callable[..., Any]) -> Callable[..., Any]:
    def send(
        stream: Any,
        msg_or_type: Any,
        content: Any = None,
        parent: Any = None,
        ident: Any = None,
        buffers: Any = None,
        track: bool = False,
        header: Any = None,
        metadata: Any = None,
    ) -> Any:
        is_msg = isinstance(msg_or_type, dict)
        shown = _shown_by_frontend(msg_or_type, content)
        task = _tasks.get(_msg_id(msg_or_type.get("parent_header") if is_msg else parent))
        if shown and task is not None and task.redactor:
            redactor = task.redactor
            if is_msg:
                msg_or_type = dict(msg_or_type)
                for part in ("content", "metadata"):
                    if isinstance(msg_or_type.get(part), dict):
                        msg_or_type[part] = redact_published(msg_or_type[part], redactor)
            else:
                content = redact_published(content, redactor) if isinstance(content, dict) else content
                metadata = redact_published(metadata, redactor) if isinstance(metadata, dict) else metadata
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


def _shown_by_frontend(msg_or_type: Any, content: Any) -> bool:
    """False for the messages of a comm that is not a widget's: the notebook bridge's requests
    (`link/`) edit the notebook itself, and a cell's own source must reach it as it is. A comm
    the kernel does not know is taken for a widget's (redacted)."""
    if isinstance(msg_or_type, dict):
        header = msg_or_type.get("header")
        msg_type = header.get("msg_type") if isinstance(header, dict) else None
        content = msg_or_type.get("content")
    else:
        msg_type = msg_or_type
    if msg_type not in ("comm_open", "comm_msg") or not isinstance(content, dict):
        return True
    target = content.get("target_name") if msg_type == "comm_open" else _comm_target(content.get("comm_id"))
    return target in (None, WIDGET_TARGET)


def _comm_target(comm_id: Any) -> str | None:
    try:
        from comm import get_comm_manager

        known = get_comm_manager().comms.get(comm_id)
    except Exception:  # no comm manager (not a kernel): nothing to tell apart
        return None
    return getattr(known, "target_name", None) if known is not None else None


# --- the OutStream hold-back ---------------------------------------------------------------------


class _StreamHoldBack:
    """Wraps one OutStream's `_flush_buffers` (called only by its `_flush`, on the IO thread)."""

    def __init__(self, stream: Any) -> None:
        self.original = stream._flush_buffers
        self.held: dict[frozenset[tuple[str, Any]], str] = {}
        stream._flush_buffers = self.flush_buffers
        setattr(stream, _INSTALLED, True)

    def flush_buffers(self) -> Iterator[tuple[dict[str, Any], str]]:
        for parent, data in self.original():
            key = frozenset(parent.items())
            text = self.held.pop(key, "") + data
            task = _tasks.get(_msg_id(parent))
            end = task.holdback.safe_end(text) if task is not None and task.holdback else len(text)
            if end < len(text):
                self.held[key] = text[end:]
            yield parent, text[:end]
        for key in list(self.held):  # tails of Tasks that ended since: nothing can complete them now
            task = _tasks.get(_msg_id(dict(key)))
            if task is None or task.holdback is None:
                yield dict(key), self.held.pop(key)
