"""The JSON wire form of OmniMessage (docs/protocol.md "Examples"): one compact line per message.

Owns `to_dict`/`to_json`/`from_json`. None fields are omitted (except `abort.reason`),
keys follow the model field order, non-ASCII is written as-is. Everything a caller can
pass to `from_json` either becomes an OmniMessage or raises `ValueError` with a one-line reason:
JSON of the wrong shape or types, nesting deeper than Python's decoder goes, and the numbers
standard JSON does not have (`NaN`, `Infinity`, a float that overflows) are refused; a lone
surrogate escape (`"\\ud800"`) is repaired to U+FFFD (`parse_wire_line` says when), so every
message read can be written back as UTF-8.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import ValidationError

from .models import EVENT_PAYLOAD_TYPES, MODEL_PAYLOAD_TYPES, OmniMessage
from .unicode import is_valid_unicode, repair_strings

# A `\uD800`-`\uDFFF` escape: the only way decoded JSON text can hold a surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def to_dict(msg: OmniMessage) -> dict[str, Any]:
    """The wire object of `msg` (plain dicts/lists/str/int, wire key order)."""
    data = msg.model_dump(mode="json", exclude_none=True)
    payload = data["payload"]
    if payload.get("type") == "abort" and "reason" not in payload:
        payload["reason"] = None
    return data


def dumps_compact(value: Any) -> str:
    """The one JSON encoding used everywhere: compact separators, UTF-8 text unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def to_json(msg: OmniMessage) -> str:
    return dumps_compact(to_dict(msg))


def _type_name(value: Any) -> str:
    return repr(value) if isinstance(value, str) else f"a JSON {_json_kind(value)}"


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool) or value is None:
        return "literal"
    return "number" if isinstance(value, int | float) else "string"


def from_dict(data: Any) -> OmniMessage:
    """Validate a decoded wire object; raises ValueError with a one-line reason."""
    if not isinstance(data, dict):
        raise ValueError(f"OmniMessage must be a JSON object, got {type(data).__name__}")
    outer = data.get("type")
    payload = data.get("payload")
    if not isinstance(outer, str) or outer not in ("session_meta", "model_msg", "event_msg"):
        raise ValueError(f"unknown message type {_type_name(outer)}")
    if not isinstance(payload, dict):
        raise ValueError("message payload must be a JSON object")
    inner = payload.get("type")
    if outer == "session_meta":
        if inner is not None:
            raise ValueError(f"session_meta payload must not carry a type (got {_type_name(inner)})")
    elif not isinstance(inner, str):
        raise ValueError(f"{outer} payload type must be a string, got {_type_name(inner)}")
    elif outer == "model_msg" and inner not in MODEL_PAYLOAD_TYPES:
        raise ValueError(f"unknown model_msg payload type {inner!r}")
    elif outer == "event_msg" and inner not in EVENT_PAYLOAD_TYPES:
        raise ValueError(f"unknown event_msg payload type {inner!r}")
    try:
        return OmniMessage.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise ValueError(f"invalid {inner or outer} message: {where}: {first.get('msg')}") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of the range of a JSON number")
    return value


def loads_strict(text: str) -> Any:
    """Standard JSON only: `NaN`, `Infinity` and floats that overflow are refused, and so is
    nesting deeper than the decoder goes; every failure is a ValueError."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def parse_wire_line(line: str | bytes) -> tuple[OmniMessage, bool]:
    """`from_json`, also saying whether a lone surrogate had to be repaired (U+FFFD)."""
    if isinstance(line, bytes | bytearray):
        line = bytes(line).decode("utf-8", errors="replace")
    elif not isinstance(line, str):
        raise ValueError(f"not JSON: expected text, got {type(line).__name__}")
    try:
        data = loads_strict(line)
    except ValueError as exc:
        raise ValueError(f"not JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    repaired = False
    try:
        if not is_valid_unicode(line) or _SURROGATE_ESCAPE.search(line):
            fixed = repair_strings(data)
            repaired, data = fixed is not data, fixed
        return from_dict(data), repaired
    except RecursionError:
        raise ValueError("not a message: nested too deeply") from None


def from_json(line: str | bytes) -> OmniMessage:
    return parse_wire_line(line)[0]


def with_valid_unicode(msg: OmniMessage) -> OmniMessage:
    """`msg`, or a copy whose strings hold no lone surrogate (each became U+FFFD)."""
    data = to_dict(msg)
    repaired = repair_strings(data)
    return msg if repaired is data else from_dict(repaired)
