"""Opaque provider data (`fidelity`) in a JSON-safe form (docs/protocol.md "Fidelity").

Owns the one encoding of binary values inside a fidelity object: a provider SDK may hand over
opaque bytes (google-genai gives Gemini's `thought_signature` as `bytes`), which JSON cannot
carry. Every bytes value becomes `{"$bytes": "<standard base64>"}` when a message is built, so
a message always serializes (a non-finite float, which JSON has no form for, is null), the trace keeps the value, and `fidelity_for_provider` turns it
back into the identical bytes before the history goes to the provider again. Which provider
needs what is the LLM layer's business; nothing here renders or inspects the values.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

BYTES_TAG = "$bytes"


def json_safe_fidelity(value: Any) -> Any:
    """`value` with every bytes-like value (at any depth) replaced by its `{"$bytes": …}` form,
    and every number standard JSON cannot write (NaN, ±Infinity) by null, as the wire writes it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return {BYTES_TAG: base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Mapping):
        return {key: json_safe_fidelity(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe_fidelity(item) for item in value]
    return value


def _tagged_bytes(value: Mapping[str, Any]) -> bytes | None:
    if len(value) != 1 or not isinstance(value.get(BYTES_TAG), str):
        return None
    try:
        return base64.b64decode(value[BYTES_TAG], validate=True)
    except (binascii.Error, ValueError):
        return None


def fidelity_for_provider(value: Any) -> Any:
    """The inverse of `json_safe_fidelity`: every `{"$bytes": …}` object back to its bytes
    (an object that only looks like one — other keys, not base64 — is left as it is)."""
    if isinstance(value, Mapping):
        decoded = _tagged_bytes(value)
        if decoded is not None:
            return decoded
        return {key: fidelity_for_provider(item) for key, item in value.items()}
    if isinstance(value, list):
        return [fidelity_for_provider(item) for item in value]
    return value
