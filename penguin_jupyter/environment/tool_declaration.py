"""One declaration per tool (docs/tools.md "Adding a tool"): everything the rest of the code knows
about a tool. Its arguments as one pydantic model, from which the JSON Schema the model sees,
the validation and the one-line errors for bad arguments all derive; each argument's *role*
declared beside its field (`tool_arguments`: the shell command, paths read or written, a URL, a
cell, the text a card shows in full); beside them the permission, limits and which saved rule
"Save to project" may offer. From these: what a call touches (`effect`: the paths as the tool
opens them), how its card reads (`card_roles`, which the saved transcript carries for the
labextension), and the default a tool nobody declared gets (`undeclared`).

Owns `ToolArguments` (the model base and its model-facing schema), `ArgumentRoles`,
`ToolDeclaration` and `DeclaredTool` (the base whose `execute` validates, then hands the parsed
model to `run`, and turns a `ToolFailed` into the failed result). The lenient argument types and
the roles live in `tool_arguments.py`, path resolution in `tool_effects.py`; the behaviour stays
in each tool's module; framing, limits and redaction stay in the close-out.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from ..interfaces import Permission
from ..omni import OmniMessage
from .tool_arguments import (
    MISSING,
    AskedFor,
    CardNote,
    CellRef,
    Headline,
    NewText,
    OldText,
    OnBad,
    ReadsPath,
    ShellCommand,
    ShellInput,
    ShownInFull,
    Unusable,
    WorkingDirectory,
    WritesPath,
)
from .tool_effects import (
    CallEffect,
    CommandAnalyser,
    CommandCall,
    TouchedPath,
    analysed_command,
    resolve_tool_path,
)
from .types import ToolDefinitionConfig, ToolExecutionContext, ToolFailed, ToolResult

# Which allow rule "Save to project" may offer for a call (docs/security.md "What Save to project
# offers"): one naming its command, one naming its path, one for the whole tool, or none ("never":
# tools that run code or change the notebook get "Always allow (this session)" only).
SavedRule = Literal["command", "path", "tool", "never"]

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
class ArgumentRoles:
    """The arguments of a tool by role (names of fields of its arguments model), read from the
    role markers declared on the fields."""

    command: str | None = None
    shell_input: str | None = None
    workdir: str | None = None
    reads: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()  # those of `reads` that may be an http(s) URL
    writes: tuple[str, ...] = ()
    full: str | None = None
    cell: str | None = None
    old: str | None = None
    new: str | None = None
    headline: tuple[str, ...] = ()
    notes: tuple[tuple[str, CardNote], ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.reads, *self.writes)))


@functools.cache
def roles_of(model: type[ToolArguments]) -> ArgumentRoles:
    """The roles `model`'s fields declare (at most one field per single role)."""
    single: dict[str, str] = {}
    reads: list[str] = []
    urls: list[str] = []
    writes: list[str] = []
    headline: list[str] = []
    notes: list[tuple[str, CardNote]] = []
    kinds = {ShellCommand: "command", ShellInput: "shell_input", WorkingDirectory: "workdir", ShownInFull: "full", CellRef: "cell", OldText: "old", NewText: "new"}
    for name, info in model.model_fields.items():
        for item in info.metadata:
            role = kinds.get(type(item))
            if role is not None:
                if role in single:
                    raise TypeError(f"{model.__name__}: two arguments declare {type(item).__name__}")
                single[role] = name
            elif isinstance(item, ReadsPath):
                reads.append(name)
                if item.may_be_url:
                    urls.append(name)
            elif isinstance(item, WritesPath):
                writes.append(name)
            elif isinstance(item, Headline):
                headline.append(name)
            elif isinstance(item, CardNote):
                notes.append((name, item))
    return ArgumentRoles(
        command=single.get("command"),
        shell_input=single.get("shell_input"),
        workdir=single.get("workdir"),
        reads=tuple(reads),
        urls=tuple(urls),
        writes=tuple(writes),
        full=single.get("full"),
        cell=single.get("cell"),
        old=single.get("old"),
        new=single.get("new"),
        headline=tuple(headline),
        notes=tuple(notes),
    )


class _AnyArguments(ToolArguments):
    """The arguments of a tool nobody declared (an MCP server's, a host's own): any object."""

    model_config = ConfigDict(extra="allow", frozen=True)


def _url(value: str) -> bool:
    return value.lower().startswith(("http://", "https://"))


