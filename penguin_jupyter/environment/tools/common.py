"""Small helpers every builtin tool shares: the tool base class, delta building, argument
readers, path resolution, pluralization and the yield-time clamp (docs/tools.md "Yield times")."""

from __future__ import annotations

import json
import math
import os
from typing import Any

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage, partial_tool_call_output
from ..commands import CommandSessionManager
from ..types import ToolDefinitionConfig, ToolExecutionContext

MIN_YIELD_MS = 250


class ToolBase:
    """Holds the configured definition; the runtime name follows the config entry's name."""

    def __init__(self, definition: ToolDefinitionConfig, services: EnvironmentServices | None = None):
        self.definition = definition
        self.name = definition.name
        self.services = services


def delta(ctx: ToolExecutionContext, text: str) -> OmniMessage:
    return partial_tool_call_output("delta", text, ctx.tool_call_id)


def missing_argument(arg: str, tool_name: str) -> str:
    return f'Missing required argument "{arg}" for {tool_name}.'


def json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def as_finite_number(value: Any) -> float | None:
    """Numbers and numeric strings; None for anything else (bools included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and value.strip():
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def clamp_yield_ms(raw: Any, default: int, timeout_ms: int) -> int:
    number = (
        raw if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw) else default
    )
    value = max(float(number), MIN_YIELD_MS)
    if timeout_ms > 0:
        value = min(value, max(timeout_ms - 1000, MIN_YIELD_MS))
    return int(value)


def resolve_path(workspace_dir: str, path: str) -> str:
    return os.path.normpath(os.path.join(workspace_dir, path))


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def command_manager(ctx: ToolExecutionContext) -> CommandSessionManager | None:
    """The Environment's command registry (None outside an Environment)."""
    sessions = ctx.services.command_sessions if ctx.services is not None else None
    return sessions if isinstance(sessions, CommandSessionManager) else None
