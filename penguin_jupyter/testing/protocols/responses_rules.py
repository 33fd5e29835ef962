"""The OpenAI Responses request rules the scripted server applies, as the real API does.

Owns the checks only (each returns the API's error text and code, or None): `model` given;
every `function_call_output` answers a `function_call` earlier in `input` and every
`function_call` is answered; every reasoning item's `encrypted_content` echoed unchanged; a
function call this server issued beside an encrypted reasoning item comes back with that
reasoning item when the request is stateless (`store: false`). Sources: docs/model.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import signatures
from .base import Ledger

REASONING_KIND = "openai-reasoning"


def problem(body: Mapping[str, Any], ledger: Ledger) -> tuple[str, str | None] | None:
    """(message, code) of the first rule `body` breaks; None when it breaks none."""
    if not body.get("model"):
        return "Missing required parameter: 'model'.", "missing_required_parameter"
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return "Invalid type for 'input': expected a string or an array of input items.", "invalid_type"
    called: list[str] = []
    answered: set[str] = set()
    reasoning_seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            return f"Invalid type for 'input[{index}]': expected an object.", "invalid_type"
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "reasoning":
            encrypted = item.get("encrypted_content")
            if encrypted is not None:
                if not signatures.verify(REASONING_KIND, encrypted):
                    return (
                        f"The encrypted content for item input[{index}] could not be verified.",
                        "invalid_encrypted_content",
                    )
                reasoning_seen.add(encrypted)
        elif kind == "function_call":
            call_id = str(item.get("call_id"))
            needed = ledger.responses_for(call_id)
            if needed is not None and body.get("store") is False and needed not in reasoning_seen:
                return (
                    f"Item 'input[{index}]' of type 'function_call' (call_id {call_id}) was provided without its "
                    "required 'reasoning' item.",
                    None,
                )
            called.append(call_id)
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in called:
                return f"No tool call found for function call output with call_id {call_id}.", None
            answered.add(call_id)
    for call_id in called:
        if call_id not in answered:
            return f"No tool output found for function call {call_id}.", None
    return None
