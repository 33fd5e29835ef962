"""What one request's stream reads, so a stream that cannot be read is reported as `malformed` in the
provider's words (docs/model.md "Unusable responses").

A provider (or a gateway in front of it) can send anything in a 200 stream: bytes that are not
UTF-8, a `data:` line that is a number or `null`, an event of the wrong shape (`"delta": null`).
The SDK parses what it gets without checking its shape, and agenthub then fails reading it with
an `AttributeError` or `TypeError` that says nothing to a user. Owns `StreamReading` (per request:
whether the provider answered, and the last event read, shown short) and `UnreadableStream`, the
one error such a stream becomes: the SDK wrappers (`sdk_passthrough.py`, `gemini_request.py`)
report into the request's `StreamReading` through a context variable the request's reader Task
carries, and `provider.py` turns a shape error raised after the provider answered into an
`UnreadableStream`. Classification (`classify.py`) reads it by type.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from contextvars import ContextVar

from pydantic import ValidationError

_PREVIEW_CHARS = 160
# What reading an event of the wrong shape raises inside an SDK or agenthub (google-genai
# validates its events with pydantic).
SHAPE_ERRORS: tuple[type[Exception], ...] = (
    AttributeError,
    TypeError,
    KeyError,
    IndexError,
    UnicodeDecodeError,
    ValidationError,
)
_BETWEEN_EVENTS = object()  # `last_event` while the SDK reads the next one


class UnreadableStream(ValueError):
    """The model's stream could not be read (a `malformed` outcome); the message says what came."""


class StreamReading:
    """One request's reading of its stream: set in the reader Task's context by `provider.py`."""

    def __init__(self) -> None:
        self.answered = False
        self.last_event: object = _BETWEEN_EVENTS  # kept as parsed; shown (`preview`) only if unreadable

    def unreadable(self, error: BaseException) -> UnreadableStream | None:
        """`error` as the stream's fault when the provider had answered and it is a shape error
        (or an event that is not JSON)."""
        if not self.answered:
            return None
        not_json = _json_error(error)
        if not_json is not None:
            return UnreadableStream(
                f"the model's stream sent an event that is not JSON ({_first_line(error)})"
            )
        if not isinstance(error, SHAPE_ERRORS):
            return None
        if isinstance(error, UnicodeDecodeError):
            where = error.object[error.start : error.start + 1]
            byte = f"byte 0x{where[0]:02x}" if where else "a byte"
            return UnreadableStream(
                f"the model's stream is not valid UTF-8 ({byte} at position {error.start})"
            )
        return unreadable_event(self.last_event, error)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _json_error(error: BaseException) -> json.JSONDecodeError | None:
    """The JSON decoding error in `error`'s cause chain, if any."""
    seen: set[int] = set()
    level: BaseException | None = error
    while level is not None and id(level) not in seen:
        if isinstance(level, json.JSONDecodeError):
            return level
        seen.add(id(level))
        level = level.__cause__ or level.__context__
    return None


def unreadable_event(event: object, error: BaseException) -> UnreadableStream:
    """Reading `event` (or, while between events, the SDK's parsing of the next one) failed."""
    reason = f"{type(error).__name__}: {_first_line(error)}"
    if event is _BETWEEN_EVENTS:
        return UnreadableStream(f"the model's stream could not be read ({reason})")
    return UnreadableStream(
        f"the model's stream sent an event the client cannot read: {preview(event)} ({reason})"
    )


_READING: ContextVar[StreamReading | None] = ContextVar("penguin_stream_reading", default=None)


def begin_reading() -> StreamReading:
    """A fresh `StreamReading` for the request whose stream this Task reads."""
    reading = StreamReading()
    _READING.set(reading)
    return reading


def mark_answered() -> None:
    """The provider answered this Task's request (the SDK call returned its stream)."""
    reading = _READING.get()
    if reading is not None:
        reading.answered = True


def preview(event: object) -> str:
    """An event as short JSON text (SDK objects by their fields as received)."""
    try:
        dump = getattr(event, "model_dump", None)
        data = dump(mode="json", exclude_unset=True, warnings=False) if callable(dump) else event
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=repr)
    except Exception:  # a preview of an unreadable event falls back to repr
        text = repr(event)
    return text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1] + "…"


def _is_object(event: object) -> bool:
    """Whether an SDK parsed the event into an object (a `data:` line holding a JSON number,
    string, list or null is passed through by the SDKs as that bare value)."""
    return not isinstance(event, str | bytes | int | float | list | tuple) and event is not None


class ReadEvents:
    """An SDK stream whose events are recorded in the request's `StreamReading`; an event that is
    not an object raises `UnreadableStream` at once. Every other attribute is the stream's."""

    def __init__(self, stream: AsyncIterable[object]) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> object:  # (the SDK's stream object: open)
        return getattr(self._stream, name)

    def __aiter__(self) -> AsyncIterator[object]:
        return self._events()

    async def _events(self) -> AsyncIterator[object]:
        reading = _READING.get() or StreamReading()
        events = aiter(self._stream)
        while True:
            reading.last_event = _BETWEEN_EVENTS
            try:
                event = await anext(events)
            except StopAsyncIteration:
                return
            reading.last_event = event
            if not _is_object(event):
                raise UnreadableStream(
                    f"the model's stream sent an event that is not a JSON object: {preview(event)}"
                )
            yield event


def read_events(stream: object) -> object:
    """`stream` recorded as it is read (anything that is not an async stream is returned as is)."""
    return ReadEvents(stream) if isinstance(stream, AsyncIterable) else stream
