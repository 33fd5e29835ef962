"""BUILTIN_TOOL_FACTORIES: tool name → factory `(definition, services=None) -> BuiltinTool`.

Adding a builtin tool is one entry here (the subagent tools register themselves the same way
when their module lands). The Environment assembles only names found in this table.
"""

from __future__ import annotations

from collections.abc import Callable

from .tools.describe_image import DESCRIBE_IMAGE_NAME, create_describe_image_tool
from .tools.edit_file import EDIT_FILE_NAME, create_edit_file_tool
from .tools.exec_command import EXEC_COMMAND_NAME, create_exec_command_tool
from .tools.input_command import INPUT_COMMAND_NAME, create_input_command_tool
from .tools.input_subagent import INPUT_SUBAGENT_NAME, create_input_subagent_tool
from .tools.kill_command import KILL_COMMAND_NAME, create_kill_command_tool
from .tools.kill_subagent import KILL_SUBAGENT_NAME, create_kill_subagent_tool
from .tools.read_file import READ_FILE_NAME, create_read_file_tool
from .tools.read_image import READ_IMAGE_NAME, create_read_image_tool
from .tools.run_subagent import RUN_SUBAGENT_NAME, create_run_subagent_tool
from .tools.write_file import WRITE_FILE_NAME, create_write_file_tool
from .types import BuiltinTool

BuiltinToolFactory = Callable[..., BuiltinTool]

BUILTIN_TOOL_FACTORIES: dict[str, BuiltinToolFactory] = {
    READ_FILE_NAME: create_read_file_tool,
    EDIT_FILE_NAME: create_edit_file_tool,
    WRITE_FILE_NAME: create_write_file_tool,
    EXEC_COMMAND_NAME: create_exec_command_tool,
    INPUT_COMMAND_NAME: create_input_command_tool,
    KILL_COMMAND_NAME: create_kill_command_tool,
    RUN_SUBAGENT_NAME: create_run_subagent_tool,
    INPUT_SUBAGENT_NAME: create_input_subagent_tool,
    KILL_SUBAGENT_NAME: create_kill_subagent_tool,
    READ_IMAGE_NAME: create_read_image_tool,
    DESCRIBE_IMAGE_NAME: create_describe_image_tool,
}
