"""The one grouping logic for a finished Task: wire messages → display blocks.

Owns `build_blocks` (thinking, text, tool cards joined by `tool_call_id`, events, subagent groups
nested by `origin`) and the small helpers the live widgets reuse for card headers, bodies and
diffs (`tool_card_summary`, `tool_description`, `call_body`, `approval_body`, `diff_preview`,
`parse_arguments`); a static card shows every string of its call through
`visible_text.visible_controls`; and the format of `edit_cell`'s output diff (`edit_cell_result`,
`split_edit_cell_output`). How a tool's card reads — which argument is its command, its body,
its cell, its diff, its header — is the tool's *card roles* (`ToolDeclaration.card_roles`): this
kernel's declaration for a live card, the roles a saved bundle carries for a static one
(`card_roles_of`); no rule here names a tool. A tool nobody declared shows every argument in
full (`all_arguments_text`). Pure Python: no IPython, no HTML. Rendering lives in
`transcript_html.py` / `transcript_text.py`; the labextension (`labextension/src/model.ts`)
re-implements these rules in TypeScript — keep the two in step.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...omni import OmniMessage, read_call_arguments, to_dict
from .cell_sources import CellPreview, known_cell_source
from .visible_text import visible_controls

EDIT_CELL_DIFF_HEAD = "--- before\n+++ after\n"  # how edit_cell's output starts its diff
MAX_TURNS_NOTICE = re.compile(r"^\[reached max turns \((-?\d+)\); stopping\]$")
BUDGET_STOP_NOTICE = re.compile(r"^\[stopped before a model request: (.+)\]$", re.DOTALL)  # engine, docs/cost.md
DETAIL_LIMIT = 200
# The card roles of a tool nobody declared (an MCP server's): every argument, in full.
UNDECLARED_CARD: Mapping[str, object] = {"body": "*"}
ALL_ARGUMENTS = "*"
CardRoles = Mapping[str, object]  # one tool's `ToolDeclaration.card_roles()`
ToolCards = Mapping[str, CardRoles]  # tool name -> its card roles (a saved bundle's "tools")

# Event payloads that carry nothing a reader of a finished transcript needs.
SILENT_EVENTS = frozenset({"request_begin", "token_usage", "tool_list_ready", "subagent", "goal_finished"})


@dataclass
class TextBlock:
    role: str
    text: str
    stop_reason: str = "completed"
    sender: str | None = None
    kind: str = "text"


@dataclass
class ThinkingBlock:
    thinking: str
    stop_reason: str = "completed"
    kind: str = "thinking"


@dataclass
class ImageBlock:
    source: str
    mime_type: str | None = None
    kind: str = "image"


@dataclass
class ToolCard:
    """A tool call with its approval decision and output, joined by `tool_call_id`."""

    tool_call_id: str
    name: str = ""
    arguments: str = ""
    call_stop_reason: str | None = None
    title: str = ""
    detail: str = ""
    description: str | None = None
    command: str | None = None
    workdir: str | None = None
    body: str | None = None  # the whole text its card shows (the argument its roles name, or all of them)
    diff: str | None = None
    decision: str | None = None
    decision_reason: str | None = None  # why no click was needed: a rule, the policy, the mode
    output: str | None = None
    images: list[str] = field(default_factory=list)
    output_stop_reason: str | None = None
    has_call: bool = False
    kind: str = "tool"


@dataclass
class EventBlock:
    """A notice: `event` is retry, request_error, compaction, mcp_connect, abort, max_turns or
    budget_stop."""

    event: str
    text: str
    status: str | None = None
    details: dict[str, object] = field(default_factory=dict)
    kind: str = "event"


@dataclass
class SubagentGroup:
    session_id: str
    provider: str | None = None
    model_id: str | None = None
    blocks: list[Block] = field(default_factory=list)
    kind: str = "subagent"


Block = TextBlock | ThinkingBlock | ImageBlock | ToolCard | EventBlock | SubagentGroup


# --- small public helpers (shared with the live widgets) ----------------------------------


def session_label(session_id: object) -> str:
    """How headers name a session: ids already read `session-…`, so only others get the word."""
    text = str(session_id)
    return text if text.startswith("session-") else f"session {text}"


# How a failed request's notice starts, by its stop reason: the error text after it names the
# cause (a host that does not resolve, a refused port, the provider's answer, a silent endpoint),
# so `timeout` — which the engine uses for every failure that may pass — is not called a timeout.
_REQUEST_LABELS = {
    "failed": "request failed",
    "timeout": "request failed",
    "malformed": "unusable response",
    "auth": "credentials refused",
    "aborted": "request aborted",
}


def request_label(status: object) -> str:
    """`request failed`, `unusable response`, … for a `request_end` status (lower case)."""
    return _REQUEST_LABELS.get(str(status), f"request {status}")


def as_wire(message: object) -> dict[str, object]:
    """A wire dict for an OmniMessage or an already-decoded wire dict."""
    if isinstance(message, OmniMessage):
        return to_dict(message)
    if isinstance(message, Mapping):
        return dict(message)
    raise ValueError(f"transcript message must be an OmniMessage or a dict, got {type(message).__name__}")


def _payload_of(tool_call: object) -> Mapping[str, object]:
    data = as_wire(tool_call)
    payload = data.get("payload")
    return dict(payload) if isinstance(payload, Mapping) else data


def parse_arguments(arguments: object) -> dict[str, object] | None:
    """The tool-call arguments as an object (`tool_arguments.read_call_arguments`, the one
    parser), or None when they are not a JSON object."""
    value = read_call_arguments(dict(arguments) if isinstance(arguments, Mapping) else arguments)
    return value if isinstance(value, dict) else None


def card_roles_of(name: str, tools: ToolCards | None = None) -> CardRoles:
    """How a card of tool `name` reads: from `tools` (a saved bundle's), else from this kernel's
    declaration of it (`registry.declaration_of`); a tool nobody declared shows every argument."""
    if tools is None:
        from ...environment.registry import declaration_of  # (imports every builtin tool)

        return declaration_of(name).card_roles()
    roles = tools.get(name)
    return roles if isinstance(roles, Mapping) else UNDECLARED_CARD


def all_arguments_text(args: Mapping[str, object]) -> str | None:
    """Every argument but the call description, one `name: value` per line, strings as they are
    (multi-line kept), other values as JSON: what a card of a tool nobody declared shows."""
    lines = [
        f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(',', ':'))}"
        for key, value in args.items()
        if key != "description"
    ]
    return "\n".join(lines) or None


def _notes(notes: object, args: Mapping[str, object]) -> list[str]:
    """The texts of `notes` (flag argument → text) whose flag is true in `args`."""
    if not isinstance(notes, Mapping):
        return []
    return [str(text) for argument, text in notes.items() if args.get(argument) is True]


def _string_arg(args: Mapping[str, object] | None, key: str) -> str | None:
    value = (args or {}).get(key)
    return value if isinstance(value, str) else None


def _shorten(text: str, limit: int = DETAIL_LIMIT) -> str:
    text = " ".join(text.split()) if "\n" not in text else text.split("\n", 1)[0] + " …"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_description(arguments: object) -> str | None:
    """The model's one-sentence `description` argument, if any."""
    value = _string_arg(parse_arguments(arguments), "description")
    return value.strip() or None if value is not None else None


def _key(roles: CardRoles, role: str) -> str | None:
    value = roles.get(role)
    return value if isinstance(value, str) and value else None


def tool_card_summary(tool_call: object, roles: CardRoles | None = None) -> tuple[str, str]:
    """(title, detail) for a card header: the tool name and, on one line, its command (`$ cmd (in
    dir)`), else its `headline` arguments joined by ": " (a cell as `cell 3f2a…`), else every
    argument but the description as compact JSON.

    Accepts a `tool_call` OmniMessage, its wire dict, or its payload dict; `roles` default to
    the tool's declaration (`card_roles_of`).
    """
    payload = _payload_of(tool_call)
    name = str(payload.get("name") or "tool")
    raw = payload.get("arguments", "")
    args = parse_arguments(raw)
    if args is None:
        return name, _shorten(raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False))
    roles = roles if roles is not None else card_roles_of(name)
    command = _key(roles, "command")
    if command is not None:
        detail = "$ " + (_string_arg(args, command) or "")
        workdir_key = _key(roles, "workdir")
        workdir = _string_arg(args, workdir_key) if workdir_key else None
        if workdir:
            detail += f" (in {workdir})"
        return name, _shorten(detail + "".join(_notes(roles.get("notes"), args)))
    cell = _key(roles, "cell")
    headline = [key for key in _listed(roles.get("headline")) if isinstance(key, str)]
    values = [f"cell {value}" if key == cell else value for key in headline if (value := _string_arg(args, key))]
    if values:
        return name, _shorten(": ".join(values) + "".join(_notes(roles.get("notes"), args)))
    shown = {key: value for key, value in args.items() if key != "description"}
    return name, _shorten(json.dumps(shown, ensure_ascii=False, separators=(",", ":"))) if shown else ""


