"""The Anthropic Messages request rules the scripted server applies, as the real API does.

Owns the checks only (each returns the API's own error text, or None): `max_tokens` and a
non-empty `messages`; consecutive same-role messages are combined first, as the API combines
them; every `tool_use` answered by a `tool_result` in the next message, every `tool_result`
naming a `tool_use` of the previous message, tool results first in their message; every
thinking signature and redacted_thinking payload echoed unchanged; with thinking enabled, the
final assistant turn of a tool loop starts with its thinking and carries every thinking block
it was issued. Sources: docs/model.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import signatures
from .base import Ledger

THINKING_KIND = "anthropic-thinking"
REDACTED_KIND = "anthropic-redacted"
_THINKING_TYPES = ("thinking", "redacted_thinking")


@dataclass
class _Turn:
    role: str
    index: int  # position of the turn's first message in the request
    blocks: list[dict[str, Any]]

    def tool_use_ids(self) -> list[str]:
        return [str(b.get("id")) for b in self.blocks if b.get("type") == "tool_use"]


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _turns(messages: list[Any]) -> list[_Turn]:
    turns: list[_Turn] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role"))
        blocks = _blocks(message.get("content"))
        if turns and turns[-1].role == role:
            turns[-1].blocks.extend(blocks)
        else:
            turns.append(_Turn(role, index, blocks))
    return turns


def problem(body: Mapping[str, Any], ledger: Ledger, thinking_on: bool) -> str | None:
    """The first rule `body` breaks, in the API's words; None when it breaks none."""
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    turns = _turns(messages)
    for position, turn in enumerate(turns):
        found = _opaque_blocks(turn) if turn.role == "assistant" else _tool_results(turn, turns, position)
        if found is None and turn.role == "assistant":
            found = _answered(turn, turns[position + 1] if position + 1 < len(turns) else None)
        if found is not None:
            return found
    return _final_turn_thinking(turns, ledger) if thinking_on else None


def _opaque_blocks(turn: _Turn) -> str | None:
    for number, block in enumerate(turn.blocks):
        if block.get("type") == "thinking" and not signatures.verify(
            THINKING_KIND, block.get("signature"), str(block.get("thinking", ""))
        ):
            return f"messages.{turn.index}.content.{number}: Invalid `signature` in `thinking` block"
        if block.get("type") == "redacted_thinking" and not signatures.verify(
            REDACTED_KIND, block.get("data")
        ):
            return f"messages.{turn.index}.content.{number}: Invalid `data` in `redacted_thinking` block"
    return None


def _answered(turn: _Turn, following: _Turn | None) -> str | None:
    ids = turn.tool_use_ids()
    if not ids:
        return None
    results = (
        {str(b.get("tool_use_id")) for b in following.blocks if b.get("type") == "tool_result"}
        if following
        else set()
    )
    missing = [tool_use_id for tool_use_id in ids if tool_use_id not in results]
    if not missing:
        return None
    return (
        f"messages.{turn.index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
        f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def _tool_results(turn: _Turn, turns: list[_Turn], position: int) -> str | None:
    previous = turns[position - 1] if position > 0 and turns[position - 1].role == "assistant" else None
    known = set(previous.tool_use_ids()) if previous else set()
    other_seen = False
    for number, block in enumerate(turn.blocks):
        if block.get("type") != "tool_result":
            other_seen = True
            continue
        if str(block.get("tool_use_id")) not in known:
            return (
                f"messages.{turn.index}.content.{number}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block "
                "in the previous message."
            )
        if other_seen:
            return (
                f"messages.{turn.index}.content.{number}: `tool_result` blocks must come first in the content "
                "array; any text must come after all tool results."
            )
    return None


def _final_turn_thinking(turns: list[_Turn], ledger: Ledger) -> str | None:
    """With thinking on, the assistant turn a trailing tool_result answers keeps its thinking."""
    if len(turns) < 2 or turns[-1].role != "user" or turns[-2].role != "assistant":
        return None
    final = turns[-2]
    issued: list[str] = []
    for tool_use_id in final.tool_use_ids():
        for token in ledger.anthropic_for(tool_use_id) or ():
            if token not in issued:
                issued.append(token)
    if not issued:
        return None
    first = final.blocks[0].get("type") if final.blocks else "nothing"
    if first not in _THINKING_TYPES:
        return (
            f"messages.{final.index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{first}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block "
            "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
            "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "
            "our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        )
    echoed = {
        str(b.get("signature") or b.get("data")) for b in final.blocks if b.get("type") in _THINKING_TYPES
    }
    missing = [token for token in issued if token not in echoed]
    if missing:
        return (
            f"messages.{final.index}: {len(missing)} of the {len(issued)} thinking/redacted_thinking blocks of "
            "this assistant turn were not passed back; echo the assistant message exactly as received."
        )
    return None
