"""Small helpers every builtin tool shares: the tool base class (a DeclaredTool holding its
configured definition), delta building, pluralization and the yield-time clamp (docs/tools.md
"Yield times"). Reading arguments is the declarations' job (`tool_arguments.py`), resolving a
path argument `tool_effects.py`'s (a tool opens the path its call's effect names)."""

from __future__ import annotations

import math
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage, partial_tool_call_output
from ..commands import CommandSessionManager
from ..tool_declaration import ArgumentsT, DeclaredTool
from ..types import ToolDefinitionConfig, ToolExecutionContext

MIN_YIELD_MS = 250


class ToolBase(DeclaredTool[ArgumentsT]):
    """A builtin tool: its class's `declaration` plus the configured definition (the runtime name
    follows the config entry's name). The class itself is the registry's factory."""

    def __init__(self, definition: ToolDefinitionConfig, services: EnvironmentServices | None = None):
        self.definition = definition
        self.name = definition.name
        self.services = services


def delta(ctx: ToolExecutionContext, text: str) -> OmniMessage:
    return partial_tool_call_output("delta", text, ctx.tool_call_id)


def clamp_yield_ms(raw: Any, default: int, timeout_ms: int) -> int:
    number = (
        raw if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw) else default
    )
    value = max(float(number), MIN_YIELD_MS)
    if timeout_ms > 0:
        value = min(value, max(timeout_ms - 1000, MIN_YIELD_MS))
    return int(value)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def command_manager(ctx: ToolExecutionContext) -> CommandSessionManager | None:
    """The Environment's command registry (None outside an Environment)."""
    sessions = ctx.services.command_sessions if ctx.services is not None else None
    return sessions if isinstance(sessions, CommandSessionManager) else None