def call_body(name: str, arguments: object, roles: CardRoles | None = None) -> str | None:
    """The whole text that says what the call does: the argument its roles name as its command
    or body (exec_command's `cmd`, run_python's `code`, insert_cell's `source`…), every argument
    for a tool nobody declared; None when its roles name none."""
    roles = roles if roles is not None else card_roles_of(name)
    key = _key(roles, "command") or _key(roles, "body")
    if key is None:
        return None
    args = parse_arguments(arguments)
    if key == ALL_ARGUMENTS:
        return all_arguments_text(args) if args is not None else None
    return _string_arg(args, key)


def approval_body(
    name: str, arguments: object, preview: CellPreview | None = None, roles: CardRoles | None = None
) -> str | None:
    """Everything a call will do, as an approval card shows it in full: a diff (against
    `preview`, the cell as the frontend holds it now, for a call that rewrites a cell), the
    cell's source for a call on a cell (delete_cell, run_cell), else `call_body` (a command as
    `$ cmd`; every argument of a tool nobody declared)."""
    roles = roles if roles is not None else card_roles_of(name)
    cell = _key(roles, "cell")
    current = preview.source if preview is not None and cell and roles.get("diff") else None
    diff = diff_preview(name, arguments, current_source=current, roles=roles)
    if diff:
        return diff
    if cell and not roles.get("diff"):
        return preview.source if preview is not None else None
    body = call_body(name, arguments, roles)
    return "$ " + body if body is not None and _key(roles, "command") else body


