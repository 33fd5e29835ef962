"""One `%%penguin` cell: the single owner of everything that lives as long as the cell.

A `Cell` is built light (what it is given, its plain state) and started by `open()`: its
approval mode, its registration at the kernel's sink, its view and how it asks. It is an async
context manager: entering it (opening it first if need be) tells the notebook link which Task
runs, shows its view, makes it the kernel's running cell (so the approval router can lend its
buttons to earlier cells' background subagents) and attaches the background feed. `run_task()` consumes `session.run(...)` in ≤0.25 s slices so a
kernel interrupt lands. Exiting it is the only place its state is torn down: the feed detached,
questions still open denied, the cell no longer running, the live view replaced by the static
transcript and every widget the Task made closed. Settings that belong to the cell (approval
mode, run_python timeout, view) live here and end with it. The threading model is in docs/notebook-runtime.md.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING

from ...interfaces import AbortSignal
from ...omni import ApprovalDecisionPayload, OmniMessage, SessionMetaPayload, TokenUsagePayload, user_text
from ...seams import off_lines
from ...state.approval_rules import RuleBook
from ..kernel_shapes import JsonObject
from ..kernel_tools.notebook_cells import cell_preview
from ..link.notebook_link import current_cell_id, link_of
from ..link.waits import wait_sliced
from ..live.approval_row import ApprovalRow
from ..live.cell_view import CellView
from ..transcript.cell_sources import CellPreview
from ..transcript.cost_line import cost_text, task_cost
from ..transcript.saved_images import with_saved_images
from ..transcript.transcript_bundle import TRANSCRIPT_MIME, decision_reason_text, static_transcript
from ..undo import task_bracket
from .approval import CELL_ENDED_NOTE, CellAsker, approval_channel
from .approval_card import where_lines
from .approval_router import CellApproval
from .background_feed import BackgroundFeed
from .cell_record import CellRecord
from .cell_rules import CellRules, capped_mode, save_to_project
from .options import CellOptions
from .sandbox_approval import cell_sandbox
from .user_lines import inform, tell

if TYPE_CHECKING:
    from IPython.display import DisplayHandle

    from ...session import Session
    from ..undo.undo_stack import TaskJournal
    from .kernel_runtime import KernelRuntime

INTERRUPT_GRACE_S = 15.0


# What a kernel interrupt's cell says (the Stop button's cell ends cleanly: its transcript says aborted).
INTERRUPTED_LINE = "penguin: task interrupted — the next %%penguin cell continues the session"


class TaskInterrupted(KeyboardInterrupt):
    """Raised after an interrupted Task is cleaned up; IPython shows one line, not a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [INTERRUPTED_LINE]


