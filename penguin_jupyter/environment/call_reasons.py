"""Why a call must be asked about whatever mode or allow rule would let it through (docs/security.md
"Credential files, by identity" and "What a call touches").

Owns `touch_reason`: from a call's effect (`tool_effects.CallEffect`: the paths it reads and
writes as its tool opens them, and the files those reach), the first of "read of a credential
file: ~/.aws/", "write of a credential file: …", "outside the workspace: /etc/passwd", "write
outside the workspace: ~/x (through the symlink notes)" or "fetches a remote URL: https://…";
and `credential_read_reason`, the same for a tool call message (its declaration looked up the one
way, `registry.declaration_of`). The one place under a data root a session may read without
asking is its own scratchpad (a subagent's call: the subagent's). Which files are credentials is
`secret_files.py`'s; what to do with a reason is the approval layer's.
"""

from __future__ import annotations

import os
from typing import Any

from ..omni import OmniMessage, ToolCallPayload, read_call_arguments
from .registry import declaration_of
from .secret_files import CREDENTIAL_READ, secret_file_label, session_scratchpad, temporary_workspace
from .tool_declaration import ToolDeclaration
from .tool_effects import CallEffect, TouchedPath, home_shown, is_within

CREDENTIAL_WRITE = "write of a credential file"


def touch_reason(effect: CallEffect, workspace: str, own: tuple[str, ...] = ()) -> str | None:
    """Why the call that has `effect` must be asked about, or None. `own` are the folders under
    a data root the call may touch (the session's scratchpad, a temporary workspace)."""
    if effect.urls:
        return f"fetches a remote URL: {effect.urls[0][:120]}"
    for verb, paths in (("read", effect.reads), ("write", effect.writes)):
        for touched in paths:
            reason = _path_reason(touched, verb, workspace, own)
            if reason is not None:
                return reason
    return None


def _path_reason(touched: TouchedPath, verb: str, workspace: str, own: tuple[str, ...]) -> str | None:
    label = secret_file_label(touched.resolved, workspace, own)
    if label is not None:
        return f"{CREDENTIAL_READ if verb == 'read' else CREDENTIAL_WRITE}: {label}"
    if touched.inside or any(is_within(touched.real, os.path.realpath(folder)) for folder in own):
        return None
    link = touched.link()
    through = f" (through the symlink {link})" if link else ""
    where = "outside the workspace" if verb == "read" else "write outside the workspace"
    return f"{where}: {home_shown(touched.real)}{through}"


def own_folders(workspace: str, scratchpad_dir: str | os.PathLike[str] | None, origin: list[str] | None = None) -> tuple[str, ...]:
    """The data-root folders a call may touch without asking: the running session's scratchpad
    (a subagent's own, found from the session id its calls carry as their origin) and the
    workspace itself when it is a temporary one the data root holds."""
    if origin:
        scratchpad_dir = session_scratchpad(str(origin[-1]))
    own = [str(scratchpad_dir)] if scratchpad_dir else []
    if temporary_workspace(workspace):
        own.append(workspace)
    return tuple(own)


def credential_read_reason(
    tool_call: Any,
    workspace_dir: str | None,
    scratchpad_dir: str | os.PathLike[str] | None = None,
    *,
    declaration: ToolDeclaration[Any] | None = None,
) -> str | None:
    """Why a tool call must not be approved automatically (`touch_reason` of its effect), or
    None; its declaration is `declaration_of(name)` unless given. Unreadable arguments give None
    here: the tool refuses them before touching anything."""
    payload = tool_call.payload if isinstance(tool_call, OmniMessage) else tool_call
    if not isinstance(payload, ToolCallPayload):
        return None
    arguments = read_call_arguments(payload.arguments)
    if not isinstance(arguments, dict):
        return None
    workspace = workspace_dir or os.getcwd()
    found = declaration if declaration is not None else declaration_of(payload.name)
    origin = tool_call.origin if isinstance(tool_call, OmniMessage) else None
    return touch_reason(found.effect(arguments, workspace), workspace, own_folders(workspace, scratchpad_dir, origin))
