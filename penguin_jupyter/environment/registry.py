"""The builtin tools, in the order the model is offered them (docs/tools.md table).

Adding a builtin tool is one class here: its `declaration` gives the default toolset entry
(`defaults.default_tool_config`), the class itself is the factory `(definition, services=None)`,
and the declared argument roles (files read, URLs fetched) feed the credential check. The
Environment assembles only names found in this table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from .types import BuiltinTool

BuiltinToolFactory = Callable[..., BuiltinTool]

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

BUILTIN_DECLARATIONS: dict[str, ToolDeclaration[Any]] = {tool.declaration.name: tool.declaration for tool in BUILTIN_TOOLS}
BUILTIN_TOOL_FACTORIES: dict[str, BuiltinToolFactory] = {tool.declaration.name: tool for tool in BUILTIN_TOOLS}
