"""What a tool call touches (docs/security.md "What a call touches"): the one answer the tools,
the approval rules, the credential check, the card and undo's journal all use.

Owns `resolve_tool_path` (the one resolution of a path argument: joined to the workspace, `..`
collapsed, `~` left as a name — exactly what the tool then opens), `TouchedPath` (one path as
written, as opened, and the file reached through symlinks; its spellings for rules; whether it
leaves the workspace and through which link), `CallEffect` (the paths a call reads and writes,
the URLs it fetches, the command it runs and where) and the typed hook the command analysis plugs
into (`CommandAnalyser`: a command's own reads and writes join the call's). Which arguments are
paths is the declaration's (`tool_declaration.ToolDeclaration.effect`); deciding what to do about
a path is the approval layer's.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol


def resolve_tool_path(workspace: str, value: str) -> str:
    """The path a tool opens for the path argument `value`: relative to the workspace (an absolute
    value stays absolute), `..` and `.` collapsed. `~` is a file name like any other (the tools
    never expanded it), so `~/../x` is the workspace's `x`."""
    return os.path.normpath(os.path.join(workspace, value))


def is_within(path: str, folder: str) -> bool:
    """`path` is `folder` or lies under it (both already normalised)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def home_shown(path: str) -> str:
    """`path` with the home folder written `~`."""
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path == home or path.startswith(home + os.sep) else path


@dataclass(frozen=True)
class TouchedPath:
    """One path a call reads or writes. `resolved` is what the tool opens; `real` the file that
    reaches (symlinks and `..` followed; a hard link is the same file by identity, which the
    credential check compares)."""

    argument: str  # the argument it came from ("" for a path a command names)
    written: str  # as the call spells it
    resolved: str
    workspace: str

    @functools.cached_property
    def real(self) -> str:
        return os.path.realpath(self.resolved)

    @functools.cached_property
    def real_workspace(self) -> str:
        return os.path.realpath(self.workspace)

    @functools.cached_property
    def relative(self) -> str | None:
        """`resolved` relative to the workspace; None when it lies outside."""
        base = os.path.normpath(self.workspace)
        return os.path.relpath(self.resolved, base) if is_within(self.resolved, base) else None

    @functools.cached_property
    def real_relative(self) -> str | None:
        """The file reached, relative to the workspace's real location; None when outside."""
        return os.path.relpath(self.real, self.real_workspace) if is_within(self.real, self.real_workspace) else None

    @property
    def inside(self) -> bool:
        """The file reached lies in the workspace (not merely its spelling)."""
        return self.real_relative is not None

    @functools.cached_property
    def spellings(self) -> tuple[str, ...]:
        """Every way a rule pattern may name this path: as written, as opened (relative to the
        workspace, else absolute) and as reached (likewise). A deny rule matching any of them
        applies."""
        found = [
            self.written,
            os.path.normpath(self.written),
            self.relative if self.relative is not None else self.resolved,
            self.real_relative if self.real_relative is not None else self.real,
            self.resolved,
            self.real,
        ]
        return tuple(dict.fromkeys(found))

    def link(self) -> str | None:
        """The first symlink on the way from the workspace to `resolved` (relative to the
        workspace), or None: what the card names when the file reached differs from the one
        written."""
        relative = self.relative
        if relative is None or relative == ".":
            return None
        current = os.path.normpath(self.workspace)
        for part in relative.split(os.sep):
            current = os.path.join(current, part)
            if os.path.islink(current):
                return os.path.relpath(current, os.path.normpath(self.workspace))
        return None

    def where(self) -> str:
        """How a card says where the call lands when it is not what was written:
        `~/x/y (outside the workspace, through the symlink notes)`; "" when it is."""
        link = self.link()
        outside = not self.inside
        if not outside and link is None:
            return ""
        notes = [text for text in ("outside the workspace" if outside else "", f"through the symlink {link}" if link else "") if text]
        return f"{home_shown(self.real)} ({', '.join(notes)})"


class CommandFacts(Protocol):
    """What the command analysis (`analyse_command(cmd, cwd, workspace)`, issue 36) says a shell
    command touches: the paths it reads and writes (as the command names them). Its other
    findings (options, network, code it runs) are the command rules' business."""

    @property
    def reads(self) -> Sequence[str]: ...

    @property
    def writes(self) -> Sequence[str]: ...


# The hook's type: (command text, the directory it runs in, the workspace) -> what it touches.
CommandAnalyser = Callable[[str, str, str], "CommandFacts | None"]


@dataclass(frozen=True)
class CommandPaths:
    """The paths a command reads (a config or plugin it loads counts as read) and writes."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


def analysed_command(cmd: str, cwd: str, workspace: str) -> CommandFacts | None:
    """The hook where the command analysis plugs in: what a shell command reads and writes, from
    `command_effects.analyse_command` (the per-program option tables, docs/security.md "What a
    rule covers"): every consumer of `ToolDeclaration.effect` — the credential and
    outside-workspace check, the card — sees the command's paths as the call's reads and writes.
    None when the shell would do more than run the words (the command rules judge that); a call
    may pass its own analyser to `effect`."""
    from .command_effects import analyse_command  # (the tables load on the first command judged)

    analysed = analyse_command(cmd, cwd)
    if analysed is None:
        return None
    effects = [effect for command in analysed for effect in command.effects]
    return CommandPaths(
        reads=tuple(e.what for e in effects if e.kind in ("reads", "loads")),
        writes=tuple(e.what for e in effects if e.kind == "writes"),
    )


@dataclass(frozen=True)
class CommandCall:
    """The shell command a call runs (`text`) and the directory it runs in (`cwd`, resolved)."""

    argument: str
    text: str
    cwd: str


@dataclass(frozen=True)
class CallEffect:
    """What one call touches, from its declaration and its arguments (an invalid call, which its
    tool refuses before doing anything, touches nothing)."""

    reads: tuple[TouchedPath, ...] = ()
    writes: tuple[TouchedPath, ...] = ()
    urls: tuple[str, ...] = ()  # remote URLs it fetches
    command: CommandCall | None = None
    shell_input: str | None = None  # text typed into a running command
    facts: CommandFacts | None = field(default=None, compare=False)  # the command analysis, when run

    def paths(self) -> tuple[TouchedPath, ...]:
        return (*self.reads, *self.writes)

    def where_lines(self) -> list[str]:
        """What a card says of the paths that land somewhere other than where they read as:
        `writes ~/.ipython/…/00-setup.py (outside the workspace, through the symlink notes)`."""
        lines = []
        for verb, paths in (("reads", self.reads), ("writes", self.writes)):
            lines += [f"{verb} {where}" for touched in paths if (where := touched.where())]
        return lines

    def path(self, argument: str) -> TouchedPath:
        """The path of `argument` (what the tool opens for it)."""
        for touched in self.paths():
            if touched.argument == argument:
                return touched
        raise KeyError(argument)
