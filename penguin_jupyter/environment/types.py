"""Types shared by the Environment, its builtin tools and MCP tools.

Owns the configuration models (ToolDefinitionConfig, ToolConfig) and the inner tool contract
(BuiltinTool, ToolExecutionContext, ToolResult, ToolFailed). The Environment's own configuration,
which names registrations, is `environment_config.py`'s (below the registry, so nothing here
imports the tools back). The close-out algorithm
that wraps every tool lives in `close_out.py`; the tools themselves in `tools/`.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..interfaces import AbortSignal, ApproveFn, EnvironmentServices, MCPServerConfig, Permission
from ..omni import OmniMessage, StopReason
from ..redaction import EMPTY, Redactor

DEFAULT_TIMEOUT_MS = 120_000
DEFAULT_MAX_OUTPUT_LENGTH = 16_000


class _PositionalModel(BaseModel):
    """A pydantic model whose fields may also be passed positionally, in declaration order (the
    call shapes the README's "The core, from Python" writes), with a signature that says so."""

    def __init__(self, *args: Any, **data: Any) -> None:
        names = tuple(type(self).model_fields)
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} positional arguments")
        for name, value in zip(names, args, strict=False):
            if name in data:
                raise TypeError(f"{type(self).__name__} got multiple values for {name!r}")
            data[name] = value
        super().__init__(**data)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.__signature__ = inspect.Signature(
            [
                inspect.Parameter(
                    name,
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,
                    default=inspect.Parameter.empty
                    if info.is_required()
                    else info.get_default(call_default_factory=True),
                    annotation=info.annotation,
                )
                for name, info in cls.model_fields.items()
            ],
            return_annotation=None,
        )


class ToolDefinitionConfig(_PositionalModel):
    """One toolset entry (`tools.builtin[]` in system_config.yaml). Values <= 0 disable a limit.

    The camelCase spellings of system_config.yaml (`forModel`, `timeoutMs`, `maxOutputLength`)
    are accepted as well as the snake_case field names.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    parameters: dict[str, Any] | None = None
    permission: Permission | None = None
    for_model: Literal["vision", "text-only"] | None = None
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_output_length: int = DEFAULT_MAX_OUTPUT_LENGTH
    call_description: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_camel_case(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(key in data for key in _CAMEL_CASE):
            data = dict(data)
            for camel, snake in _CAMEL_CASE.items():
                if camel in data:
                    data[snake] = data.pop(camel)
        return data


_CAMEL_CASE = {"forModel": "for_model", "timeoutMs": "timeout_ms", "maxOutputLength": "max_output_length"}


class ToolConfig(_PositionalModel):
    """The session toolset: `builtin=None` means `default_tool_config().builtin`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, arbitrary_types_allowed=True)

    builtin: list[ToolDefinitionConfig] | None = None
    custom_tools: list[ToolDefinitionConfig] = Field(default_factory=list)
    mcp_servers: list[MCPServerConfig] = Field(default_factory=list)


class ToolFailed(Exception):
    """How a tool reports failure, the one way (docs/tools.md "Failure"): raised from anywhere in
    the tool. `text` becomes its output (after anything it already streamed), `note` a closing
    line after it (`[exit code: 1]`); the stop reason is `failed`. The close-out turns it into
    the failed result; any other exception is a bug, reported as `[tool error] …`."""

    def __init__(self, text: str = "", note: str | None = None) -> None:
        super().__init__(text or note or "failed")
        self.text = text
        self.note = note


@dataclass
class ToolResult:
    """The optional last item a tool yields: self-reported status ("completed", or "aborted" when
    it stopped on the signal; a failure is raised as `ToolFailed`), a terminal note, images. A
    host's own BuiltinTool may still report `stop_reason="failed"` here (the public contract)."""

    stop_reason: StopReason | None = None
    note: str | None = None
    images: list[str] | None = None


@dataclass
class ToolExecutionContext:
    workspace_dir: str
    tool_call_id: str
    signal: AbortSignal | None = None
    approve: ApproveFn | None = None
    services: EnvironmentServices | None = None
    vault: dict[str, str] | None = None
    tool_name: str = ""
    # Replaces configured secrets (docs/security.md): for a tool that shows something to the
    # user directly, outside its output (run_python's display()).
    redactor: Redactor = EMPTY


@runtime_checkable
class BuiltinTool(Protocol):
    """A "loose" tool: yields `partial_tool_call_output` deltas (and origin-tagged messages),
    optionally a final ToolResult. Framing, limits and errors are the Environment's job."""

    name: str
    definition: ToolDefinitionConfig

    def execute(
        self, args: dict[str, Any], ctx: ToolExecutionContext
    ) -> AsyncIterator[OmniMessage | ToolResult]: ...