def diff_preview(
    name: str, arguments: object, current_source: str | None = None, roles: CardRoles | None = None
) -> str | None:
    """A unified diff of what a call writes (its roles' `diff`); None for a call that writes no text.

    From the `old` argument to the `new` one (edit_file's old_string → new_string), from nothing
    (write_file's content: the previous content is unknown to the transcript), or, for a call
    that rewrites a cell, from `current_source` (the cell as the frontend holds it now), else
    the cell's last known source (all added lines when it is unknown).
    """
    roles = roles if roles is not None else card_roles_of(name)
    diff = roles.get("diff")
    args = parse_arguments(arguments)
    if not isinstance(diff, Mapping) or args is None:
        return None
    new_key, old_key = diff.get("new"), diff.get("old")
    new = _string_arg(args, new_key) if isinstance(new_key, str) else None
    if new is None:
        return None
    cell = _key(roles, "cell")
    if cell is not None and not old_key:
        cell_id = _string_arg(args, cell) or ""
        known = current_source if current_source is not None else known_cell_source(cell_id)
        before = known.splitlines() if known is not None else []
        lines = difflib.unified_diff(before, new.splitlines(), f"cell {cell_id}", f"cell {cell_id}", lineterm="", n=3)
        return "\n".join(lines) or None
    path_key = diff.get("path")
    path = (_string_arg(args, path_key) if isinstance(path_key, str) else None) or "file"
    old = _string_arg(args, old_key) if isinstance(old_key, str) else ""
    if old is None:
        return None
    found = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=3))
    if found:
        found += _notes(diff.get("notes"), args)
    return "\n".join(found) if found else None


# --- grouping -----------------------------------------------------------------------------


