"""edit_file (docs/tools.md "edit_file"): exact string replacement with an atomic write and a
git-style unified diff of every replacement site (at most 5 hunks, self-budgeted). It edits only
a regular file of at most `MAX_EDITABLE_BYTES` (never a FIFO or a device, which it would hang on
or read without end)."""

from __future__ import annotations

import errno
import os
from collections.abc import AsyncIterator
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from ...omni import OmniMessage
from ...regular_files import RefusedFile, read_regular_bytes
from ..file_journal import journal_before_write
from ..tool_arguments import AnyText, CardNote, Flag, Headline, NewText, OldText, Text, Unusable, WritesPath
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, delta, plural
from .diff import CONTEXT, diff_line, hunk_header, split_lines
from .file_utils import atomic_write, os_error_text
from .path_hint import missing_path_hint

MAX_HUNKS = 5
MAX_EDITABLE_BYTES = 64 * 1024 * 1024
DEFAULT_BUDGET = 16000
BUDGET_RESERVE = 120
MERGE_DISTANCE = 3

EMPTY_OLD_STRING = (
    "old_string must not be empty — edit_file replaces existing text. "
    "To create a file or rewrite it wholesale, use write_file."
)


def _text_to_replace(value: Any) -> str:
    if not isinstance(value, str):
        raise Unusable
    if not value:
        raise Unusable(message=EMPTY_OLD_STRING)
    return value


class EditFileArguments(ToolArguments):
    file_path: Annotated[Text, Field(description="Path of the file to edit."), WritesPath(), Headline()]
    old_string: Annotated[
        str, Field(description="The exact text to replace."), BeforeValidator(_text_to_replace), OldText()
    ]
    new_string: Annotated[AnyText, Field(description="The replacement text."), NewText()]
    replace_all: Annotated[
        Flag,
        Field(description="Replace every occurrence instead of requiring a unique match."),
        CardNote("(replace_all: every occurrence)", where="diff"),
    ] = False


EDIT_FILE = ToolDeclaration(
    name="edit_file",
    description=(
        "Replace an exact string in an existing file and show the resulting diff. `old_string` must "
        "match the file exactly (whitespace included) and be unique unless `replace_all` is true."
    ),
    arguments=EditFileArguments,
    permission="rw",
    timeout_ms=30000,
)


def _occurrences(content: str, old: str) -> list[int]:
    positions = []
    start = content.find(old)
    while start != -1:
        positions.append(start)
        start = content.find(old, start + len(old))
    return positions


def _replacement_hunks(content: str, positions: list[int], old: str, new: str) -> list[tuple[str, int]]:
    """(rendered hunk, occurrences it covers) per merged replacement region, in file order."""
    file_lines = split_lines(content)
    keep_lines = [line + "\n" for line in content.split("\n")]
    if content.endswith("\n"):
        keep_lines.pop()
    else:
        keep_lines[-1] = keep_lines[-1][:-1]
    regions: list[list[int]] = []  # [a1, a2, count]
    for pos in positions:
        a1 = content.count("\n", 0, pos) + 1
        a2 = content.count("\n", 0, pos + len(old) - 1) + 1
        if regions and a1 - MERGE_DISTANCE <= regions[-1][1] + MERGE_DISTANCE:
            regions[-1][1] = max(regions[-1][1], a2)
            regions[-1][2] += 1
        else:
            regions.append([a1, a2, 1])
    hunks: list[tuple[str, int]] = []
    shift = 0
    for a1, a2, count in regions:
        old_text = "".join(keep_lines[a1 - 1 : a2])
        old_region = split_lines(old_text)
        new_region = split_lines(old_text.replace(old, new))
        lead = 0
        while lead < len(old_region) and lead < len(new_region) and old_region[lead] == new_region[lead]:
            lead += 1
        trail = 0
        while (
            trail < len(old_region) - lead
            and trail < len(new_region) - lead
            and old_region[-1 - trail] == new_region[-1 - trail]
        ):
            trail += 1
        removed = old_region[lead : len(old_region) - trail]
        added = new_region[lead : len(new_region) - trail]
        change_start = a1 + lead  # first changed old line (1-based)
        change_end = change_start + len(removed) - 1
        before_start = max(1, change_start - CONTEXT)
        after_end = min(len(file_lines), change_end + CONTEXT)
        before = file_lines[before_start - 1 : change_start - 1]
        after = file_lines[change_end:after_end] if change_end >= 0 else []
        old_count = len(before) + len(removed) + len(after)
        new_count = len(before) + len(added) + len(after)
        lines = [hunk_header(before_start, old_count, before_start + shift, new_count)]
        lines += [diff_line(" ", line) for line in before]
        lines += [diff_line("-", line) for line in removed]
        lines += [diff_line("+", line) for line in added]
        lines += [diff_line(" ", line) for line in after]
        hunks.append(("\n".join(lines), count))
        shift += len(added) - len(removed)
    return hunks


