"""The uniform close-out every tool call goes through (docs/environment.md "Close-out").

Owns framing (start → delta* → stop → complete), argument parsing, the merged user/timer
cancellation token, front-keep truncation with the optional archive (docs/environment.md "The truncated-output archive"), the note order and
the stop_reason priority, and redaction of configured secrets in the complete output (what the
model sees) and the archive. Tools only yield content deltas and an optional ToolResult; resolving a
name to a tool is the Environment's job (it hands in a resolver).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..interfaces import AbortSignal, ApproveFn, EnvironmentServices, SignalWatch, unless_aborted
from ..omni import (
    EMPTY_ARGUMENTS,
    OmniMessage,
    StopReason,
    UnreadableArguments,
    partial_tool_call_output,
    read_call_arguments,
    repair_surrogates,
    tool_call_output,
)
from ..omni.models import PartialToolCallOutputPayload, ToolCallOutputPayload
from ..redaction import EMPTY, Redactor
from .archive import (
    ArchiveCapture,
    ArchiveFailed,
    ArchiveSaved,
    archive_budget_mib,
    archive_directory,
)
from .types import BuiltinTool, ToolExecutionContext, ToolFailed, ToolResult

log = logging.getLogger(__name__)

# How long a tool may keep running after its token fired before it is cancelled outright, so
# a tool that ignores cancellation cannot hang the run.
CANCEL_GRACE_S = 5.0

ToolResolver = Callable[[], Awaitable[BuiltinTool | None]]


@dataclass
class CallSetting:
    """What the close-out needs to know about the call besides the tool itself."""

    name: str
    arguments: str
    tool_call_id: str
    signal: AbortSignal | None = None
    approve: ApproveFn | None = None
    workspace_dir: str = "."
    services: EnvironmentServices | None = None
    vault: dict[str, str] | None = None
    scratchpad_dir: str | None = None
    # Replaces configured secrets in the complete output and the archive (partials stay raw:
    # a front end redacts what it shows).
    redactor: Redactor = EMPTY


@dataclass
class _RunState:
    streamed: list[str] = field(default_factory=list)
    streamed_len: int = 0
    content_len: int = 0
    complete_output: str | None = None
    complete_status: StopReason | None = None
    result: ToolResult | None = None
    thrown: BaseException | None = None
    capture: ArchiveCapture | None = None

    @property
    def streamed_text(self) -> str:
        return "".join(self.streamed)


def upfront_failure_message(name: str, arguments: str) -> tuple[dict[str, Any] | None, str | None]:
    """The call's arguments (`omni.read_call_arguments`, the one parser): (args, None)
    or (None, the model-facing failure text)."""
    parsed = read_call_arguments(arguments)
    if not isinstance(parsed, UnreadableArguments):
        return parsed, None
    if parsed.reason == EMPTY_ARGUMENTS:
        return None, (
            f'Tool call "{name}" failed: the arguments field is empty. '
            "Re-issue the call with a complete JSON object."
        )
    return None, (
        f'Tool call "{name}" failed: the arguments {parsed.reason}. '
        "Re-issue the call with one complete, valid JSON object."
    )


def _is_cancellation(exc: BaseException | None) -> bool:
    return isinstance(exc, asyncio.CancelledError)


async def run_with_close_out(setting: CallSetting, resolve: ToolResolver) -> AsyncIterator[OmniMessage]:
    """Execute one tool call end to end; yields partials then exactly one complete output.

    Never raises (apart from the consumer cancelling the stream)."""
    call_id = setting.tool_call_id
    yield partial_tool_call_output("start", "", call_id)
    try:
        tool = await resolve()
    except Exception as exc:  # a resolver failure (e.g. MCP connect) reads like an unknown tool
        log.warning("[penguin] resolving tool %r failed: %s", setting.name, exc)
        tool = None
    if tool is None:
        for msg in _upfront_failure(f"Unknown tool: {setting.name}", call_id):
            yield msg
        return
    args, failure = upfront_failure_message(setting.name, setting.arguments)
    if failure is not None or args is None:
        for msg in _upfront_failure(failure or "", call_id):
            yield msg
        return
    async for msg in _execute(tool, args, setting):
        yield msg


def _upfront_failure(message: str, call_id: str) -> list[OmniMessage]:
    return [
        partial_tool_call_output("delta", message, call_id),
        partial_tool_call_output("stop", "", call_id, stop_reason="failed"),
        tool_call_output(message, call_id, stop_reason="failed"),
    ]


class _Token:
    """The internal cancellation token: fires on the user's signal or on the timer."""

    def __init__(self, user_signal: AbortSignal | None, timeout_ms: int):
        self.signal = AbortSignal()
        self.timed_out = False
        self._watch: SignalWatch | None = None
        self._timer: asyncio.TimerHandle | None = None
        loop = asyncio.get_running_loop()
        if user_signal is not None:
            if user_signal.aborted:
                self.signal.abort("user")
            else:
                self._watch = SignalWatch(user_signal, lambda: self.signal.abort("user"))
        if timeout_ms > 0 and not self.signal.aborted:
            self._timer = loop.call_later(timeout_ms / 1000, self._fire_timer)

    def _fire_timer(self) -> None:
        if not self.signal.aborted:
            self.timed_out = True
            self.signal.abort("timeout")

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._watch is not None:
            self._watch.cancel()


