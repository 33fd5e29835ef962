"""What an approval card says a call touches, beyond its own arguments (docs/security.md "What a
call touches").

Owns `where_lines`: from the call's declaration (`registry.declaration_of`) and its effect, one
line per path that lands elsewhere than it reads — `writes ~/.ipython/profile_default/startup/
00-setup.py (outside the workspace, through the symlink notes)` — so the card shows what the
call does, not only what it says. A failure to work it out is itself a line (never an
exception into the asking). Deciding the call is the router's; drawing the card the view's.
"""

from __future__ import annotations

from ...environment.registry import declaration_of
from ...omni import OmniMessage, ToolCallPayload, read_call_arguments


def where_lines(tool_call: OmniMessage, workspace: str) -> list[str]:
    """The card's lines for the paths of `tool_call` that land elsewhere than written."""
    payload = tool_call.payload
    if not isinstance(payload, ToolCallPayload):
        return []
    arguments = read_call_arguments(payload.arguments)
    if not isinstance(arguments, dict):
        return []
    try:
        return declaration_of(payload.name).effect(arguments, workspace).where_lines()
    except Exception as exc:  # the card still shows the call; say what could not be worked out
        return [f"where this call's paths lead could not be worked out ({type(exc).__name__})"]
