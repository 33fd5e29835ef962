"""What one Environment is built from: `EnvironmentConfig`.

Owns the configuration an Environment is created with (workspace, toolset, scratchpad, services,
vault, the host's own tool registrations, model class, redactor, disabled tools). It sits above
the registry (it names `ToolRegistration`), so the types every tool imports (`types.py`) do not
import the tools back. Building the Environment from it is `environment.py`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..interfaces import EnvironmentServices
from ..redaction import Redactor
from .registry import ToolRegistration
from .types import BuiltinTool, ToolConfig


@dataclass
class EnvironmentConfig:
    workspace_dir: str
    tool_config: ToolConfig = field(default_factory=ToolConfig)
    session_scratchpad_dir: str | None = None
    services: EnvironmentServices | None = None
    vault: dict[str, str] | None = None
    # The host's own tools (the notebook's kernel and notebook tools), registered after the
    # configured builtin entries the same way (`registry.ToolRegistration`; a ready-made
    # BuiltinTool is registered as it is, with its class's declaration or the undeclared default).
    extra_tools: Sequence[ToolRegistration | BuiltinTool] = field(default_factory=list)
    # "vision" or "text-only": selects entries whose for_model matches (None keeps both).
    model_class: Literal["vision", "text-only"] | None = None
    # Configured secrets become `[redacted:NAME]` in complete tool outputs (what the model sees)
    # and in truncation archives (penguin_jupyter.redaction.Redactor; docs/security.md).
    redactor: Redactor | None = None
    # Names never offered to the model nor run, whatever offers them — builtin, extra (kernel,
    # notebook) or MCP `mcp__<server>__<tool>` (the administrator's `disabled_tools`,
    # docs/security.md "Approval rules and policy").
    disabled_tools: frozenset[str] = frozenset()
