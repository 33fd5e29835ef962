"""Background completion reports (docs/environment.md "Background completion reports").

Owns the report event, the Environment's single-listener hub (events before a listener attaches
are buffered and flushed on attach; after dispose they are dropped), the label/output shaping
and the `[background_task_done]` harness notice text the session delivers to the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..omni import OmniMessage, user_text
from ..omni.markers import BACKGROUND_TASK_DONE, marker_block

REPORT_OUTPUT_TAIL = 4000
REPORT_LABEL_MAX = 120


@dataclass(frozen=True)
class BackgroundEvent:
    kind: Literal["command", "subagent"]
    id: str
    label: str
    status: Literal["completed", "failed"]
    detail: str
    output: str


BackgroundListener = Callable[[BackgroundEvent], None]


def report_label(text: str) -> str:
    first = text.split("\n", 1)[0]
    if len(first) > REPORT_LABEL_MAX:
        return first[: REPORT_LABEL_MAX - 1] + "…"
    return first


def report_output(text: str) -> str:
    if len(text) > REPORT_OUTPUT_TAIL:
        return f"[earlier output dropped: exceeded {REPORT_OUTPUT_TAIL} chars]\n" + text[-REPORT_OUTPUT_TAIL:]
    return text


def background_notice_text(event: BackgroundEvent) -> str:
    lines = [
        "Automatic notification from the harness, not the user: a background task you started has finished.",
        f"kind: {event.kind}",
        f"id: {event.id}",
        f"status: {event.status}",
    ]
    if event.detail:
        lines.append(f"detail: {event.detail}")
    noun = "Background command" if event.kind == "command" else "Background subagent"
    verb = "finished" if event.status == "completed" else "failed"
    id_label = "process_id" if event.kind == "command" else "subagent_id"
    head = f"{noun} {verb}: `{event.label}` ({id_label} {event.id})"
    if event.detail:
        head += f" — {event.detail}"
    text = marker_block(BACKGROUND_TASK_DONE, "\n".join(lines)) + "\n\n" + head
    if event.output.strip():
        text += "\n\n" + event.output
    return text


def background_notice_message(event: BackgroundEvent) -> OmniMessage:
    """The user text (sender "harness") the session feeds the model for one event."""
    return user_text(background_notice_text(event), sender="harness")


class NoticeHub:
    """Single-listener delivery with buffering; thread-safe (reports fire on worker threads).

    A listener attached from inside a running event loop is called on that loop
    (`call_soon_threadsafe`); otherwise it is called directly on the reporting thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[BackgroundEvent] = []
        self._listener: BackgroundListener | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._disposed = False

    def set_listener(self, listener: BackgroundListener | None) -> None:
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            self._listener = listener
            self._loop = loop
            flush = self._pending if listener is not None else []
            if listener is not None:
                self._pending = []
        for event in flush:
            self._deliver(listener, loop, event)  # type: ignore[arg-type]

    def emit(self, event: BackgroundEvent) -> None:
        with self._lock:
            if self._disposed:
                return
            listener, loop = self._listener, self._loop
            if listener is None:
                self._pending.append(event)
                return
        self._deliver(listener, loop, event)

    def drain(self) -> list[BackgroundEvent]:
        """Pull-style access: the buffered events (only buffered while no listener is set)."""
        with self._lock:
            events, self._pending = self._pending, []
        return events

    def dispose(self) -> None:
        with self._lock:
            self._disposed = True
            self._pending = []
            self._listener = None

    @property
    def disposed(self) -> bool:
        return self._disposed

    @staticmethod
    def _deliver(
        listener: BackgroundListener, loop: asyncio.AbstractEventLoop | None, event: BackgroundEvent
    ) -> None:
        if loop is not None and not loop.is_closed():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(listener, event)
                    return
        listener(event)
