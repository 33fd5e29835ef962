"""Checking a saved transcript bundle before a replayed cell shows it again.

Owns `validate_replay_bundle`: a bundle found in a saved .ipynb was written by whoever wrote the
file, so it is data. It is accepted only when it is exactly what `make_bundle` writes for a
completed Task — version 1, status `completed`, a session header of short strings, token counts,
the card roles of its tools (kept only in the shape `transcript_bundle.card_roles` reads; a bundle
saved before they were carried reads with the legacy ones), and messages that each validate as
an OmniMessage (partials are not part of a bundle), an
`approval_decision`'s `reason` being a short string (shown again as `decision_reason_text`: one
line, invisible characters made visible) — and when it fits the size limits below. What comes out is the validated messages (OmniMessage objects, so
what is shown again is their re-serialization, never the saved bytes), the decisions' reasons
(tool_call_id → text: data a card shows as escaped text, never markup), the session header and
the usage; anything else raises `ReplayRefused` with one line saying why. Sizes and counts are
checked before the saved images are put back (`saved_images.image_load` measures what they would
add without building it), and a `RecursionError` or `MemoryError` while checking is a refusal too. Showing it is
runtime/saved_transcript.py's job, through the same function as a live Task's end
(`transcript_bundle.static_transcript`). See docs/notebook-runtime.md "Replay".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from ...omni import ApprovalDecisionPayload, OmniMessage, TokenCounts
from ...omni.wire import from_dict
from .cost_line import read_task_cost
from .saved_images import image_load, with_images
from .transcript_bundle import (
    BUNDLE_VERSION,
    MAX_DECISION_REASON_CHARS,
    OLDER_SESSION_KEYS,
    SESSION_KEYS,
    saved_tools,
)

MAX_REPLAY_CHARS = 16 * 1024 * 1024  # the bundle as compact JSON, its images put back
MAX_REPLAY_MESSAGES = 50_000
MAX_REPLAY_IMAGES = 1_000  # image references in one transcript
MAX_ORIGIN_HOPS = 16
MAX_SESSION_VALUE_CHARS = 4096
BUNDLE_KEYS = frozenset({"version", "session", "status", "usage", "messages", "undo", "tools"})  # undo: not replayed


class ReplayRefused(ValueError):
    """The saved bundle is not replayed; `str()` is the one-line reason."""


@dataclass(frozen=True)
class ReplayBundle:
    """A saved bundle that passed every check: what a replay may show."""

    messages: list[OmniMessage]
    session: dict[str, str] = field(default_factory=dict)
    usage: dict[str, object] | None = None
    decision_reasons: dict[str, str] = field(default_factory=dict)  # tool_call_id -> reason
    tools: dict[str, dict[str, object]] = field(default_factory=dict)  # tool name -> card roles


def validate_replay_bundle(data: object, images: Sequence[str] = ()) -> ReplayBundle:
    """The checked content of a saved bundle, its `penguin:html-image:N` references put back from
    `images` (the rasters of the saved HTML) only once the sizes allow it; ReplayRefused (one
    line) when it is not exactly a version-1 bundle of a completed Task within the limits — also
    when checking it nests too deeply or runs out of memory."""
    try:
        return _validate(data, images)
    except RecursionError:
        raise ReplayRefused("the transcript is nested too deeply") from None
    except MemoryError:
        raise ReplayRefused("the transcript is too large to check") from None


def _validate(data: object, images: Sequence[str]) -> ReplayBundle:
    if not isinstance(data, Mapping):
        raise ReplayRefused(f"the transcript is not a JSON object (got {type(data).__name__})")
    unknown = sorted(str(key) for key in data if key not in BUNDLE_KEYS)
    if unknown:
        raise ReplayRefused(f"the transcript has unknown keys: {', '.join(unknown)[:200]}")
    version = data.get("version")
    if version != BUNDLE_VERSION or isinstance(version, bool):
        raise ReplayRefused(f"the transcript's version is {version!r}, not {BUNDLE_VERSION}")
    if data.get("status") != "completed":
        raise ReplayRefused("the transcript's Task did not complete")
    try:
        size = len(json.dumps(data, ensure_ascii=False, separators=(",", ":")))  # as saved: references
    except (TypeError, ValueError) as exc:
        raise ReplayRefused(f"the transcript is not plain JSON: {exc}") from None
    if size > MAX_REPLAY_CHARS:
        raise ReplayRefused(f"the transcript is larger than {MAX_REPLAY_CHARS >> 20} MB")
    references, grown = image_load(data, images)  # measured, not built
    if references > MAX_REPLAY_IMAGES:
        raise ReplayRefused(f"the transcript names more than {MAX_REPLAY_IMAGES} images")
    if size + grown > MAX_REPLAY_CHARS:
        raise ReplayRefused(f"the transcript with its images is larger than {MAX_REPLAY_CHARS >> 20} MB")
    data = with_images(data, images)  # within the limits: the images go back in
    reasons: dict[str, str] = {}
    return ReplayBundle(
        messages=_messages(data.get("messages"), reasons),
        session=_session(data.get("session")),
        usage=_usage(data.get("usage")),
        decision_reasons=reasons,
        tools=saved_tools(data.get("tools")),
    )


def _session(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ReplayRefused("the transcript's session header is not an object")
    session: dict[str, str] = {}
    for key, text in value.items():
        if key not in SESSION_KEYS and key not in OLDER_SESSION_KEYS:
            raise ReplayRefused(f"the transcript's session header has an unknown key {str(key)[:60]!r}")
        if not isinstance(text, str) or len(text) > MAX_SESSION_VALUE_CHARS:
            raise ReplayRefused(f"the transcript's session {key} is not a short string")
        if key in SESSION_KEYS:
            session[key] = text
    return session


def _usage(value: object) -> dict[str, object] | None:
    """The saved token counts, and what the Task cost when the bundle says (cost_line.TaskCost)."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not {"session", "request"} <= set(value) <= {
        "session",
        "request",
        "cost",
    }:
        raise ReplayRefused("the transcript's usage is not {session, request} token counts (and a cost)")
    try:
        usage: dict[str, object] = {
            key: TokenCounts.model_validate(value[key]).model_dump() for key in ("session", "request")
        }
    except ValidationError as exc:
        raise ReplayRefused(f"the transcript's usage is invalid: {exc.errors()[0].get('msg')}") from None
    if "cost" in value:
        cost = read_task_cost(value["cost"])
        if cost is None:
            raise ReplayRefused("the transcript's cost is not {task_usd, session_usd} in USD")
        usage["cost"] = cost
    return usage


