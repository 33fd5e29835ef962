"""read_file (docs/tools.md "read_file"): a `cat -n` window over a text file with a self-budget,
a secret-store guard (penguin's vault and project config, by name or identity, see
`secret_files.py`), an 8 MiB scan cap and missing-path hints."""

from __future__ import annotations

import errno
import math
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from ...omni import OmniMessage
from ..secret_files import penguin_store_label
from ..tool_arguments import Headline, OnBad, ReadsPath, Text, Unusable, finite_number
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..tool_effects import resolve_tool_path
from ..types import ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, delta, plural
from .path_hint import missing_path_hint

SECRET_STORE_NAMES = (".vault.toml", ".project_config.toml")
SCAN_CAP = 8 * 1024 * 1024
CHUNK = 256 * 1024
DEFAULT_LIMIT = 2000
RETAINED_LINE_BYTES = 8000
LINE_DISPLAY_CHARS = 2000
DEFAULT_BUDGET = 64000
BUDGET_RESERVE = 256


class ReadFileError(Exception):
    """A model-facing failure text."""


def _line_number(value: Any) -> int | None:
    number = None if value is None else finite_number(value)
    if value is not None and number is None:
        raise Unusable
    return None if number is None else max(1, math.floor(number))


def _line_count(value: Any) -> int | None:
    number = None if value is None else finite_number(value)
    if value is not None and (number is None or number <= 0):
        raise Unusable
    return None if number is None else max(1, math.floor(number))


class ReadFileArguments(ToolArguments):
    file_path: Annotated[
        Text, Field(description="Path of the file (absolute, or relative to the workspace)."), ReadsPath(), Headline()
    ]
    offset: Annotated[
        int | None,
        Field(description="1-based line number to start from (default 1)."),
        BeforeValidator(_line_number),
        OnBad('Invalid "offset": expected a number (got {got}).'),
    ] = None
    limit: Annotated[
        int | None,
        Field(description="Maximum number of lines to return (default 2000)."),
        BeforeValidator(_line_count),
        OnBad('Invalid "limit": expected a positive number (got {got}).'),
    ] = None


READ_FILE = ToolDeclaration(
    name="read_file",
    description=(
        "Read a text file as numbered lines (cat -n style); the preferred way to look at a file. Reads up "
        "to 2000 lines from `offset`; call again with a later offset to continue. Relative paths resolve "
        "against the workspace. Not for images or binary files: look at images with read_image or "
        "describe_image (whichever you have) and inspect binaries with exec_command."
    ),
    arguments=ReadFileArguments,
    permission="r",
    timeout_ms=30000,
    max_output_length=64000,
)


@dataclass
class _Scan:
    window: list[str] = field(default_factory=list)
    line_overflow: list[bool] = field(default_factory=list)
    crlf: bool = False
    total: int = 0
    total_exact: bool = True


def secret_store_name(path: str) -> str | None:
    """The offending name when `path` is a secret store: its basename (lexically or after symlinks),
    or, for a file that is one by identity (a hard link), "<name> (the penguin vault)"."""
    for candidate in (os.path.basename(path), os.path.basename(os.path.realpath(path))):
        if candidate.lower() in SECRET_STORE_NAMES:
            return candidate
    label = penguin_store_label(path)
    return f"{os.path.basename(path)} ({label})" if label is not None else None


def _scan(abs_path: str, offset: int, limit: int, shown_path: str) -> _Scan:
    last = offset + limit - 1
    scan = _Scan()
    current = 1  # the line being read
    partial = 0  # bytes of the current (unterminated) line
    buf = bytearray()
    overflow = False
    scanned = 0
    at_eof = False
    with open(abs_path, "rb") as handle:
        while scanned < SCAN_CAP:
            chunk = handle.read(min(CHUNK, SCAN_CAP - scanned))
            if not chunk:
                at_eof = True
                break
            scanned += len(chunk)
            if b"\0" in chunk:
                raise ReadFileError(
                    f'"{shown_path}" looks like a binary file (contains NUL bytes). '
                    "Use shell commands to inspect it, or read_image if it is an image."
                )
            newlines = chunk.count(b"\n")
            if current + newlines < offset or current > last:
                current += newlines
                partial = partial + len(chunk) if newlines == 0 else len(chunk) - chunk.rfind(b"\n") - 1
                continue
            parts = chunk.split(b"\n")
            for index, part in enumerate(parts):
                in_window = offset <= current <= last
                if in_window and part:
                    room = RETAINED_LINE_BYTES - len(buf)
                    if len(part) > room:
                        overflow = True
                    buf += part[: max(room, 0)]
                if index < len(parts) - 1:
                    if in_window:
                        _retain(scan, buf, overflow)
                    buf, overflow = bytearray(), False
                    current += 1
                    partial = 0
                else:
                    partial += len(part)
        if not at_eof and handle.read(1) == b"":
            at_eof = True
    if at_eof:
        if partial and offset <= current <= last:
            _retain(scan, buf, overflow)
        scan.total = current - 1 + (1 if partial else 0)
        scan.total_exact = True
    else:
        scan.total = current - 1 + (1 if partial else 0)
        scan.total_exact = False
        if not scan.window:
            raise ReadFileError(
                f'Stopped after scanning 8 MB of "{shown_path}" without reaching the requested window '
                f"(scanned {plural(current - 1, 'line')}). The offset is too deep or the file has extremely "
                f"long lines — use shell commands (e.g. sed -n '{offset},{last}p') for this file."
            )
    return scan


