"""Reading an API key from a request the way each SDK sends it, and masking it for an error text.

Owns header/query lookup only; which place each provider uses is its protocol module's call.
"""

from __future__ import annotations

from collections.abc import Mapping


def bearer(headers: Mapping[str, str]) -> str | None:
    """The token of an `Authorization: Bearer …` header (names are lower-cased)."""
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def masked(key: str | None) -> str:
    """A key as providers quote it back: a few characters each end, never the whole."""
    if not key:
        return ""
    if len(key) <= 8:
        return "*" * len(key)
    return f"{key[:3]}{'*' * 4}{key[-4:]}"
