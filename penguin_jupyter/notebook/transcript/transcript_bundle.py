"""The static transcript bundle: what a finished `%%penguin` cell leaves in the notebook.

Owns the bundle shape (`make_bundle`, version 1: the Task's messages and, under `"tools"`, the
card roles of each tool it called — `ToolDeclaration.card_roles`, so a renderer needs no table of
tools), the tolerant reader for older bundles (`read_bundle`; one saved without `"tools"` reads
with `legacy_card_roles.LEGACY_CARD_ROLES`), secret redaction over bundles (a `penguin_jupyter.redaction.Redactor`) and the
display mimebundle (`transcript_mimebundle`: the JSON for the labextension, self-contained HTML, a plain summary)
and `static_transcript`, the one function that turns a finished Task's messages into what its
cell shows (a live Task's end and a replayed cell both call it).
Grouping lives in `transcript_model.py`, markup in `transcript_html.py`/`transcript_text.py`; the
live-notebook code decides when to display it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from ...omni import STOP_REASONS, OmniMessage, to_dict
from ...redaction import EMPTY, Redactor
from ..kernel_shapes import JsonObject
from .bundle_shape import TranscriptBundle
from .cost_line import read_task_cost
from .legacy_card_roles import LEGACY_CARD_ROLES
from .long_prompts import saved_user_text
from .saved_images import image_refs
from .transcript_model import UNDECLARED_CARD, card_roles_of, payload_of
from .visible_text import visible_controls

TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
BUNDLE_VERSION = 1
# What a saved transcript says of its session. A notebook travels: the author's workspace and
# trace paths (their home folder, user name, data root) are not written into it, and no renderer
# needs them (`%penguin trace` prints the trace path live). Bundles saved before this carry them;
# readers accept and drop them (docs/notebook-runtime.md "Saved size").
SESSION_KEYS = ("session_id", "provider", "model_id", "approval_mode")
OLDER_SESSION_KEYS = ("workspace", "trace_path")
TOKEN_KEYS = ("cache_read", "cache_write", "output", "total")
UNDO_STATES = ("available", "blocked", "undone")
MAX_UNDO_TEXT = 2000
# An `approval_decision` payload's `reason` (why no click was needed): one line, this long at most.
MAX_DECISION_REASON_CHARS = 500


def _message_dict(message: object) -> JsonObject | None:
    if isinstance(message, OmniMessage):
        data = to_dict(message)
    elif isinstance(message, Mapping):
        data = dict(message)
    elif isinstance(message, str):
        try:
            data = json.loads(message)
        except ValueError:
            return None
    else:
        return None
    payload = data.get("payload") if isinstance(data, dict) else None
    if not isinstance(payload, Mapping):
        return None
    if str(payload.get("type", "")).startswith("partial_"):
        return None
    return data


# Events no renderer shows whose content the bundle carries elsewhere or not at all: a request's
# start, a completed request's end (a failed or retried one is shown), token counts (the bundle's
# `usage` is the last of them) and the tool list (its schemas are in the trace). Leaving them out
# keeps the fixed bytes of a saved Task small (docs/notebook-runtime.md "Saved size").
UNSHOWN_EVENTS = frozenset({"request_begin", "token_usage", "tool_list_ready"})


def _shown(data: JsonObject) -> bool:
    payload = payload_of(data)
    kind = payload.get("type")
    if kind == "request_end":
        return payload.get("status") != "completed"
    return kind not in UNSHOWN_EVENTS


def _as_saved(data: JsonObject) -> JsonObject:
    """A message as a bundle keeps it. Opaque provider data (signatures, encrypted reasoning) is
    for the provider only: it stays in the trace and never reaches the notebook or the browser
    (docs/protocol.md "Fidelity"). A `stop_reason` of "completed" is the wire's default, so it is
    left out (every reader puts it back). A long user message keeps its head and a line saying
    what is left out (`long_prompts.saved_user_text`)."""
    payload = payload_of(data)
    text = payload.get("text")
    if payload.get("type") == "text" and payload.get("role") == "user" and isinstance(text, str):
        kept_text = saved_user_text(text)
        if kept_text is not text:
            payload = {**payload, "text": kept_text}
            data = {**data, "payload": payload}
    if "fidelity" not in payload and payload.get("stop_reason") != "completed":
        return data
    kept = {
        key: value
        for key, value in payload.items()
        if key != "fidelity" and not (key == "stop_reason" and value == "completed")
    }
    return {**data, "payload": kept}


def decision_reason_text(reason: str) -> str:
    """A decision's reason as a bundle keeps it: one line of at most MAX_DECISION_REASON_CHARS,
    tabs and newlines as spaces, other invisible characters shown as `⟨U+…⟩` (`visible_controls`).
    What a live card, a saved bundle and a replay show, whatever the reason's source."""
    line = visible_controls(reason.replace("\t", " ").replace("\n", " ")).strip()
    if len(line) > MAX_DECISION_REASON_CHARS:
        line = line[: MAX_DECISION_REASON_CHARS - 1] + "…"
    return line