def _retain(scan: _Scan, buf: bytearray, overflow: bool) -> None:
    line = bytes(buf)
    if line.endswith(b"\r"):
        line = line[:-1]
        scan.crlf = True
    scan.window.append(line.decode("utf-8", "replace"))
    scan.line_overflow.append(overflow)


def _render(scan: _Scan, offset: int, budget_limit: int, shown_path: str) -> str:
    budget = budget_limit if budget_limit > 0 else DEFAULT_BUDGET
    content_budget = max(1, budget - BUDGET_RESERVE)
    rows: list[str] = []
    used = 0
    for index, line in enumerate(scan.window):
        if len(line) > LINE_DISPLAY_CHARS or scan.line_overflow[index]:
            line = line[:LINE_DISPLAY_CHARS] + "… [line truncated]"
        row = "%6d\t%s" % (offset + index, line)  # noqa: UP031 - mirrors the spec's format
        extra = len(row) + (1 if rows else 0)
        if used + extra > content_budget:
            if not rows:
                rows.append(row[:content_budget])
                used = content_budget
            break
        rows.append(row)
        used += extra
    trimmed = len(rows) < len(scan.window)
    first, shown_last = offset, offset + len(rows) - 1
    out = list(rows)
    if scan.crlf:
        out.append("(file uses CRLF line endings)")
    if trimmed or not scan.total_exact or shown_last < scan.total:
        if scan.total_exact:
            note = f"[file has {scan.total} lines total; showing {first}-{shown_last}"
        else:
            note = f"[file has more than {scan.total} lines; showing {first}-{shown_last}"
        if trimmed:
            note += " (output limit reached)"
        out.append(note + " — call again with offset to continue]")
    return "\n".join(out)


def read_text_window(
    file_path: str, workspace_dir: str, offset: int, limit: int, budget_limit: int, abs_path: str | None = None
) -> str:
    """The text of one read of `abs_path` (default: `file_path` resolved in the workspace);
    `ToolFailed` when it cannot be read. Shared by read_file and anyone reading a scratchpad
    archive."""
    abs_path = abs_path or resolve_tool_path(workspace_dir, file_path)
    secret = secret_store_name(abs_path)
    if secret is not None:
        raise ToolFailed(
            f'Refusing to read "{file_path}": {secret} holds the user\'s secrets and must never enter the conversation.'
        )
    try:
        info = os.stat(abs_path)
        if os.path.isdir(abs_path):
            raise ToolFailed(f'Cannot read "{file_path}": it is a directory. Pass the path of a file inside it.')
        if info.st_size == 0:
            return f'"{file_path}" is an empty file (0 lines).'
        scan = _scan(abs_path, offset, limit, file_path)
    except ReadFileError as exc:
        raise ToolFailed(str(exc)) from None
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise ToolFailed(
                f'File not found: "{file_path}". Absolute paths are supported; relative paths resolve '
                f"against the workspace ({workspace_dir}).{missing_path_hint(abs_path)}"
            ) from None
        raise ToolFailed(f'Failed to read "{file_path}": {exc.strerror or exc}') from None
    if not scan.window:
        raise ToolFailed(f'Offset {offset} is past the end of "{file_path}" ({plural(scan.total, "line")} total).')
    return _render(scan, offset, budget_limit, file_path)


class ReadFileTool(ToolBase[ReadFileArguments]):
    declaration = READ_FILE

    async def run(self, arguments: ReadFileArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        text = read_text_window(
            arguments.file_path,
            ctx.workspace_dir,
            arguments.offset or 1,
            arguments.limit or DEFAULT_LIMIT,
            self.definition.max_output_length,
            self.declaration.effect_of(arguments, ctx.workspace_dir).path("file_path").resolved,
        )
        yield delta(ctx, text)
