"""The JSON wire form of OmniMessage (docs/protocol.md "Examples"): one compact line per message.

Owns `to_dict`/`to_json`/`from_json`. None fields are omitted (except `abort.reason`),
keys follow the model field order, non-ASCII is written as-is. Everything a caller can
pass to `from_json` either becomes an OmniMessage or raises `ValueError` with the reason.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from .models import EVENT_PAYLOAD_TYPES, MODEL_PAYLOAD_TYPES, OmniMessage


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


def from_dict(data: Any) -> OmniMessage:
    """Validate a decoded wire object; raises ValueError with a one-line reason."""
    if not isinstance(data, dict):
        raise ValueError(f"OmniMessage must be a JSON object, got {type(data).__name__}")
    outer = data.get("type")
    payload = data.get("payload")
    if outer not in ("session_meta", "model_msg", "event_msg"):
        raise ValueError(f"unknown message type {outer!r}")
    if not isinstance(payload, dict):
        raise ValueError("message payload must be a JSON object")
    inner = payload.get("type")
    if outer == "session_meta":
        if inner is not None:
            raise ValueError(f"session_meta payload must not carry a type (got {inner!r})")
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


def from_json(line: str | bytes) -> OmniMessage:
    try:
        data = json.loads(line)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    return from_dict(data)
