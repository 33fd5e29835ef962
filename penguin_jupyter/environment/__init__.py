"""The Environment side of the harness: tool assembly, the uniform close-out, the builtin tools,
command sessions, background completion reports and the command policy.

MCP lives in `mcp/` (its own owner); the subagent tools register into BUILTIN_TOOL_FACTORIES.
"""

from .close_out import run_with_close_out
from .command_policy import (
    DEFAULT_COMMAND_POLICY_RULES,
    CommandPolicy,
    CommandPolicyRule,
    evaluate_command_policy,
    wrap_approve_with_command_policy,
)
from .defaults import default_tool_config
from .environment import Environment
from .environment_config import EnvironmentConfig
from .notices import BackgroundEvent, background_notice_message, background_notice_text
from .registry import BUILTIN_TOOL_FACTORIES
from .types import (
    BuiltinTool,
    ToolConfig,
    ToolDefinitionConfig,
    ToolExecutionContext,
    ToolResult,
)

__all__ = [
    "BUILTIN_TOOL_FACTORIES",
    "DEFAULT_COMMAND_POLICY_RULES",
    "BackgroundEvent",
    "BuiltinTool",
    "CommandPolicy",
    "CommandPolicyRule",
    "Environment",
    "EnvironmentConfig",
    "ToolConfig",
    "ToolDefinitionConfig",
    "ToolExecutionContext",
    "ToolResult",
    "background_notice_message",
    "background_notice_text",
    "default_tool_config",
    "evaluate_command_policy",
    "run_with_close_out",
    "wrap_approve_with_command_policy",
]
