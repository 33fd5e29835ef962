"""`if_tools` / `unless_tools` in a script entry: a script that follows what the harness offers.

A scripted Task is written before it runs, but which tools a request offers depends on where it
runs (the notebook tools exist only with a linked notebook page). An entry with `if_tools` is
served only to a request that offers all those tools, one with `unless_tools` only to a request
that offers none of them; the server skips (drops) an entry a request does not meet and tries the
next, so one script holds both paths and the answer says what actually happened. Owns reading the
offered tool names from a request body of any protocol; skipping is the server's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _names(tool: Any) -> Iterator[str]:
    if not isinstance(tool, dict):
        return
    function = tool.get("function")  # OpenAI Chat Completions
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        yield function["name"]
    elif isinstance(tool.get("name"), str):  # OpenAI Responses, Anthropic Messages
        yield tool["name"]
    for declaration in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
        if isinstance(declaration, dict) and isinstance(declaration.get("name"), str):  # Gemini
            yield declaration["name"]


def offered_tools(body: dict[str, Any]) -> frozenset[str]:
    """The tool names a request body offers the model (Chat, Responses, Anthropic, Gemini)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return frozenset()
    return frozenset(name for tool in tools for name in _names(tool))


def meets(if_tools: tuple[str, ...], unless_tools: tuple[str, ...], offered: frozenset[str]) -> bool:
    return all(name in offered for name in if_tools) and not any(name in offered for name in unless_tools)
