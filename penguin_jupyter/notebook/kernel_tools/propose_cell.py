"""The `propose_cell` tool (r): put code into a new cell below for the user to review and run.

Owns the tool definition; the cell is created with IPython's `set_next_input`, so nothing
runs until the user runs it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ...environment.types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from ...omni import OmniMessage, partial_tool_call_output

DEFINITION = ToolDefinitionConfig(
    name="propose_cell",
    description=(
        "Propose a code cell to the user: the code is inserted as a new cell right below the current "
        "one, unexecuted, for the user to review and run. Use it for changes the user should own "
        "(cleaning steps, final plots), not for exploration."
    ),
    parameters={
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "description": "One short sentence, in the user's language, saying what the cell does.",
            },
            "code": {"type": "string", "description": "The cell's source code."},
        },
        "required": ["description", "code"],
        "additionalProperties": False,
    },
    permission="r",
    timeout_ms=30_000,
    max_output_length=16_000,
)


class ProposeCellTool:
    name = "propose_cell"
    definition = DEFINITION

    def __init__(self, shell: Any) -> None:
        self._shell = shell
        self.proposed: list[str] = []

    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            yield partial_tool_call_output(
                "delta", "propose_cell needs a non-empty `code` string.", ctx.tool_call_id
            )
            yield ToolResult(stop_reason="failed")
            return
        self._shell.set_next_input(code, replace=False)
        self.proposed.append(code)
        lines = code.count("\n") + 1
        yield partial_tool_call_output(
            "delta",
            f"Proposed a new cell ({lines} line{'s' if lines != 1 else ''}) directly below the current "
            "%%penguin cell. It has not been run; the user will review and run it.",
            ctx.tool_call_id,
        )
