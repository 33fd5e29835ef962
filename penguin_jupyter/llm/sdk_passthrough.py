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
byte for byte what the SDK would have built (tests/test_llm_long_history.py captures both at the
server). Everything else — the other fields, headers, retries, streaming, errors — is the SDK's.

Only plain lists are moved; an `extra_body` that already names the field wins. The same wrapper
reports when `create` returns (the response headers arrived) or fails, for the model's
first-response budget (`answer_budget.py`). See docs/model-requests.md ("Long sessions").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

# SDK resource path (attribute names from the client) → the create() arguments passed through:
# the conversation, and the tool definitions (constant per session, but deep JSON schemas that
# the walk visits key by key on every request).
BODY_LIST_FIELDS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("chat", "completions"): ("messages", "tools"),  # openai Chat Completions (openai-chat, GLM, Kimi, …)
    ("responses",): ("input", "tools"),  # openai Responses (openai-responses, GPT-6, DeepSeek, MiniMax)
    ("beta", "messages"): ("messages", "tools"),  # anthropic Messages (ant-messages, Claude)
}


def _leads_to_create(path: tuple[str, ...]) -> bool:
    return any(resource[: len(path)] == path for resource in BODY_LIST_FIELDS)


def passthrough_create(
    create: Callable[..., Awaitable[Any]],
    fields: tuple[str, ...],
    on_response: Callable[[], None] | None = None,
) -> Callable[..., Awaitable[Any]]:
    """`create` with each of `fields` (when a list) sent through `extra_body` instead of the SDK's
    walk; `on_response` is called once `create` returned or raised (not when it was cancelled)."""

    async def create_with_passthrough(*args: Any, **kwargs: Any) -> Any:
        for field in fields:
            value = kwargs.get(field)
            extra_body = kwargs.get("extra_body")
            extra_is_free = extra_body is None or (isinstance(extra_body, dict) and field not in extra_body)
            if isinstance(value, list) and extra_is_free:
                kwargs[field] = []
                kwargs["extra_body"] = {**(extra_body or {}), field: value}
        try:
            response = await create(*args, **kwargs)
        except Exception:
            _notify(on_response)
            raise
        _notify(on_response)
        return response

    return create_with_passthrough


def _notify(callback: Callable[[], None] | None) -> None:
    if callback is not None:
        callback()


class SdkBodyPassthrough:
    """Stands in for an SDK client (or one of its resources): every attribute is the wrapped
    object's, except the `create` of the resources in `BODY_LIST_FIELDS`."""

    def __init__(
        self, target: Any, path: tuple[str, ...] = (), on_response: Callable[[], None] | None = None
    ) -> None:
        self._target = target
        self._path = path
        self._on_response = on_response

    @property
    def wrapped(self) -> Any:
        return self._target

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name == "create" and self._path in BODY_LIST_FIELDS:
            return passthrough_create(value, BODY_LIST_FIELDS[self._path], self._on_response)
        path = (*self._path, name)
        if _leads_to_create(path):
            return SdkBodyPassthrough(value, path, self._on_response)
        return value

    def __repr__(self) -> str:
        return f"SdkBodyPassthrough({self._target!r})"