class Cell:
    """One `%%penguin` execution of `prompt` against `session`: `open()`, then `async with`.

    The constructor only keeps what the cell is given and its plain state; `open()` starts what
    has effects (the approval mode's one-time notes, the kernel sink's registration, the
    widgets, the background feed); entering opens a cell not opened yet."""

    # set by open(): what has effects on the kernel or the page
    mode: str
    info: dict[str, str]
    view: CellView
    context: contextvars.Context
    approval: CellApproval
    feed: BackgroundFeed | None

    def __init__(
        self,
        runtime: KernelRuntime,
        session: Session,
        opts: CellOptions,
        prompt: str,
        rules: CellRules | None = None,
        *,
        context: str = "",
        source: str = "",
        workspace: str = "",
    ) -> None:
        self.runtime = runtime
        self.session = session
        self.opts = opts
        self.prompt = prompt
        self.rules = rules if rules is not None else CellRules(RuleBook(), None)
        self.task_context = context  # what the model gets after the prompt: which cell runs, what ran before
        self.source = source  # the cell as the notebook stores it (the link's Task context)
        self.workspace = workspace  # the workspace the cell chose (the link's Task context)
        self.decision_reasons: dict[str, str] = {}  # tool_call_id -> why no click was needed
        self.python_timeout_s = opts.python_timeout_s  # this cell's --python-timeout
        # this cell's --budget, else `%penguin budget` (docs/cost.md)
        self.budget_usd = opts.budget_usd if opts.budget_usd is not None else runtime.sessions.budget_usd
        self.signal = AbortSignal()
        self.loop = asyncio.get_running_loop()
        self.redactor = session.redactor  # names each secret: [redacted:NAME]
        self.record = CellRecord(prompt)
        self.lasting_notes: list[str] = []
        self.info_notes: list[str] = []  # shown above the live view once it is displayed
        self.final: tuple[str, JsonObject] | None = None  # (status, mimebundle) once shown
        self._display: DisplayHandle | None = None
        self.undo_task: TaskJournal | None = None
        self.opened = False

    def open(self) -> None:
        """Start the cell: its approval mode (capped by the policy; auto acts as ask where no
        sandbox can start — each a line), its registration at the kernel's sink, its view, how
        it asks and its background feed. Raises `SinkUnavailable` (the sink cannot redact)."""
        if self.opened:
            return
        runtime, session, rules = self.runtime, self.session, self.rules
        # the administrator's policy caps the mode; the one line saying so is shown when it does
        self.mode, capped_note = capped_mode(self.opts.approve or runtime.sessions.approval_mode, rules.policy)
        # auto acts as ask where no sandbox can start (one line, once per kernel)
        self.mode, sandbox, sandbox_note = cell_sandbox(
            self.mode,
            rules.policy.path if rules.policy is not None and rules.policy.sandbox_required else "",
            runtime.sessions.sandbox_grants,
            runtime.sessions.sandbox_hosts,
            runtime.sessions.sandbox_announced,
            auto_rules=any(rule.action == "auto" for rule in rules.book.rules()),
        )
        self.info = {
            "session_id": str(session.session_id),
            "provider": str(session.provider or ""),
            "model_id": str(session.model_id or ""),
            "workspace": str(session.workspace_dir or ""),
            "approval_mode": self.mode,
            "trace_path": str(session.trace_path or ""),
        }
        if sandbox.kernel is not None:  # "Python 3 (penguin sandbox)": the header says so
            self.info["kernel"] = "sandboxed" if sandbox.kernel.browser_hardened else "sandboxed, browser not hardened"
        runtime.open_sink(self)  # before the first widget: its state is published redacted too
        self.view = self._make_view()
        # ipykernel reads an output's parent (its cell) from a ContextVar: this cell's context,
        # captured once, is where background messages and lent approval rows render.
        self.context = contextvars.copy_context()
        link = link_of(runtime.shell)
        asker = CellAsker(
            channel=approval_channel(getattr(runtime.shell, "kernel", None)),
            surface=self,
            signal=self.signal,
            context=self.context,
            preview=(lambda call: cell_preview(link, call)) if link is not None else None,
        )
        self.approval = CellApproval(
            mode=self.mode,
            always_allowed=runtime.sessions.allowed_for(session),
            permission_of=session.tool_permission,
            asker=asker,
            workspace_dir=self.info["workspace"] or None,
            rules=rules.book,
            disabled_tools=rules.policy.disabled_tools if rules.policy is not None else frozenset(),
            policy_path=rules.policy.path if rules.policy is not None else "",
            save_rule=save_to_project,
            scratchpad_dir=str(session.scratchpad_dir),
            sandbox=sandbox,
        )
        for note in [*rules.notes, *(line for line in (capped_note, sandbox_note) if line)]:
            self.show_note(note)
        registry = session.background_subagents()
        self.feed = (
            BackgroundFeed(registry, self.loop, self._on_background_in_cell) if registry is not None else None
        )
        self.opened = True

    def _make_view(self) -> CellView:
        if getattr(self.runtime.shell, "kernel", None) is not None:
            from ..live.live_view import LiveView

            return LiveView(
                self.info,
                self.stop_from_button,
                quiet=self.opts.quiet,
                redactor=self.redactor,
            )
        from ..live.plain_view import PlainView

        return PlainView(self.info, quiet=self.opts.quiet, redactor=self.redactor)

    # --- life: enter, run, exit ------------------------------------------------------------------

    async def __aenter__(self) -> Cell:
        from IPython.display import display

        self.open()
        link = link_of(self.runtime.shell)
        if link is not None and self.source:  # the notebook tools' Task; the notebook keeps its session
            link.begin_task(self.info["session_id"], self.source, self.workspace)
            await link.remember_session(self.info["session_id"])
        shown = self.view.display_object()
        if shown is not None:
            if self.info_notes:  # above the live view, where the static transcript will stand
                inform("\n".join(self.info_notes))
            self._display = display(shown, display_id=True)
        self.runtime.enter(self)
        agent = self.runtime.sessions.agent
        self.undo_task = task_bracket.begin_task(  # docs/undo.md
            self.runtime.shell,
            self.session,
            current_cell_id(self.runtime.shell),
            self.prompt,
            agent.agent_dir if agent is not None else None,
        )
        if self.feed is not None:
            self.feed.attach()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self.feed is not None:
                self.feed.detach()  # what is queued renders now, before the view finishes
        finally:
            self.approval.asker.close_pending(CELL_ENDED_NOTE)
            self.approval.ended = True
            self.runtime.leave(self)
        status = self.record.status()
        try:
            self.view.finish("interrupted" if status == "aborted" else status)
            undo_task = task_bracket.end_task(self.runtime.shell, self.record.messages) if self.undo_task else None
            self._show_transcript(status, undo_task)
        finally:
            self.view.close()  # every widget of the Task, even when showing the transcript failed
        if undo_task is not None:
            await self._offer_undo(undo_task)

    async def run_task(self) -> None:
        """Run the Task to its end; an interrupt stops it and waits (bounded) for it to wind down."""
        consumer = asyncio.ensure_future(self._consume())
        try:
            await wait_sliced(consumer)
        except asyncio.CancelledError:
            self.record.interrupted = True
            self.stop()
            try:
                await wait_sliced(consumer, timeout_s=INTERRUPT_GRACE_S)
            except asyncio.CancelledError:
                pass
            if not consumer.done():
                consumer.cancel()

    async def _consume(self) -> None:
        try:
            sent = self.prompt + ("\n\n" + self.redactor.text(self.task_context) if self.task_context else "")
            messages = self.session.run(
                [user_text(sent)],
                approve=self.runtime.router.approve_fn(self.approval),
                signal=self.signal,
                thinking_level=self.opts.thinking,
                max_turns=self.opts.max_turns,
                budget_usd=self.budget_usd,
            )
            async for msg in messages:
                self._on_message(msg)
        except Exception as exc:  # the cell's boundary: a Task that throws ends as failed, said in one line
            self.record.failed = f"{type(exc).__name__}: {exc}"
            self.show_note(f"penguin: the task failed: {self.record.failed}")
        for seam_line in off_lines():  # a seam the Task found off (its model client's, run_python's)
            self.show_note(seam_line)
        self._show_recording_notice()

    def _on_message(self, msg: OmniMessage) -> None:
        self._remember(msg)
        if isinstance(msg.payload, TokenUsagePayload):
            if not msg.origin:
                self.runtime.sessions.last_usage = msg
            self.view.show_cost(cost_text(task_cost(self.session.spend)))
        try:
            self.view.handle(msg)
            self._decision_reason(msg)
        except Exception as exc:  # a rendering bug must never lose the run
            self.show_note(f"penguin: could not render a {msg.kind} message: {exc}")
        self._show_recording_notice()

    def _decision_reason(self, msg: OmniMessage) -> None:
        """An approval made without a click: the card and the saved transcript say why."""
        payload = msg.payload
        if not isinstance(payload, ApprovalDecisionPayload):
            return
        reason = self.runtime.router.take_reason(payload.tool_call_id)
        if reason is not None:
            reason = decision_reason_text(reason)  # the live card says what the saved one will
            self.decision_reasons[payload.tool_call_id] = reason
            self.view.show_decision_reason(msg, reason)

    def _show_recording_notice(self) -> None:
        """The session's one-time "recording is off" line (its Trace could not be written)."""
        notice = self.session.take_recording_notice()
        if notice:
            self.show_note(notice)

    def _remember(self, msg: OmniMessage) -> None:
        self.record.remember(msg)
        if msg.origin and len(msg.origin) == 1 and isinstance(msg.payload, SessionMetaPayload):
            self.runtime.sessions.remember_subagent_meta(msg.origin[0], msg)

    # --- background subagents ---------------------------------------------------------------------

    def _on_background_in_cell(self, msg: OmniMessage) -> None:
        self.context.run(self.on_background, msg)

    def on_background(self, msg: OmniMessage) -> None:
        """A background subagent's live message (on the loop, via the feed)."""
        if not msg.origin:
            return
        hop = msg.origin[0]
        if hop not in self.record.background_hops:
            self.record.background_hops.add(hop)
            meta = self.runtime.sessions.subagent_metas.get(hop)
            if meta is not None and hop not in self.record.seen_hops:
                self._remember(meta)  # launched in an earlier cell: name its model here too
                self.view.handle_background(meta)
        self._remember(msg)
        self.view.handle_background(msg)
        self._decision_reason(msg)

    # --- the approval surface: the view, plus notes that must outlive the live widget --------------

    def show_approval(
        self,
        tool_call: OmniMessage,
        row: ApprovalRow | None,
        *,
        background: bool = False,
        preview: CellPreview | None = None,
    ) -> None:
        touches = where_lines(tool_call, self.info["workspace"] or ".")
        self.view.show_approval(tool_call, row, background=background, preview=preview, touches=touches)

    def show_note(self, text: str) -> None:
        """A note shown live and printed (stderr) after the transcript, so it stays in the notebook."""
        self.view.show_note(text)
        if text not in self.lasting_notes:
            self.lasting_notes.append(text)

    def show_info(self, text: str) -> None:
        """A line that is information, not a problem (a `.env` read, a resumed session): an output
        of its own above the live view, so it stays above the transcript, never on stderr
        (docs/notebook-runtime.md "Lines for the user"). Given after the cell was entered it is
        shown below the live view instead; a view without a display (no kernel) shows it as one
        of its lines."""
        if self.view.display_object() is None:
            self.view.show_note(text)
        elif self._display is not None:
            inform(text)
        elif text not in self.info_notes:
            self.info_notes.append(text)

    # --- stopping ---------------------------------------------------------------------------------

    def stop_from_button(self) -> None:
        """Stop button: may be called on a comm thread; hop onto the loop."""
        self.loop.call_soon_threadsafe(self.stop)

    def stop(self) -> None:
        """Abort the Task: signal, deny open questions, kill running commands (on the loop)."""
        if self.signal.aborted:
            return
        self.signal.abort("user")
        self.approval.asker.close_pending("interrupted")
        self.view.show_note("interrupted — stopping the task")
        self.session.kill_running_commands()

    # --- the static transcript ----------------------------------------------------------------------

    def _show_transcript(self, status: str, undo_task: TaskJournal | None = None) -> None:
        from IPython.display import display

        mimebundle = static_transcript(
            self.record.messages,
            session_info=self.info,
            status=status,
            usage=self._usage_with_cost(),
            redactor=self.redactor,
            decision_reasons=self.decision_reasons,
            undo={"task_id": undo_task.task_id, "state": "available"} if undo_task is not None else None,
        )
        self.final = (status, mimebundle)
        if self._display is None:
            display(mimebundle, raw=True)
            return
        self._display.update(mimebundle, raw=True)
        for note in self.lasting_notes:
            tell(self.redactor.text(note))

    def _usage_with_cost(self) -> JsonObject | None:
        """The last request's token counts with what the Task cost, for the saved transcript."""
        usage = self.record.usage
        cost = task_cost(self.session.spend)
        if usage is None or not isinstance(usage.payload, TokenUsagePayload):
            return None if cost is None or (not cost["task_usd"] and not cost["unpriced_requests"]) else {"cost": cost}
        counts = usage.payload.model_dump(include={"session", "request"})
        return {**counts, "cost": cost} if cost is not None else counts

    async def _offer_undo(self, undo_task: TaskJournal) -> None:
        """The transcript's Undo button now targets this Task (docs/undo.md)."""
        from ..undo.transcript_marks import TranscriptDisplay

        bundle = self.final[1].get(TRANSCRIPT_MIME) if self.final is not None else None
        if self.final is None or not isinstance(bundle, Mapping):
            return
        link = link_of(self.runtime.shell)
        shown = TranscriptDisplay(
            self._display,
            with_saved_images(bundle, self.final[1].get("text/html")),
            self.redactor,
            undo_task.cell_id,
            undo_task.task_id,
        )
        await task_bracket.transcript_shown(self.runtime.shell, undo_task, shown, link.bridge if link else None)