def edit_summary(
    file_path: str, content: str, old: str, new: str, positions: list[int], budget_limit: int
) -> str:
    replaced = len(positions)
    summary = f'Replaced {plural(replaced, "occurrence")} in "{file_path}".'
    budget = (budget_limit if budget_limit > 0 else DEFAULT_BUDGET) - BUDGET_RESERVE
    parts = [summary]
    used = len(summary)
    shown = 0
    for index, (hunk, count) in enumerate(_replacement_hunks(content, positions, old, new)):
        if index >= MAX_HUNKS or used + 1 + len(hunk) > budget:
            break
        parts.append(hunk)
        used += 1 + len(hunk)
        shown += count
    more = replaced - shown
    if more > 0:
        parts.append(f"…and {plural(more, 'more replacement')}")
    return "\n".join(parts)


class EditFileTool(ToolBase[EditFileArguments]):
    declaration = EDIT_FILE

    async def run(self, arguments: EditFileArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        abs_path = self.declaration.effect_of(arguments, ctx.workspace_dir).path("file_path").resolved
        yield delta(ctx, self._edit(arguments, abs_path, ctx.workspace_dir))

    def _edit(self, arguments: EditFileArguments, abs_path: str, workspace_dir: str) -> str:
        file_path, old, new = arguments.file_path, arguments.old_string, arguments.new_string
        if old == new:
            raise ToolFailed(
                "old_string and new_string are identical — nothing to change. "
                "Make new_string the desired replacement text."
            )
        if os.path.isdir(abs_path):
            raise ToolFailed(f'Cannot edit "{file_path}": it is a directory.')
        try:
            content = read_regular_bytes(abs_path, MAX_EDITABLE_BYTES).decode("utf-8", "surrogateescape")
        except RefusedFile as exc:
            raise ToolFailed(f'Cannot edit "{file_path}": {exc}.') from None
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                raise ToolFailed(
                    f'File not found: "{file_path}". edit_file only edits existing files — check the path '
                    "(absolute paths are supported), or use write_file to create it."
                    + missing_path_hint(abs_path)
                ) from None
            raise ToolFailed(f'Failed to read "{file_path}": {os_error_text(exc)}') from None
        positions = _occurrences(content, old)
        if not positions:
            message = (
                f'old_string not found in "{file_path}". Make sure it matches the file content exactly, '
                "including whitespace and indentation."
            )
            if "\r\n" in content:
                message += (
                    " Note: the file uses CRLF (\\r\\n) line endings — a multi-line old_string must "
                    "include the \\r characters."
                )
            raise ToolFailed(message)
        replace_all = arguments.replace_all
        if len(positions) > 1 and not replace_all:
            raise ToolFailed(
                f'old_string occurs {len(positions)} times in "{file_path}". Add surrounding context to make it '
                "unique, or set replace_all to true to replace every occurrence."
            )
        updated = content.replace(old, new) if replace_all else content.replace(old, new, 1)
        journal_before_write(self.services, abs_path, workspace_dir)  # undo (docs/undo.md)
        try:
            atomic_write(abs_path, updated.encode("utf-8", "surrogateescape"))
        except OSError as exc:
            raise ToolFailed(f'Failed to write "{file_path}": {os_error_text(exc)}') from None
        return edit_summary(file_path, content, old, new, positions, self.definition.max_output_length)

