"""The default builtin toolset (docs/tools.md table): each builtin tool's declared entry, in the
registry's order, plus the `description` argument toggle. What an entry holds is declared beside
the tool's behaviour (`tool_declaration.py`)."""

from __future__ import annotations

import copy
from typing import Any

from .registry import BUILTIN_TOOLS
from .types import ToolConfig, ToolDefinitionConfig

DESCRIPTION_ARGUMENT = "description"


def default_tool_config() -> ToolConfig:
    """A fresh ToolConfig holding the full builtin toolset (callers may mutate it freely)."""
    return ToolConfig(builtin=[tool.declaration.definition() for tool in BUILTIN_TOOLS])


def model_facing_parameters(entry: ToolDefinitionConfig) -> dict[str, Any] | None:
    """The schema handed to the model: without the `description` argument when the entry sets
    `call_description: false` (the entry itself is left untouched)."""
    if entry.parameters is None or entry.call_description is not False:
        return entry.parameters
    schema = copy.deepcopy(entry.parameters)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        properties.pop(DESCRIPTION_ARGUMENT, None)
    required = schema.get("required")
    if isinstance(required, list):
        schema["required"] = [r for r in required if r != DESCRIPTION_ARGUMENT]
    return schema
