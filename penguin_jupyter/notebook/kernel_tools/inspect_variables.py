"""The `inspect_variables` tool (r): what data the user has in the notebook.

Owns the tool definition; the summaries themselves come from `summaries.py` (shared with
the `{var}` cell expansion).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import BeforeValidator, Field

from ...environment.registry import declare
from ...environment.tool_arguments import DESCRIBE, CallDescription, OnBad, Unusable
from ...environment.tool_declaration import DeclaredTool, ToolArguments, ToolDeclaration
from ...environment.types import ToolExecutionContext, ToolFailed, ToolResult
from ...omni import OmniMessage, partial_tool_call_output
from ..kernel_shapes import KernelShell
from .summaries import summarize_variable, user_variables, variables_table


def _names(value: object) -> list[str] | None:
    if value is None or value == []:
        return None
    if isinstance(value, list) and all(isinstance(name, str) for name in value):
        return value
    raise Unusable


class InspectVariablesArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    names: Annotated[
        list[str] | None,
        Field(description="Variables to summarize; omit to list all."),
        BeforeValidator(_names),
        OnBad("`names` must be a list of variable names."),
    ] = None


DECLARATION = ToolDeclaration(
    name="inspect_variables",
    description=(
        "Inspect the variables of the user's notebook. With no `names`, lists every data variable "
        "(name, type, shape/len, memory). With `names`, returns a compact summary of each: for "
        "DataFrames the columns, dtypes, null counts, describe() of numeric columns and 5 sample rows "
        "(from a 100,000-row sample on large frames); for arrays and tensors shape, dtype and "
        "statistics; for lazy or distributed objects (polars LazyFrame, Dask, Spark, Dask-backed "
        "xarray) the schema and partitions only, computing nothing; otherwise a bounded repr."
    ),
    arguments=InspectVariablesArguments,
    permission="r",
    timeout_ms=30_000,
    in_kernel=True,
)
declare(DECLARATION)  # `registry.declaration_of` answers for it from import on


class InspectVariablesTool(DeclaredTool[InspectVariablesArguments]):
    declaration = DECLARATION

    def __init__(self, shell: KernelShell) -> None:
        self._shell = shell

    async def run(self, arguments: InspectVariablesArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        names = arguments.names
        namespace = self._shell.user_ns
        if names is None:
            yield partial_tool_call_output("delta", variables_table(namespace), ctx.tool_call_id)
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
        if missing and len(missing) == len(names):
            raise ToolFailed("\n\n".join(parts))
        yield partial_tool_call_output("delta", "\n\n".join(parts), ctx.tool_call_id)
