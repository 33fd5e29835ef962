"""A Gemini request sends the history's wire form kept from earlier requests (google-genai).

google-genai turns the `Content` list agenthub hands it into the request body on every request:
pydantic validation of every `Content` (`_GenerateContentParameters`), its conversion to the wire
form (`_Content_to_mldev`), then `json.dumps` of the whole body — ≈ 2.3 s of CPU on the event loop
at 4,000 messages, growing with the history. `history_conversion.py` keeps the `Content` objects
of the history from request to request, so their wire form and JSON can be kept too.

`PreConvertedContents` stands in for `generate_content_stream` on the model's own SDK client (and
`_build_request` on its own `BaseApiClient`; nothing process-wide, installed through
`seams/llm_sdk.py`). For a `Content` list it produces the JSON of each element not at the same
position last time with the SDK's own steps (`llm_sdk.gemini_wire_contents`, then the
SDK's `json.dumps`), and calls the SDK with a one-`Content` placeholder list carrying a unique
token. Everything else — the config, the path, headers, retries, continuation hops, streaming,
errors — is the SDK's (its events are recorded for the request, `stream_reading.py`). When the SDK builds that request's HTTP body, the placeholder's JSON is
replaced by the kept JSON of the whole list and the body handed over as bytes, which the SDK sends
as they are: byte for byte what it would have built (tests/llm/test_llm_long_history.py compares
them at the scripted server). See docs/model-requests.md ("Long sessions").
"""

from __future__ import annotations

import json
import operator
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from google.genai import types

from ..seams.llm_sdk import (
    gemini_api_client,
    gemini_wire_contents,
    replace_gemini_build_request,
    replace_gemini_stream,
)
from .loop_slices import run_in_slices
from .stream_reading import mark_answered, read_events


class BuiltRequest(Protocol):
    """What the hook reads and sets of the request the Gemini SDK builds (`HttpRequest`)."""

    data: object


_NOT_ENCODED = object()  # in place of a Content whose JSON is not kept
PENDING_REQUESTS = 4  # placeholders kept for the requests (and their continuation hops) in flight


class PreConvertedContents:
    """The stream hook and the request-building hook of one Gemini SDK client."""

    def __init__(self, api_client: object) -> None:
        self._api_client = api_client
        self._items: list[object] = []  # the Content objects of the last request
        self._encoded: list[str] = []  # their JSON
        self._pending: OrderedDict[str, str] = OrderedDict()  # placeholder token -> contents JSON
        self._prefix = f"\ue000penguin-{uuid.uuid4().hex}-"
        self._count = 0
        self.encoded_last = 0  # Contents converted by the last request (for tests)

    async def encode(self, contents: list[object]) -> str:
        """The JSON array of `contents`; only elements not at the same position last time go
        through the SDK's conversion, in slices with the event loop running between them
        (`loop_slices.py`: after a resume that is the whole history, ≈ 0.3 ms per `Content`)."""
        same = list(map(operator.is_, contents, self._items))
        encoded = self._encoded[: len(same)]
        changed = [n for n, kept in enumerate(same) if not kept] + list(range(len(same), len(contents)))
        encoded.extend([""] * (len(contents) - len(encoded)))

        pending = set(changed)

        def convert(positions: Sequence[int]) -> None:
            wire = gemini_wire_contents(self._api_client, [contents[n] for n in positions])
            for n, element in zip(positions, wire, strict=True):
                encoded[n] = json.dumps(element)
            pending.difference_update(positions)

        try:
            await run_in_slices(changed, convert)
        finally:  # a request stopped between slices keeps what its slices converted
            items = list(contents)
            for n in pending:
                items[n] = _NOT_ENCODED
            self._items, self._encoded = items, encoded
        self.encoded_last = len(changed)
        return "[" + ", ".join(encoded) + "]"

    def wrap_stream(self, stream: Callable[..., Awaitable[object]]) -> Callable[..., Awaitable[object]]:
        async def generate_content_stream(*, model: str, contents: object, config: object = None) -> object:
            if not (
                isinstance(contents, list)
                and contents
                and all(isinstance(c, types.Content) for c in contents)
            ):
                return _answered(await stream(model=model, contents=contents, config=config))
            self._count += 1
            token = f"{self._prefix}{self._count}"
            self._pending[token] = await self.encode(contents)
            while len(self._pending) > PENDING_REQUESTS:
                self._pending.popitem(last=False)
            placeholder = types.Content(role="user", parts=[types.Part(text=token)])
            return _answered(await stream(model=model, contents=[placeholder], config=config))

        return generate_content_stream

    def wrap_build_request(self, build: Callable[..., BuiltRequest]) -> Callable[..., BuiltRequest]:
        def build_request(*args: object, **kwargs: object) -> BuiltRequest:
            request = build(*args, **kwargs)
            data = request.data
            contents = data.get("contents") if isinstance(data, dict) else None
            token = _placeholder_token(contents)
            if token is None or token not in self._pending:
                return request
            body = json.dumps(data)
            request.data = body.replace(json.dumps(contents), self._pending[token], 1).encode("utf-8")
            return request

        return build_request


def _answered(stream: object) -> object:
    """The SDK's stream, its events recorded for the request (`stream_reading.py`)."""
    mark_answered()
    return read_events(stream)


def _placeholder_token(contents: object) -> str | None:
    if not (isinstance(contents, list) and len(contents) == 1 and isinstance(contents[0], dict)):
        return None
    parts = contents[0].get("parts")
    if not (isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict)):
        return None
    text = parts[0].get("text")
    return text if isinstance(text, str) and text.startswith("\ue000penguin-") else None


def install_pre_converted_contents(sdk: object) -> PreConvertedContents | None:
    """Give a `genai.Client` the two hooks; None when `sdk` is not one."""
    api_client = gemini_api_client(sdk)
    if api_client is None:
        return None
    hooks = PreConvertedContents(api_client)
    replace_gemini_stream(sdk, hooks.wrap_stream)
    replace_gemini_build_request(api_client, hooks.wrap_build_request)
    return hooks
