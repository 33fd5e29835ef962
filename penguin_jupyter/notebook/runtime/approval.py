"""Asking a human in a notebook cell: the Approve / Deny / Always-allow buttons, or stdin.

Owns `approval_channel` (buttons, stdin or none) and `CellAsker` (how one cell asks: its channel,
its view, its interrupt signal, its ContextVar context, and the `preview` step that reads the
cell a notebook tool names — its current source — before the card is shown). The row of buttons
is the live view's (`live/approval_row.py`); which cell asks, and whether anybody is asked at
all, is the router's decision (`approval_router.py`); where the row sits is the view's.

Threading: a click may arrive on a kernel subshell thread, so it only schedules the decision
on the loop (`call_soon_threadsafe`); the wait is sliced (≤0.25 s) so interrupts land. Kernels
older than ipykernel 7.4 ask on stdin with `input()`; without stdin (nbconvert, papermill) a
question is denied and the cell says so. See docs/notebook-runtime.md.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal, Protocol

from ...interfaces import AbortSignal, ApprovalDecision
from ...omni import OmniMessage, ToolCallPayload, read_call_arguments
from ..link.waits import wait_sliced
from ..live.approval_row import ApprovalRow, Choice, RuleOffer
from ..transcript.cell_sources import CellPreview
from ..transcript.visible_text import visible_controls

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)

Channel = Literal["buttons", "stdin", "none"]

NO_STDIN_NOTE = "penguin: approval needed but this kernel has no way to ask (no stdin, e.g. nbconvert/papermill): denied. Use --approve allow-all or read-only to run headless."
STDIN_NOTE = "penguin: this kernel is older than ipykernel 7.4, so buttons cannot answer while the cell runs; answering on stdin."
CELL_ENDED_NOTE = "the cell ended before an answer: denied"
STDIN_CHOICES: dict[str, Choice] = {"y": "allow", "yes": "allow", "a": "always", "always": "always"}


class ApprovalSurface(Protocol):
    """What asking needs from a cell: show the call (and its row), show a note."""

    def show_approval(
        self,
        tool_call: OmniMessage,
        row: ApprovalRow | None,
        *,
        background: bool = False,
        preview: CellPreview | None = None,
    ) -> None: ...

    def show_note(self, text: str) -> None: ...


def approval_channel(kernel: object | None, *, stdin_is_tty: bool | None = None) -> Channel:
    """ "buttons" (ipykernel ≥ 7.4 with a frontend), "stdin" (older kernels, or a terminal) or "none"."""
    if kernel is None:
        tty = sys.stdin is not None and sys.stdin.isatty() if stdin_is_tty is None else stdin_is_tty
        return "stdin" if tty else "none"
    if not _request_allows_stdin(kernel):
        return "none"
    try:
        import ipykernel

        version = tuple(int(part) for part in ipykernel.__version__.split(".")[:2])
    except (ImportError, ValueError):
        version = (0, 0)
    return "buttons" if version >= (7, 4) else "stdin"


def _request_allows_stdin(kernel: object) -> bool:
    """Whether the request the kernel is handling lets it ask (the execute_request's public
    `allow_stdin` field; a frontend that cannot answer sends False)."""
    get_parent = getattr(kernel, "get_parent", None)
    parent = get_parent() if callable(get_parent) else None
    content = parent.get("content") if isinstance(parent, dict) else None
    return isinstance(content, dict) and content.get("allow_stdin") is True


def tool_name_of(tool_call: OmniMessage) -> str:
    payload = tool_call.payload
    return payload.name if isinstance(payload, ToolCallPayload) else ""


def _arguments_preview(tool_call: OmniMessage) -> str:
    """The stdin question's one-line reminder of the call (the card above it shows it in full)."""
    payload = tool_call.payload
    args = payload.arguments if isinstance(payload, ToolCallPayload) else ""
    parsed = read_call_arguments(args)
    text = json.dumps(parsed, ensure_ascii=False) if isinstance(parsed, dict) else args
    return visible_controls(text[:200])


