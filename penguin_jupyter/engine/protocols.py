"""The small seams the context engine talks through besides the LLM and the Environment.

Owns the shapes only: the Trace sink the engine records into (implemented by
`penguin_jupyter.trace.TraceWriter`), the background-notice queue the session fills
(`NoticeQueue` is a ready-made one), the image-fold hook used for steering on non-vision
models, and the `create_llm` factory compaction needs. Behaviour lives in `context_engine.py`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from ..interfaces import LLMInterface
from ..omni import OmniMessage, TokenCounts

__all__ = ["BackgroundNotices", "CreateLLM", "FoldInputImages", "NoticeQueue", "TraceSink"]


@runtime_checkable
class TraceSink(Protocol):
    """Where the engine records (docs/engine.md "Collaborators and settings": the trace sink).

    `write` appends one message; the engine only hands it session_meta, complete model
    messages and events without `origin` (never partials). `rotate` (optional: a sink without
    it simply keeps one file) closes the current file and makes the next `write` open the next
    one (`_002`, …), after a compaction. Both are synchronous; a raised
    exception is logged by the engine (`[trace] write failed: …`) and never ends the run.
    """

    def write(self, msg: OmniMessage) -> None: ...

    def rotate(self) -> object: ...


@runtime_checkable
class BackgroundNotices(Protocol):
    """Harness notices waiting for the model (docs/engine.md "Background notices"), e.g. `[background_task_done]` reports.

    `drain()` takes and clears every queued notice (user-role texts, usually with
    `sender="harness"`); `pending()` says how many wait, without taking them.
    """

    def drain(self) -> list[OmniMessage]: ...

    def pending(self) -> int: ...


class NoticeQueue:
    """A plain FIFO implementation of `BackgroundNotices`; `push` may be called any time."""

    def __init__(self) -> None:
        self._items: deque[OmniMessage] = deque()

    def push(self, notice: OmniMessage) -> None:
        self._items.append(notice)

    def drain(self) -> list[OmniMessage]:
        items = list(self._items)
        self._items.clear()
        return items

    def pending(self) -> int:
        return len(self._items)


FoldInputImages = Callable[[list[OmniMessage]], Awaitable[list[OmniMessage]]]
"""Non-vision models: turn an input's images into `[attached image: …]` lines of its last
user text (or a lines-only text). Must return no image message and at least one user text."""

CreateLLM = Callable[[TokenCounts], LLMInterface]
"""Build a fresh model context after compaction; it continues from the given session totals."""
