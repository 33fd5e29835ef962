"""The request body is encoded from per-message JSON kept between requests.

Chat APIs are stateless: every request carries the whole conversation, and the SDK encodes the
whole body to JSON each time (`openapi_dumps`, ≈ 1 µs per message: 4 ms at 4,000 messages, the
largest client-side cost that still grew with the history once `sdk_passthrough.py` and
`history_conversion.py` were in place). The wire dicts of earlier messages are the same objects
from request to request (`history_conversion.py` keeps them), so their JSON can be kept too.

`PreEncodedBody` stands in for the openai SDK client's `_prepare_options` — the hook the SDK
calls on every attempt, just before building the HTTP request — on the one SDK client object the
model owns (nothing process-wide; installed by `seams/llm_sdk.py`, like every use of an internal). For the lists `sdk_passthrough.py` put in
`extra_body` it encodes each element once, joins the kept JSON, and hands the SDK the finished
bytes, which its request builder sends as they are. The bytes are exactly the SDK's own
`openapi_dumps` of the merged body (same encoder, same options, elements joined as the encoder
joins them; tests/llm/test_llm_long_history.py compares them at the server). Anything else — files,
raw content, a body that is not a mapping — is left to the SDK. See docs/model-requests.md.
"""

from __future__ import annotations

import itertools
import operator
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol

from ..seams.llm_sdk import is_omitted, openapi_dumps, replace_prepare_options
from .loop_slices import run_in_slices

ENCODED_LIST_FIELDS = ("messages", "input", "tools")


class RequestOptions(Protocol):
    """What the hooks read and set of an SDK's `FinalRequestOptions` (openai's, anthropic's)."""

    json_data: object
    extra_json: object
    files: object
    content: object


PrepareOptions = Callable[[RequestOptions], Awaitable[RequestOptions]]


class _KeptList:
    """One field's elements and their JSON from the last request, position by position."""

    def __init__(self) -> None:
        self.items: list[object] = []
        self.encoded: list[bytes] = []

    async def encode(self, items: list[object]) -> bytes:
        """The JSON array of `items`; only elements not at the same position last time are encoded
        (the scan for them runs in C: per request, the cost is the new elements), in slices with
        the event loop running between them (`loop_slices.py`; after a resume that is all of them)."""
        same = list(map(operator.is_, items, self.items))
        encoded = self.encoded[: len(same)]
        changed = list(itertools.compress(range(len(same)), map(operator.not_, same)))
        changed.extend(range(len(same), len(items)))
        encoded.extend([b""] * (len(items) - len(encoded)))

        def encode_at(positions: Sequence[int]) -> None:
            for n in positions:
                encoded[n] = openapi_dumps(items[n])

        await run_in_slices(changed, encode_at)
        self.items, self.encoded = list(items), encoded
        return b"[" + b",".join(encoded) + b"]"


class PreEncodedBody:
    """Callable replacing an SDK client's `_prepare_options` (see the module docstring)."""

    def __init__(self, prepare: PrepareOptions) -> None:
        self._prepare = prepare
        self._kept: dict[str, _KeptList] = {}
        self._token = uuid.uuid4().hex

    async def __call__(self, options: RequestOptions) -> RequestOptions:
        options = await self._prepare(options)
        extra = options.extra_json
        body = options.json_data
        if (
            not isinstance(extra, Mapping)
            or not isinstance(body, Mapping)
            or options.files
            or options.content
        ):
            return options
        fields = [name for name in ENCODED_LIST_FIELDS if isinstance(extra.get(name), list)]
        if not fields:
            return options
        options.json_data = await self.encode({**body, **extra}, fields)
        options.extra_json = None
        return options

    async def encode(self, merged: dict[str, object], fields: list[str]) -> bytes:
        """`openapi_dumps` of `merged` without its omitted values, `fields` from kept JSON."""
        body = {key: value for key, value in merged.items() if not is_omitted(value)}
        placeholders = {name: f"\ue000penguin-{self._token}-{name}" for name in fields}
        encoded = openapi_dumps({**body, **placeholders})
        for name in fields:
            elements = await self._kept.setdefault(name, _KeptList()).encode(_list(body[name]))
            encoded = encoded.replace(openapi_dumps(placeholders[name]), elements, 1)
        return encoded


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []  # (the fields were chosen for being lists)


def install_pre_encoded_body(sdk: object) -> bool:
    """Give an openai SDK client object a `PreEncodedBody` hook (the anthropic SDK has its own
    encoder; its bodies are left to it). Returns whether it did."""
    return replace_prepare_options(sdk, PreEncodedBody, PreEncodedBody)
