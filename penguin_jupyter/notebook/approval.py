"""Approval in a notebook: the `ApproveFn` behind the Approve / Deny / Always-allow buttons.

Owns the approval modes (ask, read-only, allow-all, deny-all), the per-session "always allow
this tool" set, the button row (naming why a file read is asked about, from
`environment/secret_files.py`) and how a decision travels from a click to the engine: the click
handler resolves an asyncio Future only via `loop.call_soon_threadsafe` (comm messages may
arrive on a kernel subshell thread), and the wait is sliced (≤0.25 s) so interrupts land.
Kernels older than 7.4 ask on stdin with `input()`; without stdin (nbconvert, papermill) `ask`
denies and says so. Where the buttons are placed is the live view's business.
"""

from __future__ import annotations

import asyncio
import contextvars
import html
import json
from collections.abc import Callable
from typing import Any, Protocol

import ipywidgets as widgets

from ..environment.secret_files import credential_read_reason
from ..interfaces import AbortSignal, ApprovalDecision
from ..omni import OmniMessage
from .options import APPROVAL_MODES
from .waits import wait_sliced

NO_STDIN_NOTE = "penguin: approval needed but this kernel has no way to ask (no stdin, e.g. nbconvert/papermill): denied. Use --approve allow-all or read-only to run headless."
STDIN_NOTE = "penguin: this kernel is older than ipykernel 7.4, so buttons cannot answer while the cell runs; answering on stdin."
DECISION_LABELS = {"allow": "approved", "deny": "denied", "always": "approved (always for this tool)"}


def auto_decision(
    mode: str, tool_name: str, permission: str | None, always_allowed: set[str]
) -> ApprovalDecision | None:
    """The decision a mode makes without asking; None when the human must be asked."""
    if mode not in APPROVAL_MODES:
        raise ValueError(f"unknown approval mode {mode!r}")
    if mode == "deny-all":
        return "deny"
    if mode == "allow-all" or tool_name in always_allowed:
        return "allow"
    if mode == "read-only" and permission == "r":
        return "allow"
    return None


class ApprovalRow:
    """Approve / Deny / Always-allow buttons whose click resolves `future` on `loop`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, tool_name: str, reason: str | None = None) -> None:
        self.loop = loop
        self.future: asyncio.Future[str] = loop.create_future()
        self.approve_button = widgets.Button(description="Approve", button_style="success", icon="check")
        self.deny_button = widgets.Button(description="Deny", button_style="danger", icon="times")
        self.always_button = widgets.Button(
            description=f"Always allow {tool_name}", tooltip="Always allow this tool for this session"
        )
        self.always_button.layout.width = "auto"
        self.status = widgets.HTML(f"<b>{html.escape(reason)}</b>" if reason else "")
        self.widget = widgets.HBox([self.approve_button, self.deny_button, self.always_button, self.status])
        self.approve_button.on_click(lambda _b: self._clicked("allow"))
        self.deny_button.on_click(lambda _b: self._clicked("deny"))
        self.always_button.on_click(lambda _b: self._clicked("always"))

    def _clicked(self, choice: str) -> None:
        self.loop.call_soon_threadsafe(self._resolve, choice)

    def _resolve(self, choice: str) -> None:
        if self.future.done():
            return
        self.future.set_result(choice)
        self.close(DECISION_LABELS[choice])

    def close(self, note: str) -> None:
        for button in (self.approve_button, self.deny_button, self.always_button):
            button.disabled = True
        self.status.value = f"<i>{note}</i>"


class ApprovalSurface(Protocol):
    """What the approval controller needs from a view."""

    def show_approval(self, tool_call: OmniMessage, row: ApprovalRow | None) -> None: ...

    def show_note(self, text: str) -> None: ...


def approval_channel(shell: Any) -> str:
    """ "buttons" (ipykernel ≥ 7.4 with a frontend), "stdin" (older kernels) or "none"."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        import sys

        return "stdin" if sys.stdin is not None and sys.stdin.isatty() else "none"
    if not getattr(kernel, "_allow_stdin", False):
        return "none"
    try:
        import ipykernel

        version = tuple(int(part) for part in ipykernel.__version__.split(".")[:2])
    except (ImportError, ValueError):
        version = (0, 0)
    return "buttons" if version >= (7, 4) else "stdin"


def _tool_name(tool_call: OmniMessage) -> str:
    return getattr(tool_call.payload, "name", "")