class _Scope:
    """The blocks of one stream (main session or one subagent) and its open joins."""

    def __init__(self, blocks: list[Block], tools: ToolCards | None = None) -> None:
        self.blocks = blocks
        self.tools = tools
        self.cards: dict[str, list[ToolCard]] = {}
        self.children: dict[str, tuple[SubagentGroup, _Scope]] = {}
        self.open_pairs: dict[str, EventBlock] = {}  # begin/end events waiting for their end

    def card_for(self, tool_call_id: str, *, wants: str) -> ToolCard:
        """The first card for this id still missing `wants` (call/decision/output), else a new one."""
        for card in self.cards.get(tool_call_id, []):
            if wants == "call" and not card.has_call:
                return card
            if wants == "decision" and card.decision is None:
                return card
            if wants == "output" and card.output is None:
                return card
        card = ToolCard(tool_call_id=tool_call_id, title="tool", detail="")
        self.cards.setdefault(tool_call_id, []).append(card)
        self.blocks.append(card)
        return card

    def child(self, session_id: str) -> _Scope:
        if session_id not in self.children:
            group = SubagentGroup(session_id=session_id)
            scope = _Scope(group.blocks, self.tools)
            self.children[session_id] = (group, scope)
            self.blocks.append(group)
        return self.children[session_id][1]

    def group(self, session_id: str) -> SubagentGroup:
        return self.children[session_id][0]

    def roles(self, name: str) -> CardRoles:
        return card_roles_of(name, self.tools)


def _fill_call(card: ToolCard, payload: Mapping[str, object], roles: CardRoles) -> None:
    name = str(payload.get("name") or "")
    arguments = payload.get("arguments", "")
    arguments = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    card.has_call = True
    card.name = name
    card.arguments = visible_controls(arguments)
    card.call_stop_reason = str(payload.get("stop_reason") or "completed")
    title, detail = tool_card_summary(payload, roles)
    card.title, card.detail = visible_controls(title), visible_controls(detail)
    description = tool_description(arguments)
    card.description = visible_controls(description) if description is not None else None
    body = call_body(name, arguments, roles)
    card.body = visible_controls(body) if body is not None else None
    # A static card shows only what the bundle holds: a rewritten cell's diff comes from its
    # output (the live card's preview reads the frontend's cell source, which a saved transcript
    # has not got).
    diff = None if _diff_in_output(roles) else diff_preview(name, arguments, roles=roles)
    card.diff = visible_controls(diff) if diff is not None else None
    _take_edit_cell_diff(card, roles)
    command = _key(roles, "command")
    if command is not None:
        args = parse_arguments(arguments)
        card.command = card.body
        workdir_key = _key(roles, "workdir")
        workdir = _string_arg(args, workdir_key) if workdir_key else None
        card.workdir = visible_controls(workdir) if workdir is not None else None


def _diff_in_output(roles: CardRoles) -> bool:
    """A call that rewrites a cell (a `cell` and a `diff` role): its static diff is its output's."""
    return _key(roles, "cell") is not None and isinstance(roles.get("diff"), Mapping)


def _retry_text(payload: Mapping[str, object]) -> tuple[str, str]:
    status = str(payload.get("status"))
    error = payload.get("error_message")
    attempt, wait_ms = payload.get("attempt"), payload.get("retry_in_ms")
    label = request_label(status)
    head = label[:1].upper() + label[1:] + (f": {error}" if error else "")
    if isinstance(attempt, int) and isinstance(wait_ms, int):
        return "retry", f"{head} — retry {attempt} in {wait_ms / 1000:.1f} s"
    # No wait: nothing is retried (an interrupt, the last attempt), as the live notice says.
    if isinstance(attempt, int) and attempt > 1:
        return "request_error", f"{head} (attempt {attempt})"
    return "request_error", head


def _compaction_text(begin: Mapping[str, object] | None, end: Mapping[str, object] | None) -> str:
    source = begin or end or {}
    text = f"Compaction ({source.get('reason')}, {source.get('mode')})"
    if begin is not None:
        text += f" at {begin.get('context')} context tokens, {begin.get('turns')} turns"
    if end is not None:
        text += f" — {end.get('status')}"
        if end.get("error_message"):
            text += f": {end.get('error_message')}"
    return text


def _mcp_text(begin: Mapping[str, object] | None, end: Mapping[str, object] | None) -> str:
    results = [r for r in _listed((end or {}).get("results", [])) if isinstance(r, Mapping)]
    servers = _listed((begin or {}).get("servers")) or [r.get("server") for r in results]
    text = "MCP connect: " + ", ".join(str(s) for s in servers)
    if end is not None:
        parts = []
        for result in results:
            part = f"{result.get('server')} {result.get('status')} in {result.get('duration_ms')} ms"
            if result.get("tools") is not None:
                part += f", {result.get('tools')} tools"
            if result.get("error"):
                part += f" ({result.get('error')})"
            parts.append(part)
        text += f" — {end.get('status')}" + (": " + "; ".join(parts) if parts else "")
    return text


