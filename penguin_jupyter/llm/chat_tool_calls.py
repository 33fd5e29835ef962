"""Parallel tool calls of a Chat Completions stream reach agenthub one call at a time
(docs/model.md "Parallel tool calls in Chat Completions streams").

A Chat Completions stream names each tool-call delta's call by `index`. OpenAI sends one call's
deltas after another, but some OpenAI-compatible servers interleave them (call 0's opening, call
1's opening, a fragment of 0, a fragment of 1, …). agenthub's openai-chat client reads the deltas
as one call at a time — a delta that carries a name starts the next call — so interleaved
fragments would be glued onto the wrong call (arguments that do not parse, or wrong ones).

`ToolCallsByIndex` stands in for the SDK's chunk stream (wrapped around `chat.completions.create`
by `sdk_passthrough.py`): the deltas of the first call pass through as they arrive; those of every
other call are held and sent, each call's deltas merged into one, in index order just before the
chunk that ends the response (a finish reason or the usage chunk). So every call reaches agenthub
whole whatever order the server used; the cost is that the second and later calls of a response
appear when the response ends rather than while they stream. Every other chunk passes unchanged;
a chunk of an unexpected shape is left for agenthub (and `stream_reading.py`) to report.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from openai.types.chat.chat_completion_chunk import (
    ChatCompletionChunk,
    Choice,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
)


def _choice(chunk: ChatCompletionChunk) -> Choice | None:
    choices = getattr(chunk, "choices", None)  # (a server's chunk is built unchecked: any shape)
    return choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], Choice) else None


def _tool_call_deltas(chunk: ChatCompletionChunk) -> list[ChoiceDeltaToolCall]:
    delta = getattr(_choice(chunk), "delta", None)
    calls = getattr(delta, "tool_calls", None)
    return calls if isinstance(calls, list) else []


def _ends_response(chunk: ChatCompletionChunk) -> bool:
    """agenthub closes the open call at a chunk with a finish reason or usage."""
    return bool(getattr(_choice(chunk), "finish_reason", None) or getattr(chunk, "usage", None))


def _with_calls(
    chunk: ChatCompletionChunk, calls: list[ChoiceDeltaToolCall], *, ending: bool
) -> ChatCompletionChunk:
    """A copy of `chunk` whose delta carries `calls` (None when empty); without its finish
    reason and usage unless `ending`."""
    choice = _choice(chunk)
    if choice is None:
        return chunk
    delta = choice.delta.model_copy(update={"tool_calls": calls or None})
    choice_update: dict[str, object] = {"delta": delta}
    chunk_update: dict[str, object] = {}
    if not ending:
        choice_update["finish_reason"] = None
        chunk_update["usage"] = None
    chunk_update["choices"] = [choice.model_copy(update=choice_update)]
    return chunk.model_copy(update=chunk_update)


def _only_ending(chunk: ChatCompletionChunk) -> ChatCompletionChunk:
    """`chunk` with an empty delta: its finish reason and usage alone."""
    choice = _choice(chunk)
    if choice is None:
        return chunk
    return chunk.model_copy(update={"choices": [choice.model_copy(update={"delta": ChoiceDelta()})]})


def _merged(
    template: ChatCompletionChunk, index: int, deltas: list[ChoiceDeltaToolCall]
) -> ChatCompletionChunk:
    """One chunk carrying call `index` whole: its id and name, all its argument fragments."""
    call_id = next((d.id for d in deltas if getattr(d, "id", None)), None)
    functions = [getattr(d, "function", None) for d in deltas]
    name = next((getattr(f, "name", None) for f in functions if getattr(f, "name", None)), None)
    arguments = "".join(getattr(f, "arguments", None) or "" for f in functions)
    call = ChoiceDeltaToolCall(
        index=index,
        id=call_id,
        type="function",
        function=ChoiceDeltaToolCallFunction(name=name, arguments=arguments),
    )
    choice = _choice(template)
    choices = (
        [choice.model_copy(update={"delta": ChoiceDelta(tool_calls=[call]), "finish_reason": None})]
        if choice
        else []
    )
    return template.model_copy(update={"choices": choices, "usage": None})


class ToolCallsByIndex:
    """The SDK's chunk stream with each tool call's deltas contiguous (see the module docstring).
    Every other attribute is the wrapped stream's (an SDK object: open)."""

    def __init__(self, stream: AsyncIterable[object]) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)

    def __aiter__(self) -> AsyncIterator[object]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[object]:
        held: dict[int, list[ChoiceDeltaToolCall]] = {}
        first: int | None = None
        template: ChatCompletionChunk | None = None
        async for chunk in self._stream:
            if not isinstance(chunk, ChatCompletionChunk):  # not the SDK's chunk: agenthub's to judge
                yield chunk
                continue
            calls = _tool_call_deltas(chunk)
            if calls:
                template = chunk
                passed = []
                for call in calls:
                    index = getattr(call, "index", None)
                    if first is None and isinstance(index, int):
                        first = index
                    if isinstance(index, int) and index != first:
                        held.setdefault(index, []).append(call)
                    else:
                        passed.append(call)
                if len(passed) != len(calls):
                    chunk = _with_calls(chunk, passed, ending=True)
            if held and template is not None and _ends_response(chunk):
                if _choice(chunk) is not None:  # its own delta first, then the held calls, then the end
                    yield _with_calls(chunk, _tool_call_deltas(chunk), ending=False)
                    chunk = _only_ending(chunk)
                for index in sorted(held):
                    yield _merged(template, index, held[index])
                held.clear()
            yield chunk
        for index in sorted(held):  # a stream cut before its end: agenthub reports that
            if template is not None:
                yield _merged(template, index, held[index])


def tool_calls_by_index(stream: object) -> object:
    return ToolCallsByIndex(stream) if isinstance(stream, AsyncIterable) else stream