async def _execute(
    tool: BuiltinTool, args: dict[str, Any], setting: CallSetting
) -> AsyncIterator[OmniMessage]:
    definition = tool.definition
    limit = definition.max_output_length
    call_id = setting.tool_call_id
    token = _Token(setting.signal, definition.timeout_ms)
    state = _RunState()
    ctx = ToolExecutionContext(
        workspace_dir=setting.workspace_dir,
        tool_call_id=call_id,
        signal=token.signal,
        approve=setting.approve,
        services=setting.services,
        vault=setting.vault,
        tool_name=definition.name,
        redactor=setting.redactor,
    )
    queue: asyncio.Queue[OmniMessage | None] = asyncio.Queue()
    pump = asyncio.create_task(_pump(tool, args, ctx, setting, state, limit, queue))
    watchdog = asyncio.create_task(_watchdog(token.signal, pump))
    try:
        while True:
            item = await queue.get()
            if item is None:
                break
            yield item
    finally:
        watchdog.cancel()
        token.stop()
        if not pump.done():
            pump.cancel()
    for msg in _close_out(setting, limit, definition.timeout_ms, token, state):
        yield msg


async def _watchdog(signal: AbortSignal, pump: asyncio.Task[Any]) -> None:
    """Once the token fires, give the tool CANCEL_GRACE_S to finish, then cancel it."""
    await unless_aborted(asyncio.shield(pump), signal, grace_s=CANCEL_GRACE_S)
    if not pump.done():
        log.warning("[penguin] a tool ignored cancellation; cancelling it")
        pump.cancel()


async def _pump(
    tool: BuiltinTool,
    args: dict[str, Any],
    ctx: ToolExecutionContext,
    setting: CallSetting,
    state: _RunState,
    limit: int,
    queue: asyncio.Queue[OmniMessage | None],
) -> None:
    generator = tool.execute(args, ctx)
    try:
        async for item in generator:
            if isinstance(item, ToolResult):
                state.result = item
                continue
            for forwarded in _absorb(item, setting, state, limit, tool.definition.name):
                queue.put_nowait(forwarded)
    except ToolFailed as failure:  # the one way a tool reports failure (docs/tools.md "Failure")
        if failure.text:
            for forwarded in _absorb(
                partial_tool_call_output("delta", failure.text, setting.tool_call_id), setting, state, limit, tool.definition.name
            ):
                queue.put_nowait(forwarded)
        state.result = ToolResult(stop_reason="failed", note=failure.note)
    except asyncio.CancelledError as exc:
        state.thrown = exc
    except Exception as exc:  # a tool's own failure is kept and closed out as its result
        state.thrown = exc
    finally:
        with contextlib.suppress(BaseException):
            await generator.aclose()  # type: ignore[attr-defined]
        queue.put_nowait(None)


def _absorb(
    item: Any, setting: CallSetting, state: _RunState, limit: int, tool_name: str
) -> list[OmniMessage]:
    """Apply one yielded message to the run state; returns what to forward to the consumer."""
    if not isinstance(item, OmniMessage):
        log.warning("[penguin] tool %r yielded a non-message item; ignored", tool_name)
        return []
    if item.origin:
        return [item]
    payload = item.payload
    if isinstance(payload, PartialToolCallOutputPayload):
        if payload.event_type != "delta" or not payload.output:
            return []
        text = payload.output
        before = state.content_len
        state.content_len += len(text)
        if state.capture is not None:
            state.capture.append(text)
        elif limit > 0 and state.content_len > limit and setting.scratchpad_dir:
            state.capture = ArchiveCapture(
                archive_directory(setting.scratchpad_dir),
                tool_name,
                setting.tool_call_id,
                redactor=setting.redactor,
            )
            state.capture.append(state.streamed_text)
            state.capture.append(text)
        room = len(text) if limit <= 0 else max(0, limit - before)
        visible = text[:room]
        if not visible:
            return []
        state.streamed.append(visible)
        state.streamed_len += len(visible)
        return [partial_tool_call_output("delta", visible, setting.tool_call_id)]
    if isinstance(payload, ToolCallOutputPayload):
        state.complete_output = payload.output
        state.complete_status = payload.stop_reason
        if state.capture is not None:
            state.capture.replace(payload.output)
        elif limit > 0 and len(payload.output) > limit and setting.scratchpad_dir:
            state.capture = ArchiveCapture(
                archive_directory(setting.scratchpad_dir),
                tool_name,
                setting.tool_call_id,
                redactor=setting.redactor,
            )
            state.capture.append(payload.output)
        return []
    log.warning("[penguin] tool %r yielded an unexpected %r message; ignored", tool_name, item.kind)
    return []