_PAIRED_EVENTS = {
    "compaction_begin": ("compaction", _compaction_text),
    "compaction_end": ("compaction", _compaction_text),
    "mcp_connect_begin": ("mcp_connect", _mcp_text),
    "mcp_connect_end": ("mcp_connect", _mcp_text),
}


def _add_event(scope: _Scope, payload: Mapping[str, object]) -> None:
    kind = payload.get("type")
    if kind in SILENT_EVENTS:
        return
    if kind == "approval_decision":
        card = scope.card_for(str(payload.get("tool_call_id", "")), wants="decision")
        card.decision = str(payload.get("decision"))
        reason = payload.get("reason")
        card.decision_reason = visible_controls(reason) if isinstance(reason, str) and reason else None
    elif kind == "request_end":
        if payload.get("status") == "completed":
            return
        event, text = _retry_text(payload)
        details = {k: payload[k] for k in ("error_message", "attempt", "retry_in_ms") if k in payload}
        scope.blocks.append(EventBlock(event, text, str(payload.get("status")), details))
    elif kind in _PAIRED_EVENTS:
        _add_paired_event(scope, kind, payload)
    elif kind == "abort":
        reason = payload.get("reason")
        text = "Aborted" + (f": {reason}" if reason else "")
        scope.blocks.append(EventBlock("abort", text, "aborted", {"reason": reason}))


def _add_paired_event(scope: _Scope, kind: str, payload: Mapping[str, object]) -> None:
    """`*_begin` opens one block; its `*_end` completes the same block (or stands alone)."""
    event, render = _PAIRED_EVENTS[kind]
    if kind.endswith("_begin"):
        block = EventBlock(event, render(payload, None), None, {"begin": dict(payload)})
        scope.open_pairs[event] = block
        scope.blocks.append(block)
        return
    opened = scope.open_pairs.pop(event, None)
    if opened is None:
        block = EventBlock(event, "", None, {})
        scope.blocks.append(block)
    else:
        block = opened
    block.details["end"] = dict(payload)
    block.status = str(payload.get("status"))
    begin = block.details.get("begin")
    block.text = render(begin if isinstance(begin, Mapping) else None, payload)


def _add_model(scope: _Scope, payload: Mapping[str, object]) -> None:
    kind = payload.get("type")
    stop = str(payload.get("stop_reason") or "completed")
    if kind == "text":
        text = str(payload.get("text", ""))
        role = str(payload.get("role", "assistant"))
        match = MAX_TURNS_NOTICE.match(text) if role == "assistant" else None
        if match:
            scope.blocks.append(EventBlock("max_turns", text, stop, {"max_turns": int(match.group(1))}))
            return
        budget = BUDGET_STOP_NOTICE.match(text) if role == "assistant" else None
        if budget:
            # the unsent request's own `request_end` says the same: the notice replaces it
            scope.blocks[:] = [
                b
                for b in scope.blocks
                if not (isinstance(b, EventBlock) and b.event == "request_error" and b.details.get("error_message") == budget.group(1))
            ]
            scope.blocks.append(EventBlock("budget_stop", text, stop, {"reason": budget.group(1)}))
            return
        sender = payload.get("sender")
        scope.blocks.append(TextBlock(role, text, stop, sender if isinstance(sender, str) else None))
    elif kind == "thinking":
        scope.blocks.append(ThinkingBlock(str(payload.get("thinking", "")), stop))
    elif kind == "inline_thinking":
        scope.blocks.append(ThinkingBlock(f"[encrypted thinking, {payload.get('mime_type')}]", stop))
    elif kind == "image_url":
        scope.blocks.append(ImageBlock(str(payload.get("image_url", ""))))
    elif kind == "inline_data":
        mime = str(payload.get("mime_type", "application/octet-stream"))
        scope.blocks.append(ImageBlock(f"data:{mime};base64,{payload.get('data', '')}", mime))
    elif kind == "tool_call":
        card = scope.card_for(str(payload.get("tool_call_id", "")), wants="call")
        _fill_call(card, payload, scope.roles(str(payload.get("name") or "")))
    elif kind == "tool_call_output":
        card = scope.card_for(str(payload.get("tool_call_id", "")), wants="output")
        card.output = str(payload.get("output", ""))
        card.images = [i for i in _listed(payload.get("images")) if isinstance(i, str)]
        card.output_stop_reason = stop
        _take_edit_cell_diff(card, scope.roles(card.name))


