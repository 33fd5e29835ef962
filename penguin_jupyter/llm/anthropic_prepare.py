"""The anthropic SDK's per-request copy of the body leaves out the conversation list.

`sdk_passthrough.py` hands the conversation (and the tool definitions) to the SDK's `extra_body`
so that the SDK's type-driven walk sees empty lists. The anthropic SDK (2.17) now merges
`extra_body` into the body first and then copies the whole tree (`_copy_and_prepare`:
`copy_tree`, which also reads file inputs such as `pathlib.Path` values), once per request, on the
event loop: ≈ 10–50 ms at 4,000 messages, in the same task step as the rest of the request.

`KeptListsUnwalked` stands in for `_copy_and_prepare` on the model's own SDK client object
(nothing process-wide; installed through `seams/llm_sdk.py`). It takes the lists the passthrough
put in `extra_body` out of a copy of the options, lets the SDK prepare the rest (the body still
names each field, as an empty list, so its key keeps its place), and puts each list back into the
prepared body under that key. The lists are agenthub's wire dicts (JSON values only: no file
inputs to read), so the body sent is byte for byte the SDK's own (tests/llm/test_llm_long_history.py
compares them). Anything else is left to the SDK. See docs/model-requests.md ("Long sessions").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from ..seams.llm_sdk import anthropic_options_copy, replace_copy_and_prepare
from .body_encoding import RequestOptions

KEPT_FIELDS = ("messages", "tools")

CopyAndPrepare = Callable[[RequestOptions], Awaitable[RequestOptions]]


class KeptListsUnwalked:
    """Callable replacing an anthropic SDK client's `_copy_and_prepare`."""

    def __init__(self, copy_and_prepare: CopyAndPrepare) -> None:
        self._copy_and_prepare = copy_and_prepare

    async def __call__(self, options: RequestOptions) -> RequestOptions:
        extra, body = options.extra_json, options.json_data
        if not isinstance(extra, Mapping) or not isinstance(body, Mapping):
            return await self._copy_and_prepare(options)
        kept = {
            name: extra[name]
            for name in KEPT_FIELDS
            if isinstance(extra.get(name), list) and body.get(name) == []
        }
        if not kept:
            return await self._copy_and_prepare(options)
        lighter: RequestOptions = anthropic_options_copy(options)
        lighter.extra_json = {key: value for key, value in extra.items() if key not in kept} or None
        prepared = await self._copy_and_prepare(lighter)
        if not isinstance(prepared.json_data, dict) or any(
            prepared.json_data.get(name) != [] for name in kept
        ):
            return await self._copy_and_prepare(options)  # not the shape read: the SDK's own way
        prepared.json_data.update(kept)
        return prepared


def install_kept_lists_unwalked(sdk: object) -> bool:
    """Give an anthropic SDK client object the hook. Returns whether it did."""
    return replace_copy_and_prepare(sdk, KeptListsUnwalked, KeptListsUnwalked)
