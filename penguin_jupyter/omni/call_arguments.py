"""The one parser of a tool call's arguments (docs/protocol.md): a `tool_call` carries them as a
JSON text; every reader — the close-out that runs the call, the approval layer that judges it, the
card that shows it, the model client that sends it back — reads them here.

Owns `read_call_arguments` (an object, or `UnreadableArguments` saying why not: never an
exception, whatever the text — not JSON, nested too deep, too large, not an object) and
nothing else; what each reader does with an unreadable call is its own business.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

EMPTY_ARGUMENTS = "field is empty"  # the reason for an arguments text with nothing in it


@dataclass(frozen=True)
class UnreadableArguments:
    """Why a call's arguments cannot be read: `reason` completes "the arguments …"."""

    reason: str


def read_call_arguments(raw: Any) -> dict[str, Any] | UnreadableArguments:
    """A tool call's arguments as an object: a JSON text (what the wire carries) or an already
    decoded mapping. Anything else — empty text, bad JSON, JSON nested too deep or too large to
    decode, a value that is not an object — is `UnreadableArguments`, never an exception: every
    reader (the close-out, the approval layer, the card, the model client) gets the same answer."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return UnreadableArguments(f"are not a JSON text (got {type(raw).__name__})")
    if not raw.strip():
        return UnreadableArguments(EMPTY_ARGUMENTS)
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError, MemoryError) as exc:
        return UnreadableArguments(f"are not valid JSON ({_one_line(exc)})")
    if not isinstance(parsed, dict):
        return UnreadableArguments(f"are not a JSON object (got {_json_kind(parsed)})")
    return parsed


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"[:200]


def _json_kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