def edit_cell_result(cell_id: str, index: object, old: str, new: str) -> str:
    """What `edit_cell` tells the model: one summary line, then the diff of the old and the new
    source (2 lines of context) or "(no change)". Static cards split it again."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", lineterm="", n=2)
    diff = "\n".join(lines)
    text = f"Replaced the source of cell {cell_id} (index {index})."
    return text + ("\n" + diff if diff else " (no change)")


def split_edit_cell_output(output: str) -> tuple[str, str] | None:
    """(summary, diff) of a completed `edit_cell` output — "Replaced the source of cell … ." then
    the unified diff `--- before` / `+++ after` of the old and new source (notebook_cells.py
    writes it with `edit_cell_result`); None when the output holds no diff (a refusal, an error,
    "(no change)")."""
    head, marker, diff = output.partition("\n" + EDIT_CELL_DIFF_HEAD)
    if not marker or not head.startswith("Replaced the source of cell"):
        return None
    return head, EDIT_CELL_DIFF_HEAD + diff


def _take_edit_cell_diff(card: ToolCard, roles: CardRoles) -> None:
    """Once the card of a call that rewrites a cell (edit_cell) has both its call and a
    completed output, the diff in the output becomes the card's diff and the output keeps the
    summary line."""
    if not card.has_call or not _diff_in_output(roles) or card.output is None or card.output_stop_reason != "completed":
        return
    parts = split_edit_cell_output(card.output)
    if parts is not None:
        card.output, card.diff = parts[0], visible_controls(parts[1])


def build_blocks(messages: Iterable[object], tools: ToolCards | None = None) -> list[Block]:
    """Group a Task's complete messages and events (wire dicts or OmniMessages) into blocks.

    Partials and unknown shapes are skipped; tool outputs and approval decisions join their call
    by `tool_call_id` within the same origin; messages with an `origin` go into a
    `SubagentGroup` (nested per hop) placed where that subagent first appeared. `tools` are the
    card roles a saved bundle carries (None: this kernel's declarations).
    """
    blocks: list[Block] = []
    root = _Scope(blocks, tools)
    for message in messages:
        try:
            data = as_wire(message)
        except ValueError:
            continue
        payload = data.get("payload")
        if not isinstance(payload, Mapping):
            continue
        scope = root
        origin = data.get("origin")
        for hop in origin if isinstance(origin, list) else []:
            scope = scope.child(str(hop))
        if data.get("type") == "session_meta":
            if isinstance(origin, list) and origin:
                group = _owner_group(root, [str(hop) for hop in origin])
                provider, model_id = payload.get("provider"), payload.get("model_id")
                group.provider = provider if isinstance(provider, str) and provider else group.provider
                group.model_id = model_id if isinstance(model_id, str) and model_id else group.model_id
            continue
        if str(payload.get("type", "")).startswith("partial_"):
            continue
        if data.get("type") == "event_msg":
            _add_event(scope, payload)
        elif data.get("type") == "model_msg":
            _add_model(scope, payload)
    return blocks


def payload_of(data: Mapping[str, object]) -> Mapping[str, object]:
    """A wire message's payload (empty when it has none)."""
    payload = data.get("payload")
    return payload if isinstance(payload, Mapping) else {}


def _listed(value: object) -> list[object]:
    """`value` when it is a list, else an empty one (a saved bundle is a stranger's data)."""
    return value if isinstance(value, list) else []


def _owner_group(root: _Scope, origin: list[str]) -> SubagentGroup:
    scope = root
    for hop in origin[:-1]:
        scope = scope.child(hop)
    scope.child(origin[-1])
    return scope.group(origin[-1])


def iter_tool_cards(blocks: Iterable[Block]) -> Iterable[ToolCard]:
    """Every tool card, subagent groups included, in display order."""
    for block in blocks:
        if isinstance(block, ToolCard):
            yield block
        elif isinstance(block, SubagentGroup):
            yield from iter_tool_cards(block.blocks)
