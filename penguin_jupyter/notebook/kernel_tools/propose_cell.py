"""The `propose_cell` tool (r): put code into a new cell below for the user to review and run.

Owns the tool definition; the cell is created with IPython's `set_next_input`, so nothing
runs until the user runs it. A kernel keeps one such proposal per execution (a second
`set_next_input` overwrites the first), so a second call in the same `%%penguin` cell appends
its code to the pending proposal instead of silently replacing it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import Field

from ...environment.registry import declare
from ...environment.tool_arguments import DESCRIBE, CallDescription, NonBlankText, OnBad, ShownInFull
from ...environment.tool_declaration import DeclaredTool, ToolArguments, ToolDeclaration
from ...environment.types import ToolExecutionContext, ToolResult
from ...omni import OmniMessage, partial_tool_call_output
from ..kernel_shapes import KernelShell

# The `code` argument of the kernel tools that take code.
NEEDS_CODE = OnBad("{tool} needs a non-empty `code` string.")


class ProposeCellArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    code: Annotated[NonBlankText, Field(description="The cell's source code."), NEEDS_CODE, ShownInFull()]


DECLARATION = ToolDeclaration(
    name="propose_cell",
    description=(
        "Propose a code cell to the user: the code is inserted as a new cell right below the current "
        "one, unexecuted, for the user to review and run. Use it for changes the user should own "
        "(cleaning steps, final plots), not for exploration."
    ),
    arguments=ProposeCellArguments,
    permission="r",
    timeout_ms=30_000,
    in_kernel=True,
)
declare(DECLARATION)  # `registry.declaration_of` answers for it from import on


class ProposeCellTool(DeclaredTool[ProposeCellArguments]):
    declaration = DECLARATION

    def __init__(self, shell: KernelShell) -> None:
        self._shell = shell
        self.proposed: list[str] = []

    async def run(self, arguments: ProposeCellArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        code = arguments.code
        pending = _pending_proposal(self._shell)
        cell = code if pending is None else pending.rstrip("\n") + "\n\n" + code
        self._shell.set_next_input(cell, replace=False)
        self.proposed.append(code)
        lines = cell.count("\n") + 1
        size = f"{lines} line{'s' if lines != 1 else ''}"
        if pending is None:
            text = f"Proposed a new cell ({size}) directly below the current %%penguin cell."
        else:
            text = f"Appended to the cell already proposed in this task (now {size}; one proposed cell per %%penguin cell)."
        yield partial_tool_call_output(
            "delta", text + " It has not been run; the user will review and run it.", ctx.tool_call_id
        )


def _pending_proposal(shell: KernelShell) -> str | None:
    """The code already proposed during the current execution (the kernel's payload), if any."""
    manager = getattr(shell, "payload_manager", None)
    try:
        payloads = manager.read_payload() if manager is not None else []
    except Exception:  # IPython's payload manager in any state: no proposal read
        return None
    for payload in payloads:
        if isinstance(payload, dict) and payload.get("source") == "set_next_input":
            return str(payload.get("text", ""))
    return None