class CellAsker:
    """How one cell asks a human about a tool call; `ask` answers allow / deny and records an
    "always" answer in the `always_allowed` set it is given (the launching session's)."""

    def __init__(
        self,
        *,
        channel: Channel,
        surface: ApprovalSurface,
        signal: AbortSignal | None = None,
        context: contextvars.Context | None = None,
        input_fn: Callable[[str], str] = input,
        preview: Callable[[OmniMessage], Awaitable[CellPreview | None]] | None = None,
    ) -> None:
        self.channel = channel
        self.preview = preview
        self.surface = surface
        self.signal = signal
        self.input_fn = input_fn
        self.open_rows: list[ApprovalRow] = []
        self._stdin_noted = False
        # ipykernel takes an output's parent (the cell it belongs to) from a ContextVar: questions
        # from another cell's agents are asked inside this context, so they render here.
        self.context = context if context is not None else contextvars.copy_context()

    async def ask(
        self,
        tool_call: OmniMessage,
        always_allowed: set[str],
        *,
        background: bool = False,
        reason: str | None = None,
        offer: RuleOffer | None = None,
    ) -> ApprovalDecision:
        """Ask a human; `reason` (a credential file, a path outside the workspace, the rule that
        asks…) is shown; `offer` is the rule "Save to project" would write."""
        name = tool_name_of(tool_call)
        preview = await self.preview(tool_call) if self.preview is not None else None
        if self.channel == "buttons":
            choice = await self._ask_buttons(tool_call, name, background, reason, preview, offer)
        elif self.channel == "stdin":
            choice = self._ask_stdin(tool_call, name, background, reason, preview, offer)
        else:
            self.surface.show_approval(tool_call, None, background=background, preview=preview)
            self.surface.show_note(NO_STDIN_NOTE)
            choice = "deny"
        if choice == "always":
            always_allowed.add(name)
            return "allow"
        if choice == "save" and offer is not None:
            try:
                offer.save()
            except Exception as exc:  # the approval stands; the rule was not kept
                logger.warning("could not save an approval rule: %s", exc)
                self.surface.show_note(f"penguin: the rule was not saved ({exc}); approved this once")
            return "allow"
        return "allow" if choice == "save" else choice

    async def ask_here(
        self,
        tool_call: OmniMessage,
        always_allowed: set[str],
        reason: str | None = None,
        offer: RuleOffer | None = None,
    ) -> ApprovalDecision:
        """Ask on behalf of an earlier cell's agent: inside this cell's context, so the row goes
        out as this cell's traffic, and inside the asker's background card."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(
            self.ask(tool_call, always_allowed, background=True, reason=reason, offer=offer),
            context=self.context.copy(),
        )
        return await task

    async def _ask_buttons(
        self,
        tool_call: OmniMessage,
        name: str,
        background: bool,
        reason: str | None = None,
        preview: CellPreview | None = None,
        offer: RuleOffer | None = None,
    ) -> Choice:
        row = ApprovalRow(asyncio.get_running_loop(), name, reason, offer)
        self.open_rows.append(row)
        self.surface.show_approval(tool_call, row, background=background, preview=preview)
        try:
            answered = await wait_sliced(row.future, self.signal)
        finally:
            self.open_rows.remove(row)
        if not answered:
            row.withdraw("interrupted")
            return "deny"
        return row.future.result()

    def _ask_stdin(
        self,
        tool_call: OmniMessage,
        name: str,
        background: bool,
        reason: str | None = None,
        preview: CellPreview | None = None,
        offer: RuleOffer | None = None,
    ) -> Choice:
        if not self._stdin_noted:
            self.surface.show_note(STDIN_NOTE)
            self._stdin_noted = True
        self.surface.show_approval(tool_call, None, background=background, preview=preview)
        try:
            answer = self.input_fn(
                f"Approve {name} {_arguments_preview(tool_call)}{f' ({reason})' if reason else ''}? "
                "[y]es / [n]o / [a]lways"
                + (f" / [s]ave rule ({offer.rule.text()})" if offer is not None else "")
                + ": "
            )
        except (EOFError, RuntimeError, OSError):
            self.surface.show_note(NO_STDIN_NOTE)
            return "deny"
        answer = answer.strip().lower()
        if offer is not None and answer in ("s", "save"):
            return "save"
        return STDIN_CHOICES.get(answer, "deny")

    def close_pending(self, note: str) -> None:
        """Deny every row still waiting and disable its buttons (interrupt, Stop, cell end)."""
        for row in list(self.open_rows):
            row.withdraw(note)
