"""The conversation list reaches the wire without the SDK's per-request walk over it.

The openai and anthropic SDKs run every request body through `transform()` before sending it: a
recursive, type-annotation-driven walk that, for the conversation list, only copies plain JSON
(their message param types declare no aliases and no formats). On a long session that walk is
nearly all of a request's client-side cost — about 1 s of CPU at 4,000 messages, on the event
loop, on every request — and it grows with the whole history instead of with what is new.

agenthub owns the provider protocols and calls the SDK itself (`chat.completions.create`,
`responses.create`, `beta.messages.create`), with no hook to pass request options. So the SDK
client agenthub holds is wrapped in `SdkBodyPassthrough`, which hands the conversation list (and
the tool definitions, the other deep field) to the SDK's own `extra_body` option (merged into the
body as given, after the walk) and leaves an empty list in its place for the walk. The merge keeps the key where the walk put it, so the JSON sent is
byte for byte what the SDK would have built (tests/llm/test_llm_long_history.py captures both at the
server). Everything else — the other fields, headers, retries, streaming, errors — is the SDK's.

(The anthropic SDK merges `extra_body` before its own per-request copy of the body;
`anthropic_prepare.py` keeps the lists out of that copy.) Only plain lists are moved; an
`extra_body` that already names the field wins. The same wrapper
reports when `create` returns (the response headers arrived) or fails, for the model's
first-response budget (`answer_budget.py`) and the request's `StreamReading`
(`stream_reading.py`, which also sees every event the SDK parses), makes parallel tool calls
of a Chat Completions stream contiguous (`chat_tool_calls.py`), and lets the event loop run once before the SDK
starts building the body, so agenthub's conversion and the SDK's body build are two task steps,
not one. See docs/model-requests.md ("Long sessions").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from typing import cast

from .chat_tool_calls import tool_calls_by_index
from .classify import ProviderStreamError
from .stream_reading import mark_answered, read_events

# SDK resource path (attribute names from the client) → the create() arguments passed through:
# the conversation, and the tool definitions (constant per session, but deep JSON schemas that
# the walk visits key by key on every request).
BODY_LIST_FIELDS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("chat", "completions"): ("messages", "tools"),  # openai Chat Completions (openai-chat, GLM, Kimi, …)
    ("responses",): ("input", "tools"),  # openai Responses (openai-responses, GPT-6, DeepSeek, MiniMax)
    ("beta", "messages"): ("messages", "tools"),  # anthropic Messages (ant-messages, Claude)
}


# create() arguments agenthub passes that the SDK's create() does not take: they belong in the
# body, which is what `extra_body` is for (agenthub's vLLM adapter passes `chat_template_kwargs`
# as a keyword, which the openai SDK refuses with a TypeError before any request).
BODY_ONLY_ARGUMENTS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("chat", "completions"): ("chat_template_kwargs",),
}


# Resources whose streams carry the provider's errors as ordinary events the SDK yields (OpenAI
# Responses: `error`, `response.failed`); agenthub skips them as unused, so a failed response
# would end as a stream without its last event. They are raised as `ProviderStreamError`.
ERROR_EVENT_STREAMS = (("responses",),)

# Resources whose streams name parallel tool calls by index, which agenthub reads one call at a
# time: each call's deltas are made contiguous (`chat_tool_calls.py`).
TOOL_CALL_INDEX_STREAMS = (("chat", "completions"),)


def _leads_to_create(path: tuple[str, ...]) -> bool:
    return any(resource[: len(path)] == path for resource in BODY_LIST_FIELDS)


def passthrough_create(
    create: Callable[..., Awaitable[object]],
    fields: tuple[str, ...],
    on_response: Callable[[], None] | None = None,
    body_only: tuple[str, ...] = (),
) -> Callable[..., Awaitable[object]]:
    """`create` with each of `fields` (when a list) sent through `extra_body` instead of the SDK's
    walk, and each of `body_only` (when given) moved there as well; `on_response` is called once
    `create` returned or raised (not when it was cancelled)."""

    async def create_with_passthrough(*args: object, **kwargs: object) -> object:
        # agenthub converted the history in the task step that called us; the SDK builds and
        # encodes the body in the next one (docs/model-requests.md "Long sessions")
        await asyncio.sleep(0)
        for name in body_only:
            if name in kwargs:
                kwargs["extra_body"] = {**_extra_body(kwargs), name: kwargs.pop(name)}
        for field in fields:
            value = kwargs.get(field)
            extra_body = kwargs.get("extra_body")
            extra_is_free = extra_body is None or (isinstance(extra_body, dict) and field not in extra_body)
            if isinstance(value, list) and extra_is_free:
                kwargs[field] = []
                kwargs["extra_body"] = {**_extra_body(kwargs), field: value}
        try:
            response = await create(*args, **kwargs)
        except Exception:
            _notify(on_response)
            raise
        _notify(on_response)
        mark_answered()
        return read_events(response)

    return create_with_passthrough


def _extra_body(kwargs: dict[str, object]) -> Mapping[str, object]:
    """The call's `extra_body` so far (a mapping, as agenthub passes it)."""
    return cast(Mapping[str, object], kwargs.get("extra_body") or {})


