"""The kernel's seams: what the notebook layer relies on in ipykernel, jupyter_client and IPython
beyond their documented use (docs/seams.md). Imported by `notebook/` only (tests/test_layering.py):
the core never sees a kernel.

1. `kernel.session_send` (protection) — jupyter_client's `Session.send` (public), wrapped on the
   running kernel's `Session` objects by `notebook/output/task_sink.py`: redaction at the sink
   and the stream hold-back that joins a secret split across two writes. Checked: each session
   found (`kernel.session`, the display publisher's, the output streams') has a `send` that takes
   `(stream, msg_or_type, content=, parent=, ident=, buffers=, track=, header=, metadata=)` and a
   `msg`. Off: a Task that has secrets to protect does not run, and `%penguin` line commands
   other than `status` and `help` say so instead of printing.
2. `ipython.display_capture` (protection) — IPython's `DisplayPublisher.publish` and
   `DisplayFormatter.format` (public methods), wrapped on the shell's two objects while a
   `run_python` call or a thread it started runs (`notebook/output/output_router.py`):
   what that code displays is made fetch-free and redacted, and the model gets a copy. Checked:
   both are callable with the arguments IPython passes. Off: `run_python` runs no code and says
   why.
3. `ipykernel.display_stream` (fast path) — the display publisher's `session`, `pub_socket`
   and `parent_header` (ipykernel's `ZMQDisplayPublisher` attributes, not a documented API), used
   to send the live view's streamed text as iopub `stream` messages of the running cell
   (`notebook/live/live_stream.py`). Off: the live text uses split HTML widgets.

Nothing here is a class patch: each wrapper is on one object of the running kernel.
"""

from __future__ import annotations

import inspect
from typing import Any

from . import NotInUse, declare

_SEND_ARGUMENTS = ("stream", "msg_or_type")
_SEND_KEYWORDS = ("content", "parent", "ident", "buffers", "track", "header", "metadata")
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def kernel_sessions(kernel: Any) -> list[Any]:
    """The distinct `Session` objects the running kernel publishes through: its own, the display
    publisher's and each output stream's (`sys.stdout` / `sys.stderr`, under any proxy)."""
    import sys

    shell = getattr(kernel, "shell", None)
    publisher = getattr(shell, "display_pub", None)
    streams = [getattr(getattr(sys, name), "wrapped", getattr(sys, name)) for name in ("stdout", "stderr")]
    found: list[Any] = []
    for session in (getattr(kernel, "session", None), getattr(publisher, "session", None), *(
        getattr(stream, "session", None) for stream in streams
    )):
        if session is not None and all(session is not other for other in found):
            found.append(session)
    return found


def send_problem(session: Any) -> str | None:
    """Why `session.send` cannot be wrapped as `task_sink` wraps it (None: it can)."""
    send, msg = getattr(session, "send", None), getattr(session, "msg", None)
    if not callable(send) or not callable(msg):
        return f"{type(session).__name__} has no send/msg"
    try:
        signature = inspect.signature(send)
    except ValueError:  # no signature to read (a C callable): the call is all there is
        return None
    named = [name for name, p in signature.parameters.items() if p.kind in _NAMED]
    if named[: len(_SEND_ARGUMENTS)] != list(_SEND_ARGUMENTS) or not set(_SEND_KEYWORDS) <= set(named):
        return f"{type(session).__name__}.send does not take {', '.join(_SEND_ARGUMENTS + _SEND_KEYWORDS)}"
    return None


def _check_session_send() -> str | None:
    kernel = getattr(_shell(), "kernel", None)
    if kernel is None:
        raise NotInUse("not in a Jupyter kernel")
    sessions = kernel_sessions(kernel)
    if not sessions:
        return "the kernel has no Session"
    for session in sessions:
        problem = send_problem(session)
        if problem is not None:
            return problem
    return None


SESSION_SEND = declare(
    "kernel.session_send",
    what="jupyter_client Session.send of the running kernel, wrapped: redaction at the sink and the "
    "hold-back of a secret split across writes",
    kind="protection",
    when_off="a %%penguin cell with secrets to protect does not run",
    check=_check_session_send,
)


def publish_problem(publisher: Any, formatter: Any) -> str | None:
    """Why the shell's display publisher or formatter cannot be wrapped (None: they can)."""
    publish, format_ = getattr(publisher, "publish", None), getattr(formatter, "format", None)
    if not callable(publish) or (formatter is not None and not callable(format_)):
        return "IPython's display publisher or formatter has no publish/format"
    try:
        parameters = inspect.signature(publish).parameters
        named = [name for name, p in parameters.items() if p.kind in _NAMED]
        if named[:2] != ["data", "metadata"] or not {"transient", "update"} <= set(named):
            return f"IPython's display publisher or formatter takes other arguments: publish({', '.join(parameters)})"
        if format_ is not None:
            inspect.signature(format_).bind(object())
    except TypeError as exc:
        return f"IPython's display publisher or formatter takes other arguments: {exc}"
    except ValueError:
        return None
    return None


def _check_display_capture() -> str | None:
    shell = _shell()
    if getattr(shell, "display_pub", None) is None:
        raise NotInUse("no IPython shell")
    return publish_problem(shell.display_pub, getattr(shell, "display_formatter", None))


DISPLAY_CAPTURE = declare(
    "ipython.display_capture",
    what="IPython DisplayPublisher.publish and DisplayFormatter.format, wrapped while run_python "
    "code runs: its displays made fetch-free and redacted, a copy for the model",
    kind="protection",
    when_off="run_python runs no code",
    check=_check_display_capture,
)


def _stream_parts(publisher: Any) -> tuple[Any, Any] | None:
    session, socket = getattr(publisher, "session", None), getattr(publisher, "pub_socket", None)
    if session is None or socket is None or not callable(getattr(session, "msg", None)):
        return None
    if not callable(getattr(session, "send", None)) or not isinstance(getattr(publisher, "parent_header", None), dict):
        return None
    return session, socket


def _check_display_stream() -> str | None:
    publisher = getattr(_shell(), "display_pub", None)
    if publisher is None or getattr(publisher, "pub_socket", None) is None:
        raise NotInUse("not in a Jupyter kernel")
    if _stream_parts(publisher) is None:
        return "ipykernel's display publisher has no session, pub_socket and parent_header"
    return None


DISPLAY_STREAM = declare(
    "ipykernel.display_stream",
    what="ipykernel ZMQDisplayPublisher.session, .pub_socket, .parent_header (the live text sent as "
    "stream messages)",
    kind="fast path",
    when_off="the live text is shown in split HTML widgets",
    check=_check_display_stream,
)


class KernelStream:
    """Sends `stream` messages on the kernel's iopub channel under the current cell's request
    (the display publisher's parent header)."""

    def __init__(self, publisher: Any) -> None:
        self.publisher = publisher

    @classmethod
    def find(cls) -> KernelStream | None:
        """The running kernel's stream sender; None outside an ipykernel or with the seam off."""
        publisher = getattr(_shell(), "display_pub", None)
        if publisher is None or getattr(publisher, "pub_socket", None) is None:
            return None
        if not DISPLAY_STREAM.enabled() or _stream_parts(publisher) is None:
            return None
        return cls(publisher)

    def parent_id(self) -> str:
        header = getattr(self.publisher, "parent_header", None) or {}
        return str(header.get("msg_id", "")) if isinstance(header, dict) else ""

    def send(self, text: str) -> None:
        pub = self.publisher
        session = pub.session
        msg = session.msg("stream", {"name": "stdout", "text": text}, parent=pub.parent_header)
        session.send(pub.pub_socket, msg, ident=b"stream.stdout")
