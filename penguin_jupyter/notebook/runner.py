"""The `%%penguin` runner: one cell = one Task of the notebook's current Session.

Owns the Task lifecycle inside the kernel: options → workspace → Session → live view →
`session.run(...)` consumed in a task that the cell awaits in ≤0.25 s slices → interrupt/Stop
handling (abort signal, disabled buttons, killed command process groups) → the live view
replaced by the static transcript bundle. While the cell runs, background subagents' live
messages reach the same view through a `BackgroundFeed` (and, when complete, the bundle).
The input transformer in `extension.py` rewrites a `%%penguin` cell into
`await run_cell(line, body)`.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import os
import sys
from typing import Any

from ..interfaces import AbortSignal
from ..omni import OmniMessage, is_partial_payload, user_text
from .approval import NotebookApprover, approval_channel
from .background_feed import BackgroundFeed, subagent_manager
from .kernel_sessions import NotebookSessions, SessionStartError
from .options import CellOptions, OptionError, parse_cell_options
from .transcript_bundle import make_bundle, redact, transcript_mimebundle
from .waits import wait_sliced
from .workspace import resolve_workspace

INTERRUPT_GRACE_S = 15.0
EMPTY_CELL = "penguin: the cell has no task — write what the agent should do below the %%penguin line"


class TaskInterrupted(KeyboardInterrupt):
    """Raised after an interrupted Task is cleaned up; IPython shows one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return ["penguin: task interrupted — the next %%penguin cell continues the session"]


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def notebook_state(shell: Any) -> NotebookSessions:
    """The per-kernel NotebookSessions (stored on the shell)."""
    state = getattr(shell, "_penguin_sessions", None) if shell is not None else None
    if state is None:
        state = NotebookSessions(shell=shell)
        if shell is not None:
            shell._penguin_sessions = state
    return state


def _error_line(text: str) -> None:
    print(text, file=sys.stderr)


