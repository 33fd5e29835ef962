"""Window-derived output cap and the character-heuristic token estimates (docs/model.md "Per-request config").

Owns `estimate_text_tokens`, `estimate_messages_tokens`, `usable_context_window` and
`effective_max_tokens`: pure arithmetic, no I/O. `GenerativeModel` keeps the running input
estimate and applies the result to each request's config.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..omni import OmniMessage, dumps_compact

MIN_USABLE_CONTEXT_WINDOW = 4096
OUTPUT_SAFETY_MARGIN = 1024
MIN_OUTPUT_TOKENS = 512
IMAGE_TOKEN_ESTIMATE = 1600


def estimate_text_tokens(text: str) -> int:
    """ASCII at ~4 chars per token, every other character one token."""
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))  # C speed
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def estimate_messages_tokens(messages: Iterable[OmniMessage]) -> int:
    """Images count a flat 1600 each (own payloads or a payload's `images` list); everything else
    is estimated from its compact payload JSON."""
    total = 0
    for msg in messages:
        payload: dict[str, object] = msg.payload.model_dump(mode="json", exclude_none=True)
        kind = payload.get("type")
        images = payload.get("images")
        if kind in ("image_url", "inline_data"):
            total += IMAGE_TOKEN_ESTIMATE
        elif isinstance(images, list):
            del payload["images"]
            total += len(images) * IMAGE_TOKEN_ESTIMATE + estimate_text_tokens(dumps_compact(payload))
        else:
            total += estimate_text_tokens(dumps_compact(payload))
    return total


def usable_context_window(context_window: object) -> int | None:
    """A window of at least 4096 tokens, else None (unset or implausible)."""
    if isinstance(context_window, bool) or not isinstance(context_window, int | float):
        return None
    if not math.isfinite(context_window) or context_window < MIN_USABLE_CONTEXT_WINDOW:
        return None
    return int(context_window)


def effective_max_tokens(
    configured: int | None, context_window: int | None, estimated_input: int
) -> int | None:
    """`min(cap, max(window − input − 1024, 512))`; the cap unchanged without a usable window;
    None (omit the key) when no positive cap is configured."""
    if configured is None or configured <= 0:
        return None
    if context_window is None:
        return configured
    remaining = context_window - estimated_input - OUTPUT_SAFETY_MARGIN
    return min(configured, max(remaining, MIN_OUTPUT_TOKENS))
