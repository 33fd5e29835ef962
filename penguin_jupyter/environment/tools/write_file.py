"""write_file (docs/tools.md "write_file"): create or atomically overwrite a file (parents created,
mode preserved) and report line/byte counts plus a line diff against the previous content (read
only from a regular file of at most `DIFFABLE_PREVIOUS_BYTES`)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import Field

from ...omni import OmniMessage
from ...regular_files import read_regular_bytes
from ..file_journal import journal_before_write
from ..tool_arguments import AnyText, Headline, NewText, Text, WritesPath
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, delta, plural
from .diff import line_diff, split_lines
from .file_utils import atomic_write, os_error_text

DIFFABLE_PREVIOUS_BYTES = 1024 * 1024
MAX_DIFF_LINES = 60
DEFAULT_BUDGET = 16000
BUDGET_RESERVE = 120


class WriteFileArguments(ToolArguments):
    file_path: Annotated[Text, Field(description="Path of the file to write."), WritesPath(), Headline()]
    content: Annotated[AnyText, Field(description="The complete new content of the file."), NewText()]


WRITE_FILE = ToolDeclaration(
    name="write_file",
    description="Create a file or overwrite it with the given content (parent directories are created).",
    arguments=WriteFileArguments,
    permission="rw",
    timeout_ms=30000,
)


def _too_large(added: int, removed: int) -> str:
    return f"+{added}/−{removed} lines vs the previous content (diff too large to show)"


def overwrite_diff(previous: str, content: str, first_line: str, budget_limit: int) -> str | None:
    if previous == content:
        return "(content unchanged)"
    old, new = split_lines(previous), split_lines(content)
    result = line_diff(old, new)
    if result is None:
        prefix = 0
        while prefix < len(old) and prefix < len(new) and old[prefix] == new[prefix]:
            prefix += 1
        suffix = 0
        while (
            suffix < len(old) - prefix and suffix < len(new) - prefix and old[-1 - suffix] == new[-1 - suffix]
        ):
            suffix += 1
        return _too_large(len(new) - prefix - suffix, len(old) - prefix - suffix)
    budget = (budget_limit if budget_limit > 0 else DEFAULT_BUDGET) - BUDGET_RESERVE
    size = len(first_line) + sum(len(h) + 1 for h in result.hunks)
    if result.rendered_lines > MAX_DIFF_LINES or size > budget:
        return _too_large(result.added, result.removed)
    return "\n".join(result.hunks) if result.hunks else None


class WriteFileTool(ToolBase[WriteFileArguments]):
    declaration = WRITE_FILE

    async def run(self, arguments: WriteFileArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        abs_path = self.declaration.effect_of(arguments, ctx.workspace_dir).path("file_path").resolved
        yield delta(ctx, self._write(arguments.file_path, abs_path, arguments.content, ctx.workspace_dir))

    def _write(self, file_path: str, abs_path: str, content: str, workspace_dir: str) -> str:
        if os.path.isdir(abs_path):
            raise ToolFailed(f'Cannot write "{file_path}": it is a directory.')
        previous: bytes | None = None
        existed = os.path.lexists(abs_path)
        try:  # for the diff only: a regular file of at most 1 MB (never a FIFO or /dev/zero)
            previous = read_regular_bytes(abs_path, DIFFABLE_PREVIOUS_BYTES) if existed else None
        except OSError:
            previous = None
        data = content.encode("utf-8", "surrogatepass")
        journal_before_write(self.services, abs_path, workspace_dir)  # undo (docs/undo.md)
        try:
            os.makedirs(os.path.dirname(abs_path), exist_ok=True)
            atomic_write(abs_path, data)
        except OSError as exc:
            raise ToolFailed(f'Failed to write "{file_path}": {os_error_text(exc)}') from None
        counts = f"({plural(len(split_lines(content)), 'line')}, {plural(len(data), 'byte')})"
        first_line = f'{"Overwrote" if existed else "Created"} "{file_path}" {counts}.'
        if not existed or previous is None or b"\0" in previous:
            return first_line
        diff = overwrite_diff(
            previous.decode("utf-8", "replace"), content, first_line, self.definition.max_output_length
        )
        return first_line + "\n" + diff if diff else first_line