@dataclass(frozen=True)
class ToolDeclaration(Generic[ArgumentsT]):
    """Everything about a tool that is not its behaviour. Argument roles are declared on the
    arguments model's fields (`roles`); `saved_rule` says which saved rule "Save to project" may
    offer (None: by its roles — a command rule for a tool with a `ShellCommand`, a path rule for
    one with path arguments, else one for the whole tool); `declared` is False only for the
    default of a tool nobody declared (`undeclared`); `in_kernel`: the tool acts only inside the
    kernel process and on the notebook attached to it (a sandboxed kernel confines it)."""

    name: str
    description: str
    arguments: type[ArgumentsT]
    permission: Permission
    timeout_ms: int
    max_output_length: int = 16_000
    for_model: Literal["vision", "text-only"] | None = None
    saved_rule: SavedRule | None = None
    declared: bool = True
    in_kernel: bool = False

    @property
    def roles(self) -> ArgumentRoles:
        return roles_of(self.arguments)

    @property
    def saved_rule_kind(self) -> SavedRule:
        if self.saved_rule is not None:
            return self.saved_rule
        roles = self.roles
        return "command" if roles.command else "path" if roles.paths else "tool"

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

    def parse(self, raw: Mapping[str, Any], tool_name: str | None = None) -> ArgumentsT | str:
        """The validated arguments, or the one-line error the model gets (the first bad argument)."""
        name = tool_name or self.name
        try:
            return self.arguments.model_validate(raw, context={"tool": name})
        except ValidationError as exc:
            return argument_error(self.arguments, exc, name)

    # --- what a call touches ----------------------------------------------------------------

    def effect(
        self, arguments: Mapping[str, Any], workspace: str, *, analyse_command: CommandAnalyser | None = None
    ) -> CallEffect:
        """What a call with these (raw) arguments touches, read exactly as the tool reads them: an
        invalid call touches nothing (its tool refuses it before doing anything)."""
        parsed = self.parse(arguments)
        if isinstance(parsed, str):
            return CallEffect()
        return self.effect_of(parsed, workspace, analyse_command=analyse_command)

    def effect_of(
        self, arguments: ToolArguments, workspace: str, *, analyse_command: CommandAnalyser | None = None
    ) -> CallEffect:
        """What a call with these parsed arguments touches; the tool opens the `resolved` paths
        it returns (`CallEffect.path`). A shell command's own reads and writes come from the
        command analysis (`tool_effects.analysed_command`, the hook; `analyse_command` overrides
        it for this call)."""
        roles = self.roles
        base = os.path.abspath(workspace)

        def touched(name: str, value: str) -> TouchedPath:
            return TouchedPath(name, value, resolve_tool_path(base, value), base)

        def values(names: tuple[str, ...]) -> list[tuple[str, str]]:
            return [(n, v) for n in names if isinstance(v := getattr(arguments, n, None), str) and v]

        urls = tuple(v for n, v in values(roles.urls) if _url(v))
        reads = [touched(n, v) for n, v in values(roles.reads) if not (n in roles.urls and _url(v))]
        writes = [touched(n, v) for n, v in values(roles.writes)]
        command = None
        facts = None
        text = getattr(arguments, roles.command, None) if roles.command else None
        if isinstance(text, str) and roles.command:
            workdir = getattr(arguments, roles.workdir, None) if roles.workdir else None
            cwd = resolve_tool_path(base, workdir) if isinstance(workdir, str) and workdir else base
            command = CommandCall(roles.command, text, cwd)
            facts = (analyse_command or analysed_command)(text, cwd, base)
            if facts is not None:  # a command's own paths are the call's (argument "": no path rule reads them)
                reads += [TouchedPath("", p, resolve_tool_path(cwd, p), base) for p in facts.reads]
                writes += [TouchedPath("", p, resolve_tool_path(cwd, p), base) for p in facts.writes]
        shell_input = getattr(arguments, roles.shell_input, None) if roles.shell_input else None
        return CallEffect(
            tuple(reads),
            tuple(writes),
            urls,
            command,
            shell_input if isinstance(shell_input, str) else None,
            facts,
        )

    # --- the card -----------------------------------------------------------------------------

    def card_roles(self) -> dict[str, Any]:
        """How a card of this tool reads, as the saved transcript carries it for the labextension
        (docs/notebook-runtime.md "Tool cards"): `command`/`workdir`, `body` (the argument shown
        in full; "*" for every argument of a tool nobody declared), `cell`, `diff`
        ({old, new, path, notes}), `headline` and `notes` (flag argument → the text it adds to
        the header; a diff's `notes`, below the diff)."""
        if not self.declared:
            return {"body": "*"}
        roles = self.roles
        card: dict[str, Any] = {}
        if roles.command:
            card["command"] = roles.command
            if roles.workdir:
                card["workdir"] = roles.workdir
        body = roles.full or roles.shell_input
        if body:
            card["body"] = body
        if roles.cell:
            card["cell"] = roles.cell
        notes = {where: {name: note.text for name, note in roles.notes if note.where == where} for where in ("header", "diff")}
        if roles.new:
            paths = roles.writes or roles.reads
            diff: dict[str, Any] = {"old": roles.old, "new": roles.new, "path": paths[0] if paths else None}
            diff = {key: value for key, value in diff.items() if value is not None}
            if notes["diff"]:
                diff["notes"] = notes["diff"]
            card["diff"] = diff
        if roles.headline:
            card["headline"] = list(roles.headline)
        if notes["header"]:
            card["notes"] = notes["header"]
        return card

    @classmethod
    def undeclared(cls, definition: ToolDefinitionConfig) -> ToolDeclaration[Any]:
        """The default for a tool nobody declared (an MCP server's, a host's own BuiltinTool): no
        argument roles (it touches nothing the approval layer can name, so read-only and the
        credential check treat it by its permission alone), every argument shown on its card, a
        saved rule for the whole tool."""
        return ToolDeclaration(
            name=definition.name,
            description=definition.description,
            arguments=_AnyArguments,
            permission=definition.permission or "rw",
            timeout_ms=definition.timeout_ms,
            max_output_length=definition.max_output_length,
            for_model=definition.for_model,
            saved_rule="tool",
            declared=False,
        )


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
    and reports a bad call as one failed line; `run` does the work with the parsed model and
    reports failure the one way (docs/tools.md "Failure"): it raises `ToolFailed`. A class that
    sets `declaration` gets `name` and `definition` from it unless it defines its own."""

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
            raise ToolFailed(parsed)
        async for item in self.run(parsed, ctx):
            yield item

    def run(self, arguments: ArgumentsT, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        raise NotImplementedError
