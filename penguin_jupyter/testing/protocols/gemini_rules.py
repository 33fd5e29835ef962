"""The Gemini generateContent request rules the scripted server applies, as the real API does.

Owns the checks only (each returns the API's error text, or None): non-empty `contents` with
roles `user`/`model`; every `thoughtSignature` echoed unchanged; for Gemini 3 models, in the
current turn (after the last user content that is not only function responses) the first
functionCall part of every model step carries its `thoughtSignature`; the function responses
answering a model turn match its function calls in number and name. Sources: docs/model.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import signatures

SIGNATURE_KIND = "gemini-thought"
_COUNT_MISMATCH = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)


def _parts(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [part for part in content.get("parts") or [] if isinstance(part, dict)]


def problem(body: Mapping[str, Any], model: str) -> str | None:
    """The first rule `body` breaks, in the API's words; None when it breaks none."""
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return "* GenerateContentRequest.contents: contents is not specified"
    for content in contents:
        if not isinstance(content, dict) or content.get("role") not in ("user", "model"):
            return "Please use a valid role: user, model."
        for part in _parts(content):
            signature = part.get("thoughtSignature")
            if signature is not None and not signatures.verify(SIGNATURE_KIND, signature):
                return "Corrupted thought signature."
    if "gemini-3" in model:
        missing = _unsigned_call(contents)
        if missing is not None:
            return missing
    return _responses_match(contents)


def _current_turn_start(contents: list[dict[str, Any]]) -> int:
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content["role"] == "user" and any("functionResponse" not in part for part in _parts(content)):
            return index
    return 0


def _unsigned_call(contents: list[dict[str, Any]]) -> str | None:
    for index in range(_current_turn_start(contents), len(contents)):
        content = contents[index]
        if content["role"] != "model":
            continue
        calls = [part for part in _parts(content) if "functionCall" in part]
        if calls and not calls[0].get("thoughtSignature"):
            name = (calls[0].get("functionCall") or {}).get("name")
            return (
                "Function call is missing a thought_signature in functionCall parts. This is required for tools "
                "to work correctly, and missing thought_signature may lead to degraded model performance. "
                f"Additional data, function call `default_api:{name}` , position {index + 1}. Please refer to "
                "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
            )
    return None


def _turns(contents: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for content in contents:
        if turns and turns[-1][0] == content["role"]:
            turns[-1][1].extend(_parts(content))
        else:
            turns.append((content["role"], _parts(content)))
    return turns


def _responses_match(contents: list[dict[str, Any]]) -> str | None:
    turns = _turns(contents)
    for position, (role, parts) in enumerate(turns):
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        if role != "user" or not responses:
            continue
        previous = turns[position - 1][1] if position > 0 else []
        calls = [p["functionCall"] for p in previous if isinstance(p.get("functionCall"), dict)]
        if len(calls) != len(responses):
            return _COUNT_MISMATCH
        if sorted(str(c.get("name")) for c in calls) != sorted(str(r.get("name")) for r in responses):
            return _COUNT_MISMATCH
    return None