def _raising_error_events(create: Callable[..., Awaitable[object]]) -> Callable[..., Awaitable[object]]:
    async def create_raising_error_events(*args: object, **kwargs: object) -> object:
        return with_error_events_raised(await create(*args, **kwargs))

    return create_raising_error_events


def _tool_calls_by_index(create: Callable[..., Awaitable[object]]) -> Callable[..., Awaitable[object]]:
    async def create_with_tool_calls_by_index(*args: object, **kwargs: object) -> object:
        return tool_calls_by_index(await create(*args, **kwargs))

    return create_with_tool_calls_by_index


def _notify(callback: Callable[[], None] | None) -> None:
    if callback is not None:
        callback()


def _event_error(event: object) -> ProviderStreamError | None:
    """The provider error an OpenAI Responses stream event carries, if it is one."""
    kind = getattr(event, "type", None)
    if kind == "error":
        source: object = event
    elif kind == "response.failed":
        source = getattr(getattr(event, "response", None), "error", None)
    else:
        return None
    code = getattr(source, "code", None)
    message = getattr(source, "message", None) or "the response failed"
    return ProviderStreamError(str(message), (code,) if isinstance(code, str) and code else ())


class _ErrorEventStream:
    """An SDK stream that raises the provider's error events instead of yielding them."""

    def __init__(self, stream: AsyncIterable[object]) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> object:  # (the SDK's stream object: open)
        return getattr(self._stream, name)

    def __aiter__(self) -> AsyncIterator[object]:
        return self._events()

    async def _events(self) -> AsyncIterator[object]:
        async for event in self._stream:
            error = _event_error(event)
            if error is not None:
                raise error
            yield event


def with_error_events_raised(stream: object) -> object:
    return _ErrorEventStream(stream) if isinstance(stream, AsyncIterable) else stream


class SdkBodyPassthrough:
    """Stands in for an SDK client (or one of its resources): every attribute is the wrapped
    object's, except the `create` of the resources in `BODY_LIST_FIELDS`."""

    def __init__(
        self, target: object, path: tuple[str, ...] = (), on_response: Callable[[], None] | None = None
    ) -> None:
        self._target = target
        self._path = path
        self._on_response = on_response

    @property
    def wrapped(self) -> object:
        return self._target

    def __getattr__(self, name: str) -> object:
        value = getattr(self._target, name)
        if name == "create" and self._path in BODY_LIST_FIELDS:
            body_only = BODY_ONLY_ARGUMENTS.get(self._path, ())
            create = passthrough_create(value, BODY_LIST_FIELDS[self._path], self._on_response, body_only)
            if self._path in TOOL_CALL_INDEX_STREAMS:
                create = _tool_calls_by_index(create)
            return _raising_error_events(create) if self._path in ERROR_EVENT_STREAMS else create
        path = (*self._path, name)
        if _leads_to_create(path):
            return SdkBodyPassthrough(value, path, self._on_response)
        return value

    def __repr__(self) -> str:
        return f"SdkBodyPassthrough({self._target!r})"
