"""Shared helpers for the Environment and builtin-tool tests: building a real Environment over
a tmp workspace, running one tool call to completion, and small scripted BuiltinTools for the
close-out scenarios."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from penguin_jupyter.environment import (
    Environment,
    EnvironmentConfig,
    ToolConfig,
    ToolDefinitionConfig,
    ToolExecutionContext,
    ToolResult,
    default_tool_config,
)
from penguin_jupyter.interfaces import AbortSignal, ToolExecutionRequest
from penguin_jupyter.omni import OmniMessage, partial_tool_call_output, tool_call


def tool_entry(name: str, **overrides: Any) -> ToolDefinitionConfig:
    """The default entry for `name` with some fields overridden."""
    for entry in default_tool_config().builtin or []:
        if entry.name == name:
            return entry.model_copy(update=overrides)
    raise KeyError(name)


def make_env(workspace: Any, *entries: ToolDefinitionConfig, **config: Any) -> Environment:
    tool_config = ToolConfig(builtin=list(entries)) if entries else ToolConfig()
    return Environment(EnvironmentConfig(workspace_dir=str(workspace), tool_config=tool_config, **config))


async def run_call(
    env: Environment,
    name: str,
    args: dict[str, Any] | str,
    call_id: str = "call_1",
    signal: AbortSignal | None = None,
) -> list[OmniMessage]:
    arguments = args if isinstance(args, str) else json.dumps(args)
    request = ToolExecutionRequest(tool_call(name, arguments, call_id), signal=signal)
    return [msg async for msg in env.execute_tool(request)]


def final(msgs: list[OmniMessage]) -> Any:
    assert msgs[-1].payload.type == "tool_call_output"
    return msgs[-1].payload


def deltas(msgs: list[OmniMessage]) -> list[Any]:
    return [
        m.payload
        for m in msgs
        if m.payload.type == "partial_tool_call_output" and m.payload.event_type == "delta" and not m.origin
    ]


def delta_text(msgs: list[OmniMessage]) -> str:
    return "".join(p.output for p in deltas(msgs))


def assert_well_framed(msgs: list[OmniMessage], call_id: str = "call_1") -> None:
    """start first, stop second to last, complete last, stream concatenation == output."""
    own = [m for m in msgs if not m.origin]
    assert own[0].payload.type == "partial_tool_call_output" and own[0].payload.event_type == "start"
    assert own[-2].payload.event_type == "stop"
    assert own[-2].payload.stop_reason == own[-1].payload.stop_reason
    assert own[-1].payload.tool_call_id == call_id
    assert delta_text(msgs) == own[-1].payload.output


class ScriptedTool:
    """A BuiltinTool driven by an async generator function `script(args, ctx)`."""

    def __init__(
        self,
        name: str,
        script: Callable[[dict[str, Any], ToolExecutionContext], AsyncIterator[OmniMessage | ToolResult]],
        **definition: Any,
    ):
        self.name = name
        self.definition = ToolDefinitionConfig(name=name, description=f"scripted {name}", **definition)
        self._script = script

    def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        return self._script(args, ctx)


def out(ctx: ToolExecutionContext, text: str, event: str = "delta") -> OmniMessage:
    return partial_tool_call_output(event, text, ctx.tool_call_id)  # type: ignore[arg-type]


def scripted_env(workspace: Any, tool: ScriptedTool, **config: Any) -> Environment:
    return Environment(
        EnvironmentConfig(
            workspace_dir=str(workspace), tool_config=ToolConfig(builtin=[]), extra_tools=[tool], **config
        )
    )
