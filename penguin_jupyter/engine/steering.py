"""Mid-run user input (docs/engine.md "Steering"): the steering queue and how an entry becomes model input.

Owns `SteeringQueue` (FIFO of entries, `unsteer` by identity) and `steering_messages`,
which turns one entry into a `[user_steering]` text followed by its other messages
(images on a vision model), folding images first when a fold hook is configured. When
delivery happens is the turn loop's business (`context_engine`).
"""

from __future__ import annotations

from ..omni import ImageUrlPayload, InlineDataPayload, OmniMessage, TextPayload, markers, user_text
from .protocols import FoldInputImages

__all__ = ["FOLD_CONTRACT_ERROR", "SteeringQueue", "carries_steering", "is_image", "steering_messages"]

FOLD_CONTRACT_ERROR = "foldInputImages must return the input's images folded into a user text."


def is_image(msg: OmniMessage) -> bool:
    return msg.type == "model_msg" and isinstance(msg.payload, ImageUrlPayload | InlineDataPayload)


def _user_text(msg: OmniMessage) -> str | None:
    """The text of a user text message, else None."""
    payload = msg.payload
    if msg.type == "model_msg" and isinstance(payload, TextPayload) and payload.role == "user":
        return payload.text
    return None


def carries_steering(entry: list[OmniMessage]) -> bool:
    """An entry counts if it has an image or a user text that is not blank."""
    return any(is_image(m) or (_user_text(m) or "").strip() for m in entry)


async def steering_messages(entry: list[OmniMessage], fold: FoldInputImages | None) -> list[OmniMessage]:
    """`[user_steering]` text of the entry's user texts (joined by a blank line), then the rest.
    A configured fold that leaves an image or no text raises `ValueError(FOLD_CONTRACT_ERROR)`;
    an exception of the fold itself propagates."""
    folding = fold if any(is_image(m) for m in entry) else None
    messages = await folding(entry) if folding is not None else entry
    texts: list[str] = []
    rest: list[OmniMessage] = []
    for msg in messages if isinstance(messages, list) else []:
        text = _user_text(msg)
        if text is not None:
            texts.append(text)
        else:
            rest.append(msg)
    if folding is not None and (any(is_image(m) for m in rest) or not texts):
        raise ValueError(FOLD_CONTRACT_ERROR)
    return [user_text(markers.user_steering_text("\n\n".join(texts))), *rest]


class SteeringQueue:
    def __init__(self) -> None:
        self._entries: list[list[OmniMessage]] = []

    def __len__(self) -> int:
        return len(self._entries)

    def push(self, entry: list[OmniMessage]) -> None:
        self._entries.append(entry)

    def remove(self, entry: list[OmniMessage]) -> bool:
        for i, queued in enumerate(self._entries):
            if queued is entry:
                del self._entries[i]
                return True
        return False

    def take_all(self) -> list[list[OmniMessage]]:
        entries, self._entries = self._entries, []
        return entries

    def clear(self) -> None:
        self._entries = []