def _with_reason(data: JsonObject, reasons: Mapping[str, str]) -> JsonObject:
    payload = data.get("payload")
    if not reasons or not isinstance(payload, Mapping) or payload.get("type") != "approval_decision":
        return data
    reason = reasons.get(str(payload.get("tool_call_id", "")))
    reason = decision_reason_text(reason) if isinstance(reason, str) else None
    return {**data, "payload": {**payload, "reason": reason}} if reason else data


def _token_counts(value: object) -> dict[str, int]:
    value = _dumped(value)
    source = value if isinstance(value, Mapping) else {}
    return {key: int(source.get(key) or 0) for key in TOKEN_KEYS}


def _dumped(value: object) -> object:
    """A pydantic model as its dict (`model_dump`); anything else as it is."""
    return value.model_dump() if isinstance(value, BaseModel) else value


def _usage(value: object) -> JsonObject | None:
    """`{"session": counts, "request": counts}` and, when known, `"cost"` (cost_line.TaskCost:
    this Task's and this session's USD)."""
    if value is None:
        return None
    if isinstance(value, OmniMessage):
        value = value.payload
    value = _dumped(value)
    if not isinstance(value, Mapping):
        raise ValueError(
            f"transcript usage must be a mapping with session/request counts, got {type(value).__name__}"
        )
    usage: JsonObject = {
        "session": _token_counts(value.get("session")),
        "request": _token_counts(value.get("request")),
    }
    cost = read_task_cost(value.get("cost"))
    if cost is not None:
        usage["cost"] = cost
    return usage


def _session(info: object) -> dict[str, str]:
    if info is None:
        return {}
    source = info if isinstance(info, Mapping) else {key: getattr(info, key, None) for key in SESSION_KEYS}
    session = {key: source.get(key) for key in SESSION_KEYS if source.get(key) is not None}
    return {key: str(value) for key, value in session.items()}


def undo_state(value: object) -> dict[str, str] | None:
    """The bundle's optional `undo` entry — `{task_id, state: available|blocked|undone, note}` —
    kept only as short strings (docs/undo.md "The Undo button")."""
    if not isinstance(value, Mapping) or value.get("state") not in UNDO_STATES:
        return None
    return {key: str(value.get(key) or "")[:MAX_UNDO_TEXT] for key in ("task_id", "state", "note")}


CARD_ROLE_TEXTS = ("command", "workdir", "body", "cell")
MAX_TOOLS = 1000


def _tool_names(wire: Iterable[Mapping[str, object]]) -> list[str]:
    names = (payload_of(m).get("name") for m in wire if payload_of(m).get("type") == "tool_call")
    return list(dict.fromkeys(name for name in names if isinstance(name, str)))


def card_roles(value: object) -> JsonObject:
    """One tool's card roles as a bundle keeps them (a stranger's bundle is data: anything but
    the known keys with the expected shapes is dropped)."""
    if not isinstance(value, Mapping):
        return dict(UNDECLARED_CARD)
    roles: JsonObject = {key: value[key] for key in CARD_ROLE_TEXTS if isinstance(value.get(key), str)}
    diff = value.get("diff")
    if isinstance(diff, Mapping) and isinstance(diff.get("new"), str):
        kept: JsonObject = {key: diff[key] for key in ("old", "new", "path") if isinstance(diff.get(key), str)}
        if isinstance(diff.get("notes"), Mapping):
            kept["notes"] = _card_notes(diff["notes"])
        roles["diff"] = kept
    headline = value.get("headline")
    if isinstance(headline, list):
        roles["headline"] = [key for key in headline if isinstance(key, str)]
    if isinstance(value.get("notes"), Mapping):
        roles["notes"] = _card_notes(value["notes"])
    return roles


def _card_notes(value: Mapping[object, object]) -> dict[str, str]:
    return {str(argument): text for argument, text in value.items() if isinstance(argument, str) and isinstance(text, str)}



def saved_tools(value: object) -> dict[str, JsonObject]:
    """A saved bundle's `"tools"` as a reader uses them; a bundle saved before they were carried
    reads with the frozen legacy roles."""
    if not isinstance(value, Mapping):
        return {name: dict(roles) for name, roles in LEGACY_CARD_ROLES.items()}
    return {str(name): card_roles(roles) for name, roles in list(value.items())[:MAX_TOOLS]}


