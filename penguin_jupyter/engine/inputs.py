"""The input check of `run`: new messages must be a list of OmniMessage.

Owns only that check and its one-line `TypeError`, shared by `ContextEngine.run` and
`Session.run` so a caller passing a bare string or a single message is told so plainly
instead of meeting an AttributeError deep in the loop; and, at this Human boundary, text that
cannot be encoded (a lone surrogate) becomes U+FFFD, as everywhere text enters (README
"Reliability").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..omni import OmniMessage, with_valid_unicode

__all__ = ["require_messages"]

_HINT = "a list of OmniMessage, e.g. [user_text('…')]"


def require_messages(value: Any, where: str) -> list[OmniMessage]:
    """`value` as a list, or a one-line TypeError naming `where` and what was passed."""
    if isinstance(value, OmniMessage):
        raise TypeError(f"{where} takes {_HINT}; wrap the single message in a list")
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(f"{where} takes {_HINT}, got {type(value).__name__}")
    messages = list(value)
    for item in messages:
        if not isinstance(item, OmniMessage):
            raise TypeError(f"{where} takes {_HINT}, got an item of type {type(item).__name__}")
    return [with_valid_unicode(item) for item in messages]