def _messages(value: object, reasons: dict[str, str]) -> list[OmniMessage]:
    """The validated messages; each approval decision's saved reason goes into `reasons`."""
    if not isinstance(value, list):
        raise ReplayRefused("the transcript's messages are not a list")
    if len(value) > MAX_REPLAY_MESSAGES:
        raise ReplayRefused(f"the transcript has more than {MAX_REPLAY_MESSAGES} messages")
    messages = []
    for index, item in enumerate(value):
        try:
            message = from_dict(_with_tool_names(item))
        except ValueError as exc:
            raise ReplayRefused(f"message {index} of the transcript is invalid: {exc}") from None
        if message.kind.startswith("partial_"):
            raise ReplayRefused(f"message {index} of the transcript is a partial (a bundle holds none)")
        if message.origin is not None and len(message.origin) > MAX_ORIGIN_HOPS:
            raise ReplayRefused(
                f"message {index} of the transcript is nested deeper than {MAX_ORIGIN_HOPS} subagents"
            )
        if isinstance(message.payload, ApprovalDecisionPayload):
            payload = item.get("payload") if isinstance(item, Mapping) else None
            _take_reason(payload if isinstance(payload, Mapping) else {}, message.payload.tool_call_id, index, reasons)
        messages.append(message)
    return messages


def _take_reason(payload: Mapping[str, object], tool_call_id: str, index: int, reasons: dict[str, str]) -> None:
    """An approval decision's `reason`, when it has one: plain text of bounded length."""
    if "reason" not in payload:
        return
    reason = payload["reason"]
    # make_bundle writes at most MAX_DECISION_REASON_CHARS; redaction may lengthen it a little
    if not isinstance(reason, str) or len(reason) > 2 * MAX_DECISION_REASON_CHARS:
        raise ReplayRefused(f"message {index} of the transcript has a reason that is not a short text")
    if reason:
        reasons[tool_call_id] = reason  # shown again as `decision_reason_text`, by `make_bundle`


def _with_tool_names(item: object) -> object:
    """Bundles saved before `make_bundle` left tool lists out kept a `tool_list_ready` event's
    tools by name only; the model needs a description, so each gets an empty one before validation."""
    if not isinstance(item, dict):
        return item
    payload = item.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "tool_list_ready":
        return item
    tools = payload.get("tools")
    if not isinstance(tools, list):
        return item
    named = [{"description": "", **tool} if isinstance(tool, dict) else tool for tool in tools]
    return {**item, "payload": {**payload, "tools": named}}