@dataclass(frozen=True)
class _Content:
    """The output the call ends with: what was streamed, the (capped) content and whether it
    was truncated."""

    streamed: str
    used_complete: bool
    capped: str
    truncated: bool


def _close_out(
    setting: CallSetting, limit: int, timeout_ms: int, token: _Token, state: _RunState
) -> list[OmniMessage]:
    """The call's last frames: content, stop reason, notes (in that order of decision)."""
    content = _final_content(state, limit)
    # Freeze the terminal facts before any archive I/O.
    result = state.result or ToolResult()
    status_marker, stop_reason = _stop_reason(setting, token, state, result, timeout_ms)
    notes = _notes(content, state, result, limit, status_marker)
    return _frames(setting.tool_call_id, content, notes, stop_reason, result, setting.redactor)


def _final_content(state: _RunState, limit: int) -> _Content:
    # A tool may hand over text decoded with surrogateescape (a file's stray non-UTF-8 byte): the
    # model's output must be valid UTF-8, so a lone surrogate becomes U+FFFD here, once for all tools.
    streamed = repair_surrogates(state.streamed_text)
    used_complete = state.complete_output is not None
    content = repair_surrogates(state.complete_output) if state.complete_output is not None else streamed
    capped = content[:limit] if limit > 0 and len(content) > limit else content
    truncated = len(capped) < len(content) or state.content_len > len(streamed)
    return _Content(streamed, used_complete, capped, truncated)


def _stop_reason(
    setting: CallSetting, token: _Token, state: _RunState, result: ToolResult, timeout_ms: int
) -> tuple[str | None, StopReason]:
    """(status marker, stop_reason) by priority: user abort, timeout, error, the tool's own."""
    self_reported = result.stop_reason if result.stop_reason is not None else state.complete_status
    user_aborted = setting.signal is not None and setting.signal.aborted
    aborted = user_aborted or (
        not token.timed_out and (self_reported == "aborted" or _is_cancellation(state.thrown))
    )
    if aborted:
        return "[interrupted: tool aborted by user]", "aborted"
    if token.timed_out:
        return f"[tool timeout: exceeded {timeout_ms}ms]", "failed"
    if state.thrown is not None:
        return f"[tool error] {state.thrown}", "failed"
    return None, self_reported or "completed"


def _notes(
    content: _Content, state: _RunState, result: ToolResult, limit: int, status_marker: str | None
) -> list[str]:
    """Truncation and archive notes, the tool's note, the status marker, or `[no output]`."""
    notes: list[str] = []
    if content.truncated:
        notes.append(f"[output truncated: exceeded {limit} chars]")
    if content.truncated and state.capture is not None:
        archived = _archive_note(state.capture)
        if archived:
            notes.append(archived)
    elif state.capture is not None:
        state.capture.cancel()
    if result.note:
        notes.append(result.note)
    if status_marker:
        notes.append(status_marker)
    if not content.capped and not notes:
        notes.append("[no output]")
    return notes


def _archive_note(capture: ArchiveCapture) -> str | None:
    saved = capture.save()
    if isinstance(saved, ArchiveSaved) and saved.archive_truncated:
        return f"[output archived ({archive_budget_mib()} MiB limit; head and tail kept): {saved.path}]"
    if isinstance(saved, ArchiveSaved):
        return f"[output archived: {saved.path}]"
    if isinstance(saved, ArchiveFailed):
        return f"[output archive failed: {saved.code}]"
    return None


def _frames(
    call_id: str,
    content: _Content,
    notes: list[str],
    stop_reason: StopReason,
    result: ToolResult,
    redactor: Redactor = EMPTY,
) -> list[OmniMessage]:
    """The remaining deltas (unstreamed content, notes, images), the stop, the complete output."""
    capped, streamed = content.capped, content.streamed
    note_text = "\n".join(notes)
    full_output = capped + ("\n" if capped and notes else "") + note_text
    if redactor:  # the model sees placeholders, never a configured secret
        full_output = redactor.text(full_output)
    messages: list[OmniMessage] = []
    if not streamed:
        if capped:
            messages.append(partial_tool_call_output("delta", capped, call_id))
    elif content.used_complete and capped.startswith(streamed) and len(capped) > len(streamed):
        messages.append(partial_tool_call_output("delta", capped[len(streamed) :], call_id))
    if notes:
        messages.append(partial_tool_call_output("delta", ("\n" if capped else "") + note_text, call_id))
    images = result.images if stop_reason == "completed" and result.images else None
    if images:
        messages.append(partial_tool_call_output("delta", "", call_id, images=list(images)))
    messages.append(partial_tool_call_output("stop", "", call_id, stop_reason=stop_reason))
    messages.append(tool_call_output(full_output, call_id, stop_reason=stop_reason, images=images))
    return messages
