"""The shape of a static transcript bundle, as its writer and its renderers share it.

Owns `TranscriptBundle` (version 1): what `transcript_bundle.make_bundle` writes and
`transcript_bundle.read_bundle` normalizes any saved bundle to, and what `transcript_html` /
`transcript_text` render. Building and checking a bundle is `transcript_bundle.py`'s; this module
only names its keys, so the renderers need not import the writer.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from ..kernel_shapes import JsonObject


class TranscriptBundle(TypedDict):
    """A version-1 bundle, every value checked (`read_bundle`) or made here (`make_bundle`)."""

    version: int
    session: dict[str, str]  # transcript_bundle.SESSION_KEYS
    status: str  # one of the six stop reasons
    usage: JsonObject | None  # {"session": counts, "request": counts, "cost"?: cost_line.TaskCost}
    messages: list[JsonObject]  # wire dicts, each with a payload
    tools: dict[str, JsonObject]  # tool name -> its card roles
    undo: NotRequired[dict[str, str]]  # transcript_bundle.undo_state