def make_bundle(
    messages: Iterable[object],
    *,
    session_info: object,
    status: str,
    usage: object = None,
    redactor: Redactor = EMPTY,
    decision_reasons: Mapping[str, str] | None = None,
    undo: Mapping[str, object] | None = None,
    tools: Mapping[str, Mapping[str, object]] | None = None,
) -> TranscriptBundle:
    """The version-1 bundle of a Task: complete messages/events in stream order, no partials,
    none of the `UNSHOWN_EVENTS` nor completed `request_end`s, no fidelity, no default
    `stop_reason`.

    `messages`: OmniMessages or wire dicts (origin-tagged child messages included).
    `session_info`: a mapping (or object) with session_id, provider, model_id and approval_mode
    (`SESSION_KEYS`; anything else in it is not saved). `status`: one of the six stop reasons. `usage`: None, a mapping
    `{"session": TokenCounts, "request": TokenCounts}`, or a `token_usage` message/payload.
    `redactor`'s secrets are replaced by `[redacted:NAME]` everywhere (`Redactor.value`).
    `decision_reasons` (tool_call_id → why no click was needed) become the `reason` of those
    `approval_decision` payloads, as `decision_reason_text` (a notebook-only addition: the omni
    model ignores it, so a replay reads it back separately, replay_bundle.py).
    `undo`: the Task's undo state for the Undo button (see `undo_state`), absent when None.
    `"tools"`: the card roles of every tool the messages call — `tools`' (a replayed bundle's
    own), else this kernel's declarations (`transcript_model.card_roles_of`) — so the
    labextension renders cards without a table.
    """
    if status not in STOP_REASONS:
        raise ValueError(f"transcript status must be one of {', '.join(STOP_REASONS)}, got {status!r}")
    wire = [
        _with_reason(_as_saved(data), decision_reasons or {})
        for data in map(_message_dict, messages)
        if data is not None and _shown(data)
    ]
    bundle = TranscriptBundle(
        version=BUNDLE_VERSION,
        session=_session(session_info),
        status=status,
        usage=_usage(usage),
        messages=wire,
        tools={name: dict(card_roles_of(name, tools)) for name in _tool_names(wire)},
    )
    undone = undo_state(undo)
    if undone is not None:
        bundle["undo"] = undone
    return redactor.value(bundle)


def read_bundle(data: object) -> TranscriptBundle:
    """Normalize any bundle of version ≤ current (and best-effort newer ones) to the v1 shape.

    Missing keys get defaults; messages given as JSON lines are decoded; unusable messages are
    dropped. A non-mapping raises ValueError with a one-line reason.
    """
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise ValueError(f"transcript bundle is not JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"transcript bundle must be a JSON object, got {type(data).__name__}")
    version = data.get("version", 0)
    version = version if isinstance(version, int) else 0
    status = data.get("status")
    try:
        usage = _usage(data.get("usage"))
    except ValueError:
        usage = None
    raw_messages = data.get("messages")
    listed = raw_messages if isinstance(raw_messages, list | tuple) else []
    messages = [m for m in map(_message_dict, listed) if m is not None]
    normalized = TranscriptBundle(
        version=version,
        session=_session(data.get("session") if isinstance(data.get("session"), Mapping) else None),
        status=status if isinstance(status, str) and status in STOP_REASONS else "completed",
        usage=usage,
        messages=messages,
        tools=saved_tools(data.get("tools")),
    )
    undo = undo_state(data.get("undo"))
    if undo is not None:
        normalized["undo"] = undo
    return normalized


def transcript_mimebundle(bundle: object, *, redactor: Redactor = EMPTY) -> JsonObject:
    """The display data of a bundle: the JSON (labextension), `text/html` and `text/plain`, with
    `redactor`'s secrets replaced (in the rendered markup also their HTML- and JSON-escaped forms).
    A tool output's image the HTML shows inline is saved there only: the JSON names it
    (`saved_images.SAVED_IMAGE_REF`, read back by `saved_images.with_saved_images`)."""
    from .transcript_html import render_html
    from .transcript_text import render_text

    normalized = redactor.value(read_bundle(bundle))
    raw = redactor.value(dict(bundle)) if isinstance(bundle, Mapping) else normalized
    markup = redactor.markup(render_html(normalized))
    return {
        TRANSCRIPT_MIME: image_refs(raw, markup),
        "text/html": markup,
        "text/plain": redactor.markup(render_text(normalized)),
    }


def static_transcript(
    messages: Iterable[object],
    *,
    session_info: object,
    status: str,
    usage: object = None,
    redactor: Redactor = EMPTY,
    decision_reasons: Mapping[str, str] | None = None,
    undo: Mapping[str, object] | None = None,
    tools: Mapping[str, Mapping[str, object]] | None = None,
) -> JsonObject:
    """What a finished Task's cell shows: the bundle of `messages` (see `make_bundle`) as its
    display mimebundle, redacted and rendered through the no-fetch HTML. The one path for a live
    Task's end (runtime/cell.py) and a replayed saved transcript (runtime/saved_transcript.py)."""
    bundle = make_bundle(
        messages,
        session_info=session_info,
        status=status,
        usage=usage,
        redactor=redactor,
        decision_reasons=decision_reasons,
        undo=undo,
        tools=tools,
    )
    return transcript_mimebundle(bundle, redactor=redactor)
