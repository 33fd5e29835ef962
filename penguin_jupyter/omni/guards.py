"""Guards: classify an OmniMessage by its payload (complete, partial, model, event, meta).

Owns only predicates; shapes are in `models.py`.
"""

from __future__ import annotations

from .models import COMPLETE_MODEL_PAYLOADS, PARTIAL_PAYLOADS, OmniMessage


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


def is_event(msg: OmniMessage, payload_type: str) -> bool:
    """True for an event_msg whose payload.type is `payload_type`."""
    return msg.type == "event_msg" and msg.payload.type == payload_type
