"""What a widget frontend shows from a cell's iopub traffic: widget states and captured streams.

Owns `widget_states` (comm_id → latest state, from `comm_open` and `comm_msg` updates) and
`captured_text` (comm_id of an `Output` widget → the stream text it captured), replaying the
messages in order the way the frontend does: while an `Output`'s `msg_id` names the cell's
request, the cell's `stream` messages go into that widget (the most recent capture wins), and
`clear_output` empties it. `descendant_text` joins both under one widget.
"""

from __future__ import annotations

from typing import Any


def widget_states(messages: list[dict[str, Any]]) -> dict[str, dict]:
    states: dict[str, dict] = {}
    for msg in messages:
        content = msg["content"]
        if msg["msg_type"] == "comm_open":
            states[content["comm_id"]] = dict(content.get("data", {}).get("state", {}))
        elif msg["msg_type"] == "comm_msg" and content.get("data", {}).get("method") == "update":
            states.setdefault(content["comm_id"], {}).update(content["data"].get("state", {}))
    return states


def captured_text(messages: list[dict[str, Any]]) -> tuple[dict[str, str], str]:
    """(comm_id → captured stream text, stdout text no Output captured)."""
    capturing: list[str] = []  # comm ids with a msg_id set, most recent last
    captured: dict[str, str] = {}
    loose = ""
    for msg in messages:
        kind, content = msg["msg_type"], msg["content"]
        if kind in ("comm_open", "comm_msg"):
            state = content.get("data", {}).get("state", {})
            if "msg_id" in state:
                comm_id = content["comm_id"]
                if comm_id in capturing:
                    capturing.remove(comm_id)
                if state["msg_id"] and state["msg_id"] == msg["parent_header"].get("msg_id"):
                    capturing.append(comm_id)
        elif kind == "stream" and content.get("name") == "stdout":
            if capturing:
                captured[capturing[-1]] = captured.get(capturing[-1], "") + content["text"]
            else:
                loose += content["text"]
        elif kind == "clear_output" and capturing:
            captured[capturing[-1]] = ""
    return captured, loose


def descendant_text(messages: list[dict[str, Any]], comm_id: str) -> str:
    """Every HTML value and captured stream text under the widget `comm_id`, joined."""
    states = widget_states(messages)
    captured, _ = captured_text(messages)
    text, pending, seen = [], [comm_id], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        state = states.get(current, {})
        if isinstance(state.get("value"), str):
            text.append(state["value"])
        text.append(captured.get(current, ""))
        for child in state.get("children") or []:
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                pending.append(child[len("IPY_MODEL_") :])
    return "".join(text)