def _secrets(session: Any) -> list[str]:
    try:
        return [s for s in (session.secrets() or []) if isinstance(s, str)]
    except Exception:
        return []


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class CellTask:
    """One `%%penguin` execution against `session`."""

    def __init__(
        self, shell: Any, state: NotebookSessions, session: Any, opts: CellOptions, body: str
    ) -> None:
        self.shell = shell
        self.state = state
        self.session = session
        self.opts = opts
        self.body = body
        self.signal = AbortSignal()
        self.mode = opts.approve or state.approval_mode
        self.secrets = _secrets(session)
        self.messages: list[OmniMessage] = [user_text(body)]  # the engine never echoes its input
        self.usage: OmniMessage | None = None
        self.aborted = False
        self.failed: str | None = None
        self.interrupted = False
        self.lasting_notes: list[str] = []
        self.background_hops: set[str] = set()  # background subagents shown in this cell
        self.seen_hops: set[str] = set()  # subagents with messages in this cell
        self.loop = asyncio.get_running_loop()
        self.info = {
            "session_id": str(session.session_id),
            "provider": str(getattr(session, "provider", "") or ""),
            "model_id": str(getattr(session, "model_id", "") or ""),
            "workspace": str(getattr(session, "workspace_dir", "") or ""),
            "approval_mode": self.mode,
            "trace_path": str(getattr(session, "trace_path", "") or ""),
        }
        self.view = self._make_view()
        # Background children and handed-over approvals run in tasks whose context names the cell
        # that launched them (ipykernel reads a message's parent from a ContextVar): this cell's
        # context, captured once, is where both render.
        self.context = contextvars.copy_context()
        self.approver = NotebookApprover(
            mode=self.mode,
            permission_of=session.tool_permission,
            always_allowed=state.allowed_for(session),
            surface=self,
            channel=approval_channel(shell),
            signal=self.signal,
            context=self.context,
        )
        manager = subagent_manager(session)
        sink = self._on_background_in_cell
        self.feed = BackgroundFeed(manager, self.loop, sink) if manager is not None else None

    def redact_text(self, text: str) -> str:
        return redact(text, self.secrets)

    # --- the approval surface: the view, plus notes that must outlive the live widget ----------
    def show_approval(self, tool_call: OmniMessage, row: Any) -> None:
        self.view.show_approval(tool_call, row)

    def show_note(self, text: str) -> None:
        """A note shown live and printed (stderr) after the transcript, so it stays in the notebook."""
        self.view.show_note(text)
        if text not in self.lasting_notes:
            self.lasting_notes.append(text)

    def _make_view(self) -> Any:
        if getattr(self.shell, "kernel", None) is not None:
            from .live_view import LiveView

            return LiveView(
                self.info,
                self.stop_from_button,
                quiet=self.opts.quiet,
                redact=self.redact_text,
                secrets=self.secrets,
            )
        from .plain_view import PlainView

        return PlainView(self.info, quiet=self.opts.quiet, redact=self.redact_text)

    # --- stopping ---------------------------------------------------------------------
    def stop_from_button(self) -> None:
        """Stop button: may be called on a comm thread; hop onto the loop."""
        self.loop.call_soon_threadsafe(self.stop)

    def stop(self) -> None:
        if self.signal.aborted:
            return
        self.signal.abort("user")
        self.approver.close_pending("interrupted")
        self.view.show_note("interrupted — stopping the task")
        environment = getattr(self.session, "environment", None)
        killer = getattr(environment, "kill_all_commands", None)
        if killer is not None:
            try:
                result = killer()
                if inspect.isawaitable(result):
                    self.loop.create_task(result)
            except Exception as exc:
                self.show_note(f"penguin: could not kill running commands: {exc}")

    # --- running ----------------------------------------------------------------------
    def _run_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"approve": self.approver, "signal": self.signal}
        if self.opts.thinking:
            kwargs["thinking_level"] = self.opts.thinking
        if self.opts.max_turns is not None:
            kwargs["max_turns"] = self.opts.max_turns
        return kwargs

    async def _consume(self) -> None:
        try:
            async for msg in self.session.run([user_text(self.body)], **self._run_kwargs()):
                self._remember(msg)
                if not msg.origin:
                    if msg.kind == "token_usage":
                        self.usage = msg
                        self.state.last_usage = msg
                    elif msg.kind == "abort":
                        self.aborted = True
                try:
                    self.view.handle(msg)
                except Exception as exc:  # a rendering bug must never lose the run
                    self.show_note(f"penguin: could not render a {msg.kind} message: {exc}")
        except Exception as exc:
            self.failed = f"{type(exc).__name__}: {exc}"
            self.show_note(f"penguin: the task failed: {self.failed}")

    def _on_background_in_cell(self, msg: OmniMessage) -> None:
        self.context.run(self.on_background, msg)

    def on_background(self, msg: OmniMessage) -> None:
        """A background subagent's live message (on the loop, via the feed)."""
        origin = msg.origin or []
        if not origin:
            return
        hop = origin[0]
        if hop not in self.background_hops:
            self.background_hops.add(hop)
            meta = self.state.subagent_metas.get(hop)
            if meta is not None and hop not in self.seen_hops:
                self._remember(meta)  # launched in an earlier cell: name its model here too
                self.view.handle_background(meta)
        self._remember(msg)
        self.view.handle_background(msg)

    def _remember(self, msg: OmniMessage) -> None:
        if not is_partial_payload(msg):
            self.messages.append(msg)
        if msg.origin:
            self.seen_hops.add(msg.origin[0])
            if msg.kind == "session_meta" and len(msg.origin) == 1:
                self.state.remember_subagent_meta(msg.origin[0], msg)

    def _status(self) -> str:
        if self.aborted or self.interrupted:
            return "aborted"
        if self.failed:
            return "failed"
        for msg in reversed(self.messages):
            if msg.kind == "text" and not msg.origin and msg.payload.role == "assistant":
                return msg.payload.stop_reason
        return "completed"

    async def run(self) -> None:
        from IPython.display import display

        handle = None
        shown = self.view.display_object()
        if shown is not None:
            handle = display(shown, display_id=True)
        if self.feed is not None:
            self.feed.attach()
        self.state.active_approver = self.approver
        consumer = asyncio.ensure_future(self._consume())
        try:
            await wait_sliced(consumer)
        except asyncio.CancelledError:
            self.interrupted = True
            self.stop()
            try:
                await wait_sliced(consumer, timeout_s=INTERRUPT_GRACE_S)
            except asyncio.CancelledError:
                pass
            if not consumer.done():
                consumer.cancel()
        finally:
            if self.feed is not None:
                self.feed.detach()
            if self.state.active_approver is self.approver:
                self.state.active_approver = None
            self.state.cell_python_timeout_s = None  # a cell's --python-timeout ends with it
            self.approver.retire(lambda: self.state.active_approver)
        status = self._status()
        self.view.finish("interrupted" if status == "aborted" else status)
        self._show_final(handle, status)
        if self.interrupted:
            raise TaskInterrupted()

    def _show_final(self, handle: Any, status: str) -> None:
        from IPython.display import display

        bundle = make_bundle(
            self.messages, session_info=self.info, status=status, usage=self.usage, secrets=self.secrets
        )
        mimebundle = transcript_mimebundle(bundle, secrets=self.secrets)
        if handle is not None:
            handle.update(mimebundle, raw=True)
            self.view.close()
        else:
            display(mimebundle, raw=True)
        if handle is not None:
            for note in self.lasting_notes:
                _error_line(self.redact_text(note))


async def run_cell(line: str, body: str) -> None:
    """What a `%%penguin` cell executes (via the input transformer)."""
    shell = _shell()
    state = notebook_state(shell)
    try:
        opts = parse_cell_options(line)
    except OptionError as exc:
        _error_line(str(exc))
        return
    if not body.strip():
        _error_line(EMPTY_CELL)
        return
    namespace = getattr(shell, "user_ns", {}) if shell is not None else {}
    workspace = resolve_workspace(opts.workspace, namespace)
    if opts.workspace and not os.path.isdir(workspace):
        _error_line(f"penguin: --workspace directory does not exist: {workspace}")
        return
    try:
        session = await state.session_for(opts, workspace)
    except SessionStartError as exc:
        _error_line(str(exc))
        return
    from .kernel_tools import expand_variables

    task = CellTask(shell, state, session, opts, expand_variables(body.strip(), namespace))
    await task.run()
