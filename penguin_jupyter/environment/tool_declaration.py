"""One declaration per tool (docs/tools.md "Declaring a tool"): its arguments as one pydantic model,
from which the JSON Schema the model sees, the validation and the one-line errors for bad
arguments all derive, and beside it the permission, limits and which arguments name files, URLs
or a command (for the approval layer and the credential check).

Owns `ToolArguments` (the model base and its model-facing schema), `ToolDeclaration` and
`DeclaredTool` (the base whose `execute` validates, then hands the parsed model to `run`). The
lenient argument types the tools share live in `tool_arguments.py`; the behaviour stays in each
tool's module; framing, limits and redaction stay in the close-out.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from ..interfaces import Permission
from ..omni import OmniMessage, partial_tool_call_output
from .tool_arguments import MISSING, AskedFor, OnBad, Unusable
from .types import ToolDefinitionConfig, ToolExecutionContext, ToolResult

# Key order of every schema the model sees (kept stable: a reordering changes the request bytes).
_KEY_ORDER = ("type", "items", "enum", "minimum", "properties", "required", "additionalProperties", "description")


class _ModelFacingSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without what the model does not need: no titles, no defaults,
    `X | None` as plain `X` (optional means "not required"), keys in `_KEY_ORDER`."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return _ordered(value)


def _ordered(value: Any, in_properties: bool = False) -> Any:
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    if not isinstance(value, dict):
        return value
    if in_properties:  # argument names keep their declaration order
        return {key: _ordered(item) for key, item in value.items()}
    rank = {key: index for index, key in enumerate(_KEY_ORDER)}
    keys = sorted(value, key=lambda key: (rank.get(key, len(rank)), key))
    return {key: _ordered(value[key], in_properties=key == "properties") for key in keys}


class ToolArguments(BaseModel):
    """The arguments of one tool. Unknown keys are ignored when a call is parsed (a model may
    send extras) but the schema forbids them; a field's docstring-free `description` is what the
    model reads."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @classmethod
    def model_facing_schema(cls) -> dict[str, Any]:
        """The JSON Schema sent to the model: an object of the fields in declaration order (a
        fresh copy: callers may change it)."""
        return copy.deepcopy(_schema_of(cls))


@functools.cache
def _schema_of(model: type[ToolArguments]) -> dict[str, Any]:
    generated = model.model_json_schema(schema_generator=_ModelFacingSchema)
    required = [name for name, info in model.model_fields.items() if info.is_required() or _asked_for(info.metadata)]
    return {
        "type": "object",
        "properties": generated.get("properties", {}),
        "required": required,
        "additionalProperties": False,
    }


def _asked_for(metadata: list[Any]) -> bool:
    return any(isinstance(item, AskedFor) for item in metadata)


ArgumentsT = TypeVar("ArgumentsT", bound=ToolArguments)


@dataclass(frozen=True)
class ToolDeclaration(Generic[ArgumentsT]):
    """Everything about a tool that is not its behaviour. `file_reads` / `file_writes` name the
    arguments that are paths the tool reads / writes, `urls` those that may be a URL it fetches,
    `command` the argument that is a shell command. `in_kernel`: the tool acts only inside the
    kernel process and on the notebook attached to it (a sandboxed kernel confines it)."""

    name: str
    description: str
    arguments: type[ArgumentsT]
    permission: Permission
    timeout_ms: int
    max_output_length: int = 16_000
    for_model: Literal["vision", "text-only"] | None = None
    file_reads: tuple[str, ...] = ()
    file_writes: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    command: str | None = None
    in_kernel: bool = False

    def definition(self) -> ToolDefinitionConfig:
        """The toolset entry (a fresh one: callers may copy it with their own limits)."""
        return ToolDefinitionConfig(
            name=self.name,
            description=self.description,
            parameters=self.arguments.model_facing_schema(),
            permission=self.permission,
            for_model=self.for_model,
            timeout_ms=self.timeout_ms,
            max_output_length=self.max_output_length,
        )

    def parse(self, raw: dict[str, Any], tool_name: str | None = None) -> ArgumentsT | str:
        """The validated arguments, or the one-line error the model gets (the first bad argument)."""
        name = tool_name or self.name
        try:
            return self.arguments.model_validate(raw, context={"tool": name})
        except ValidationError as exc:
            return argument_error(self.arguments, exc, name)


def argument_error(model: type[ToolArguments], exc: ValidationError, tool_name: str) -> str:
    """The one line for the first error: the field's `OnBad` message (or "Missing required
    argument"), a model-level check's own message, or pydantic's text as a last resort."""
    error = exc.errors(include_url=False)[0]
    location = error.get("loc") or ()
    field = str(location[0]) if location else ""
    info = model.model_fields.get(field)
    if info is None:
        return str(error.get("msg", "invalid arguments")).removeprefix("Value error, ")
    on_bad = next((item for item in info.metadata if isinstance(item, OnBad)), None)
    cause = (error.get("ctx") or {}).get("error")
    missing = error.get("type") == "missing"
    got = None if missing else error.get("input")
    if isinstance(cause, Unusable) and cause.shown is not Unusable.INPUT:
        got = cause.shown
    if isinstance(cause, Unusable) and cause.message is not None:
        on_bad = OnBad(cause.message)
    if on_bad is not None:
        return on_bad.text(tool_name, field, got)
    if missing or isinstance(cause, Unusable):
        return OnBad(MISSING).text(tool_name, field, got)
    return f'Invalid "{field}" for {tool_name}: {error.get("msg", "invalid value")}.'


class DeclaredTool(Generic[ArgumentsT]):
    """A BuiltinTool whose arguments come from its class's `declaration`: `execute` parses them
    and reports a bad call as one failed line; `run` does the work with the parsed model. A class
    that sets `declaration` gets `name` and `definition` from it unless it defines its own."""

    declaration: ClassVar[ToolDeclaration[Any]]
    name: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declaration = cls.__dict__.get("declaration")
        if isinstance(declaration, ToolDeclaration):
            if "name" not in cls.__dict__:
                cls.name = declaration.name
            if "definition" not in cls.__dict__:  # (run_python's is a property: its timeout varies)
                setattr(cls, "definition", declaration.definition())  # noqa: B010

    async def execute(self, args: dict[str, Any], ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        parsed = self.declaration.parse(args, self.name)
        if isinstance(parsed, str):
            yield partial_tool_call_output("delta", parsed, ctx.tool_call_id)
            yield ToolResult(stop_reason="failed")
            return
        async for item in self.run(parsed, ctx):
            yield item

    def run(self, arguments: ArgumentsT, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        raise NotImplementedError
