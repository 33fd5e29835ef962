"""Script entries for the scripted model server: validation, defaults and file loading.

Owns what a script entry may say (`ScriptEntry`, `Fault`, `ScriptedToolCall`) and turns the
plain dicts written in tests, JSON or YAML files into them, with a one-line `ValueError` for
anything malformed. How an entry becomes SSE chunks lives in `chunks.py`; serving in `server.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from penguin_jupyter.omni import dumps_compact

DEFAULT_CHUNK_CHARS = 8
FINISH_REASONS = ("stop", "tool_calls", "length", "content_filter")
FAULT_KINDS = ("http", "drop", "malformed", "stall", "error_event")

_ENTRY_KEYS = (
    "reasoning",
    "text",
    "tool_calls",
    "usage",
    "finish_reason",
    "delay_ms",
    "fault",
    "chunk",
    "reasoning_field",
    "redacted_thinking",
    "interleave_tool_calls",
    "if_tools",
    "unless_tools",
)
REASONING_FIELDS = ("reasoning_content", "reasoning")
_TOOL_CALL_KEYS = ("name", "arguments", "id")
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")
_FAULT_KEYS = {
    "http": ("kind", "status", "message", "type", "code", "headers"),
    "drop": ("kind", "after"),
    "malformed": ("kind", "after", "data"),
    "stall": ("kind", "after", "seconds"),
    "error_event": ("kind", "after", "status", "message", "type"),
}


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: str  # the JSON text streamed as argument fragments (not re-validated)
    id: str


@dataclass(frozen=True)
class Fault:
    """One injected failure. `after` counts SSE events already sent (every event of the protocol
    in use: role/content chunks, Anthropic block starts and stops, Responses item events…).
    `error_event` is the protocol's own mid-stream error (status picks its type)."""

    kind: str
    status: int = 500
    message: str | None = None
    error_type: str | None = None
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    after: int = 0
    seconds: float = 0.0
    data: str = "{not json"


@dataclass(frozen=True)
class ScriptEntry:
    """One scripted model response, served for exactly one request."""

    reasoning: tuple[str, ...] = ()
    text: tuple[str, ...] = ()
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    usage: dict[str, int] | None = None  # None: computed roughly; see chunks.usage_for
    send_usage: bool = True  # `"usage": null` in the script omits the usage chunk entirely
    finish_reason: str = "stop"
    delay_ms: int = 0
    fault: Fault | None = None
    reasoning_field: str = "reasoning_content"  # the delta key carrying reasoning (OpenRouter: "reasoning")
    redacted_thinking: bool = False  # Anthropic: one redacted_thinking block before the thinking
    chunk: int = DEFAULT_CHUNK_CHARS  # argument fragment size (text/reasoning are split at parse time)
    # Chat Completions: every call's opening first, then their argument fragments alternating by
    # index, as some OpenAI-compatible servers stream parallel calls (other protocols: one by one)
    interleave_tool_calls: bool = False
    source: Mapping[str, Any] = field(default_factory=dict)  # the entry as written, for `remaining`
    if_tools: tuple[str, ...] = ()  # served only to a request offering all of these (conditions.py)
    unless_tools: tuple[str, ...] = ()  # … and none of these


class ScriptError(ValueError):
    """A script entry or script file the server cannot serve; the message is one line."""


def _fail(where: str, problem: str) -> ScriptError:
    return ScriptError(f"{where}: {problem}")


def _split(value: str, size: int) -> tuple[str, ...]:
    if value == "":
        return ()
    return tuple(value[i : i + size] for i in range(0, len(value), size))


