"""The one id rule for agent and project ids (they become directory names under the data root).

Owns `is_valid_id` and `require_id`: an id is one or more ASCII letters, digits, `_` or `-`.
Anything else (spaces, dots, path separators, non-ASCII) is refused with one line naming the
field, before any path is built, so nothing is ever created outside the data root. Where the
ids are used is `paths.py`'s business.
"""

from __future__ import annotations

import re

__all__ = ["InvalidIdError", "is_valid_id", "require_id"]

_ID = re.compile(r"[A-Za-z0-9_-]+")


class InvalidIdError(ValueError):
    """An agent or project id outside the id rule; `str()` is the one-line message."""

    def __init__(self, field: str, value: object) -> None:
        self.field = field
        self.value = value
        super().__init__(f"invalid {field} {value!r}: use letters, digits, _ and -")


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def require_id(field: str, value: object) -> str:
    """`value` when it follows the id rule, else `InvalidIdError` naming `field`."""
    if not is_valid_id(value):
        raise InvalidIdError(field, value)
    assert isinstance(value, str)
    return value
