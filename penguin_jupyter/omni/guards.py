"""Guards: classify an OmniMessage by its payload (complete, partial, model, event, meta).

Owns only predicates and the typed payload accessors (`payload_as`, `payload_of`) that let a
caller narrow `msg.payload` to one payload class; shapes are in `models.py`.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from .models import COMPLETE_MODEL_PAYLOADS, PARTIAL_PAYLOADS, OmniMessage, Role

P = TypeVar("P", bound=BaseModel)


def payload_as(msg: OmniMessage, cls: type[P]) -> P | None:
    """`msg.payload` when it is a `cls`, else None."""
    payload = msg.payload
    return payload if isinstance(payload, cls) else None


def payload_of(msg: OmniMessage, cls: type[P]) -> P:
    """`msg.payload` as a `cls`, for messages whose kind an invariant already fixes (a turn's
    tool outputs, its committed calls); a broken invariant is a TypeError, not a wrong field."""
    payload = msg.payload
    if not isinstance(payload, cls):
        raise TypeError(f"expected a {cls.__name__} message, got {msg.kind}")
    return payload


def is_session_meta(msg: OmniMessage) -> bool:
    return msg.type == "session_meta"


def is_model_message(msg: OmniMessage) -> bool:
    return msg.type == "model_msg"


def is_event_message(msg: OmniMessage) -> bool:
    return msg.type == "event_msg"


def is_partial_payload(msg: OmniMessage) -> bool:
    return isinstance(msg.payload, PARTIAL_PAYLOADS)


def is_complete_model_message(msg: OmniMessage) -> bool:
    return isinstance(msg.payload, COMPLETE_MODEL_PAYLOADS)


def model_role(msg: OmniMessage) -> Role | None:
    """Who said a complete model message (`user` or `assistant`); None for anything else."""
    return msg.payload.role if isinstance(msg.payload, COMPLETE_MODEL_PAYLOADS) else None


def is_event(msg: OmniMessage, payload_type: str) -> bool:
    """True for an event_msg whose payload.type is `payload_type`."""
    return msg.type == "event_msg" and msg.kind == payload_type
