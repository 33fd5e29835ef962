"""The `inspect_variables` tool (r): what data the user has in the notebook.

Owns the tool definition; the summaries themselves come from `summaries.py` (shared with
the `{var}` cell expansion).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from ...environment.types import ToolDefinitionConfig, ToolExecutionContext, ToolResult
from ...omni import OmniMessage, partial_tool_call_output
from .summaries import summarize_variable, user_variables, variables_table

DEFINITION = ToolDefinitionConfig(
    name="inspect_variables",
    description=(
        "Inspect the variables of the user's notebook. With no `names`, lists every data variable "
        "(name, type, shape/len, memory). With `names`, returns a compact summary of each: for "
        "DataFrames the columns, dtypes, null counts, describe() of numeric columns and 5 sample rows "
        "(from a 100,000-row sample on large frames); for arrays and tensors shape, dtype and "
        "statistics; for lazy or distributed objects (polars LazyFrame, Dask, Spark, Dask-backed "
        "xarray) the schema and partitions only, computing nothing; otherwise a bounded repr."
    ),
    parameters={
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "description": "One short sentence, in the user's language, saying why.",
            },
            "names": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Variables to summarize; omit to list all.",
            },
        },
        "required": ["description"],
        "additionalProperties": False,
    },
    permission="r",
    timeout_ms=30_000,
    max_output_length=16_000,
)


class InspectVariablesTool:
    name = "inspect_variables"
    definition = DEFINITION

    def __init__(self, shell: Any) -> None:
        self._shell = shell

    async def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]:
        names = args.get("names")
        namespace = self._shell.user_ns
        if names is None or names == []:
            yield partial_tool_call_output("delta", variables_table(namespace), ctx.tool_call_id)
            return
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            yield partial_tool_call_output(
                "delta", "`names` must be a list of variable names.", ctx.tool_call_id
            )
            yield ToolResult(stop_reason="failed")
            return
        known = user_variables(namespace)
        parts = []
        missing = []
        for name in names:
            if name in namespace:
                # off the kernel's event loop: a summary may take up to its hard limit
                parts.append(await asyncio.to_thread(summarize_variable, name, namespace[name]))
            else:
                missing.append(name)
        if missing:
            available = ", ".join(sorted(known)) or "none"
            parts.append(f"Not defined: {', '.join(missing)}. Available variables: {available}.")
        yield partial_tool_call_output("delta", "\n\n".join(parts), ctx.tool_call_id)
        if missing and len(missing) == len(names):
            yield ToolResult(stop_reason="failed")
