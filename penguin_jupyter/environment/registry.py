"""How a tool is registered, and where its declaration is looked up (docs/tools.md "Adding a tool").

Owns `ToolRegistration` (a tool's declaration and the factory that builds it for one
Environment: `(definition, services) -> BuiltinTool`), the builtin tools in the order the model
is offered them (`BUILTIN_TOOLS`: adding a builtin tool is one line here), and the one lookup
every consumer uses — rules, the credential check, the card, the offer — `declaration_of(name)`:
a declared tool's declaration (builtin, or kernel and notebook tools once an Environment
registered them), else the `ToolDeclaration.undeclared` default. The kernel and notebook tools
are registered the same way, by the notebook (`notebook/kernel_tools`), through
`EnvironmentConfig.extra_tools`; the Environment builds every registration alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..interfaces import EnvironmentServices
from .tool_declaration import ToolDeclaration
from .tools.describe_image import DescribeImageTool
from .tools.edit_file import EditFileTool
from .tools.exec_command import ExecCommandTool
from .tools.input_command import InputCommandTool
from .tools.input_subagent import InputSubagentTool
from .tools.kill_command import KillCommandTool
from .tools.kill_subagent import KillSubagentTool
from .tools.read_file import ReadFileTool
from .tools.read_image import ReadImageTool
from .tools.run_subagent import RunSubagentTool
from .tools.write_file import WriteFileTool
from .types import BuiltinTool, ToolDefinitionConfig

BuiltinToolFactory = Callable[..., BuiltinTool]
ToolFactory = Callable[[ToolDefinitionConfig, EnvironmentServices | None], BuiltinTool]


@dataclass(frozen=True)
class ToolRegistration:
    """A tool as an Environment registers it: its declaration, and how to build it (given the
    toolset entry in force and the Environment's services)."""

    declaration: ToolDeclaration[Any]
    factory: ToolFactory

    @property
    def name(self) -> str:
        return self.declaration.name

    @classmethod
    def of_instance(cls, tool: BuiltinTool) -> ToolRegistration:
        """A tool already built (a host's own BuiltinTool, a test's): its class's declaration, or
        the undeclared default from its definition."""
        declaration = getattr(type(tool), "declaration", None)
        if not isinstance(declaration, ToolDeclaration):
            declaration = ToolDeclaration.undeclared(tool.definition)
        return cls(declaration, lambda _definition, _services: tool)


def registration(item: ToolRegistration | BuiltinTool) -> ToolRegistration:
    return item if isinstance(item, ToolRegistration) else ToolRegistration.of_instance(item)


BUILTIN_TOOLS = (
    ReadFileTool,
    EditFileTool,
    WriteFileTool,
    ExecCommandTool,
    InputCommandTool,
    KillCommandTool,
    RunSubagentTool,
    InputSubagentTool,
    KillSubagentTool,
    ReadImageTool,
    DescribeImageTool,
)

BUILTIN_REGISTRATIONS: tuple[ToolRegistration, ...] = tuple(ToolRegistration(tool.declaration, tool) for tool in BUILTIN_TOOLS)
BUILTIN_DECLARATIONS: dict[str, ToolDeclaration[Any]] = {r.name: r.declaration for r in BUILTIN_REGISTRATIONS}
BUILTIN_TOOL_FACTORIES: dict[str, BuiltinToolFactory] = {r.name: r.factory for r in BUILTIN_REGISTRATIONS}

_declared: dict[str, ToolDeclaration[Any]] = dict(BUILTIN_DECLARATIONS)


def declare(declaration: ToolDeclaration[Any]) -> None:
    """Make `declaration` what `declaration_of` answers for its name (the Environment declares
    every tool it registers). A different declaration under a name already declared is refused:
    a rule, a card or a check must never read one tool's roles for another."""
    if not declaration.declared:
        return
    known = _declared.get(declaration.name)
    if known is not None and known is not declaration and known != declaration:
        raise ValueError(f"tool {declaration.name!r} is declared twice, differently")
    _declared[declaration.name] = declaration


def declaration_of(name: str, definition: ToolDefinitionConfig | None = None) -> ToolDeclaration[Any]:
    """The declaration of tool `name`: the declared one, else the undeclared default (from
    `definition` when given: an MCP tool's)."""
    known = _declared.get(name)
    if known is not None:
        return known
    return ToolDeclaration.undeclared(definition or ToolDefinitionConfig(name=name, description=""))