class NotebookApprover:
    """Callable `ApproveFn` for one Task; the mode and the always-allowed set are shared state."""

    def __init__(
        self,
        *,
        mode: str,
        permission_of: Callable[[str], str | None],
        always_allowed: set[str],
        surface: ApprovalSurface,
        channel: str,
        signal: AbortSignal | None = None,
        input_fn: Callable[[str], str] = input,
        context: contextvars.Context | None = None,
        workspace_dir: str | None = None,
    ) -> None:
        self.mode = mode
        self.workspace_dir = workspace_dir
        self.permission_of = permission_of
        self.always_allowed = always_allowed
        self.surface = surface
        self.channel = channel
        self.signal = signal
        self.input_fn = input_fn
        self.open_rows: list[ApprovalRow] = []
        self._stdin_noted = False
        self._successor: Callable[[], NotebookApprover | None] | None = None
        # ipykernel takes an output's parent (which cell it belongs to) from a ContextVar: the
        # cell's context (the caller's by default) is where handed-over questions are asked.
        self._context = context if context is not None else contextvars.copy_context()

    def retire(self, successor: Callable[[], NotebookApprover | None]) -> None:
        """The cell ended. Background subagents it launched keep this approver, so from now on a
        question goes to the running cell's approver (`successor()`), and with no cell running
        only this mode's automatic decisions hold: anything that needs a human is denied."""
        self._successor = successor

    async def __call__(self, tool_call: OmniMessage) -> ApprovalDecision:
        if self._successor is not None:
            current = self._successor()
            if current is not None and current is not self:
                return await current.ask_in_its_cell(tool_call)
        name = _tool_name(tool_call)
        try:
            permission = self.permission_of(name)
        except Exception:
            permission = None
        decided = auto_decision(self.mode, name, permission, self.always_allowed)
        # A read of a credential file, of a file outside the workspace or of a URL is never
        # approved by read-only or "always allow" alone (allow-all still allows it).
        reason = None if decided == "deny" or self.mode == "allow-all" else self._read_reason(tool_call)
        if decided is not None and reason is None:
            return decided
        if self._successor is not None:
            return "deny"  # retired and no cell is running: nobody can answer
        if self.channel == "buttons":
            return await self._ask_buttons(tool_call, name, reason)
        if self.channel == "stdin":
            return self._ask_stdin(tool_call, name, reason)
        self.surface.show_approval(tool_call, None)
        self.surface.show_note(NO_STDIN_NOTE)
        return "deny"

    def _read_reason(self, tool_call: OmniMessage) -> str | None:
        try:
            return credential_read_reason(tool_call, self.workspace_dir)
        except Exception:
            return None

    async def ask_in_its_cell(self, tool_call: OmniMessage) -> ApprovalDecision:
        """Answer a question handed over by a retired approver in this cell's context, so its
        widgets go out as this cell's traffic, not that of the cell that launched the asker."""
        return await asyncio.get_running_loop().create_task(self(tool_call), context=self._context.copy())

    async def _ask_buttons(
        self, tool_call: OmniMessage, name: str, reason: str | None = None
    ) -> ApprovalDecision:
        row = ApprovalRow(asyncio.get_running_loop(), name, reason)
        self.open_rows.append(row)
        self.surface.show_approval(tool_call, row)
        try:
            answered = await wait_sliced(row.future, self.signal)
        finally:
            self.open_rows.remove(row)
        if not answered:
            row.close("interrupted")
            return "deny"
        return self._apply(row.future.result(), name)

    def _ask_stdin(self, tool_call: OmniMessage, name: str, reason: str | None = None) -> ApprovalDecision:
        if not self._stdin_noted:
            self.surface.show_note(STDIN_NOTE)
            self._stdin_noted = True
        self.surface.show_approval(tool_call, None)
        args = getattr(tool_call.payload, "arguments", "")
        try:
            args = json.dumps(json.loads(args), ensure_ascii=False)
        except (TypeError, ValueError):
            pass
        try:
            note = f" ({reason})" if reason else ""
            answer = self.input_fn(f"Approve {name} {args[:200]}{note}? [y]es / [n]o / [a]lways: ")
        except (EOFError, RuntimeError, OSError):
            self.surface.show_note(NO_STDIN_NOTE)
            return "deny"
        choice = {"y": "allow", "yes": "allow", "a": "always", "always": "always"}.get(
            answer.strip().lower(), "deny"
        )
        return self._apply(choice, name)

    def _apply(self, choice: str, name: str) -> ApprovalDecision:
        if choice == "always":
            self.always_allowed.add(name)
            return "allow"
        return "allow" if choice == "allow" else "deny"

    def close_pending(self, note: str = "interrupted") -> None:
        """Disable every button row still waiting (interrupt / Stop)."""
        for row in list(self.open_rows):
            row.close(note)