def _deltas(raw: Any, size: int, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        return _split(raw, size)
    if isinstance(raw, list) and all(isinstance(part, str) for part in raw):
        return tuple(part for part in raw if part != "")
    raise _fail(where, f"expected a string or a list of strings, got {type(raw).__name__}")


def _int(value: Any, where: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _fail(where, f"expected an integer >= {minimum}, got {value!r}")
    return value


def _unknown_keys(data: Mapping[str, Any], known: Iterable[str], where: str) -> None:
    extra = [key for key in data if key not in known]
    if extra:
        raise _fail(where, f"unknown key {extra[0]!r} (known: {', '.join(known)})")


def _tool_call(raw: Any, index: int, where: str) -> ScriptedToolCall:
    where = f"{where}.tool_calls[{index}]"
    if not isinstance(raw, Mapping):
        raise _fail(where, f"expected an object, got {type(raw).__name__}")
    _unknown_keys(raw, _TOOL_CALL_KEYS, where)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(where, "'name' must be a non-empty string")
    arguments = raw.get("arguments", {})
    if isinstance(arguments, Mapping):
        arguments = dumps_compact(dict(arguments))
    elif not isinstance(arguments, str):
        raise _fail(where, f"'arguments' must be an object or a JSON string, got {type(arguments).__name__}")
    call_id = raw.get("id")
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        raise _fail(where, "'id' must be a non-empty string")
    return ScriptedToolCall(name=name, arguments=arguments, id=call_id or "")


def _usage(raw: Any, where: str) -> dict[str, int]:
    where = f"{where}.usage"
    if not isinstance(raw, Mapping):
        raise _fail(where, f"expected an object or null, got {type(raw).__name__}")
    _unknown_keys(raw, _USAGE_KEYS, where)
    return {key: _int(value, f"{where}.{key}") for key, value in raw.items()}


def _error_status(raw: Mapping[str, Any], where: str, texts: tuple[str, ...]) -> int:
    """The `status` (400-599) of an http or error_event fault, its string fields checked."""
    status = _int(raw.get("status", 500), f"{where}.status", minimum=400)
    if status > 599:
        raise _fail(f"{where}.status", f"expected an HTTP error status 400-599, got {status}")
    for key in texts:
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise _fail(f"{where}.{key}", "expected a string")
    return status


def _http_fault(raw: Mapping[str, Any], where: str) -> Fault:
    status = _error_status(raw, where, ("message", "type", "code"))
    headers = raw.get("headers", {})
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise _fail(f"{where}.headers", "expected an object of string values")
    return Fault(
        kind="http",
        status=status,
        message=raw.get("message"),
        error_type=raw.get("type"),
        code=raw.get("code"),
        headers=dict(headers),
    )


def _fault(raw: Any, where: str) -> Fault | None:
    where = f"{where}.fault"
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise _fail(where, f"expected an object, got {type(raw).__name__}")
    kind = raw.get("kind")
    if kind not in FAULT_KINDS:
        raise _fail(where, f"'kind' must be one of {', '.join(FAULT_KINDS)}, got {kind!r}")
    _unknown_keys(raw, _FAULT_KEYS[kind], where)
    if kind == "http":
        return _http_fault(raw, where)
    after = _int(raw.get("after", 0), f"{where}.after")
    if kind == "error_event":
        status = _error_status(raw, where, ("message", "type"))
        return Fault(
            kind=kind, after=after, status=status, message=raw.get("message"), error_type=raw.get("type")
        )
    if kind == "stall":
        seconds = raw.get("seconds", 3600)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise _fail(f"{where}.seconds", f"expected a number >= 0, got {seconds!r}")
        return Fault(kind=kind, after=after, seconds=float(seconds))
    if kind == "malformed":
        data = raw.get("data", "{not json")
        if not isinstance(data, str) or "\n" in data:
            raise _fail(f"{where}.data", "expected a single-line string")
        return Fault(kind=kind, after=after, data=data)
    return Fault(kind=kind, after=after)


def _tool_names(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(name, str) and name for name in raw):
        raise _fail(where, "expected a list of tool names")
    return tuple(raw)


def parse_entry(raw: Any, position: int) -> ScriptEntry:
    """Validate one entry; a bare string is shorthand for `{"text": string}`."""
    where = f"script entry {position}"
    if isinstance(raw, str):
        raw = {"text": raw}
    if not isinstance(raw, Mapping):
        raise _fail(where, f"expected an object, got {type(raw).__name__}")
    _unknown_keys(raw, _ENTRY_KEYS, where)
    chunk = _int(raw.get("chunk", DEFAULT_CHUNK_CHARS), f"{where}.chunk", minimum=1)
    calls_raw = raw.get("tool_calls") or []
    if not isinstance(calls_raw, list):
        raise _fail(f"{where}.tool_calls", f"expected a list, got {type(calls_raw).__name__}")
    tool_calls = tuple(_tool_call(item, i, where) for i, item in enumerate(calls_raw))
    finish_reason = raw.get("finish_reason") or ("tool_calls" if tool_calls else "stop")
    if finish_reason not in FINISH_REASONS:
        raise _fail(
            f"{where}.finish_reason", f"must be one of {', '.join(FINISH_REASONS)}, got {finish_reason!r}"
        )
    reasoning_field = raw.get("reasoning_field", "reasoning_content")
    if reasoning_field not in REASONING_FIELDS:
        raise _fail(
            f"{where}.reasoning_field",
            f"must be one of {', '.join(REASONING_FIELDS)}, got {reasoning_field!r}",
        )
    redacted = raw.get("redacted_thinking", False)
    if not isinstance(redacted, bool):
        raise _fail(f"{where}.redacted_thinking", f"expected true or false, got {redacted!r}")
    interleave = raw.get("interleave_tool_calls", False)
    if not isinstance(interleave, bool):
        raise _fail(f"{where}.interleave_tool_calls", f"expected true or false, got {interleave!r}")
    send_usage = "usage" not in raw or raw["usage"] is not None
    usage = _usage(raw["usage"], where) if raw.get("usage") is not None else None
    return ScriptEntry(
        reasoning=_deltas(raw.get("reasoning"), chunk, f"{where}.reasoning"),
        text=_deltas(raw.get("text"), chunk, f"{where}.text"),
        tool_calls=tool_calls,
        usage=usage,
        send_usage=send_usage,
        finish_reason=finish_reason,
        delay_ms=_int(raw.get("delay_ms", 0), f"{where}.delay_ms"),
        fault=_fault(raw.get("fault"), where),
        reasoning_field=reasoning_field,
        redacted_thinking=redacted,
        chunk=chunk,
        interleave_tool_calls=interleave,
        source=dict(raw),
        if_tools=_tool_names(raw.get("if_tools"), f"{where}.if_tools"),
        unless_tools=_tool_names(raw.get("unless_tools"), f"{where}.unless_tools"),
    )


def load_script_file(path: str | Path) -> list[Any]:
    """Raw entries from a JSON or YAML file: a list, or an object with an `entries` list."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script file {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ScriptError(
            f"script file {path} is not valid {path.suffix.lstrip('.') or 'JSON'}: {first_line}"
        ) from None
    if isinstance(data, Mapping) and "entries" in data:
        data = data["entries"]
    if not isinstance(data, list):
        raise ScriptError(f"script file {path}: expected a list of entries (or an object with 'entries')")
    return data
