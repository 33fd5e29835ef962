"""The live widget view of one Task: routes each OmniMessage to the widget it belongs to.

Owns the routing rules (docs/notebook.md): one widget per message segment (thinking,
assistant text, tool card, event), tool outputs joined to their call by `tool_call_id`,
subagent messages nested by `origin` (a background subagent's card titled "(background)"),
retry countdowns and notices (their words from `view_notices.py`, shared with the plain view).
Implements `cell_view.CellView`. The header, cards, blocks and throttling live in their own
`live_*` modules; the cell (`cell.py`) owns the Task lifecycle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence

import ipywidgets as widgets

from ...omni import (
    ApprovalDecisionPayload,
    ImageUrlPayload,
    InlineDataPayload,
    OmniMessage,
    PartialTextPayload,
    PartialThinkingPayload,
    PartialToolCallOutputPayload,
    PartialToolCallPayload,
    RequestBeginPayload,
    RequestEndPayload,
    SessionMetaPayload,
    TextPayload,
    ThinkingPayload,
    TokenUsagePayload,
    ToolCallOutputPayload,
    ToolCallPayload,
)
from ...redaction import EMPTY, Redactor
from ..transcript.cell_sources import CellPreview
from ..transcript.long_prompts import fold, saved_user_text
from ..transcript.markdown_html import markdown_html
from .approval_row import ApprovalRow
from .live_blocks import SplitTextBlock
from .live_cards import ToolCardWidget
from .live_header import HeaderWidget, usage_text
from .live_holdback import SecretHoldBack
from .live_render import muted_html, note_html, pre_html
from .live_shared import plain_html, plain_vbox, retire_shared, shared_layout
from .live_stream import StreamTextBlock, streaming_available
from .live_teardown import close_widgets_paced
from .view_notices import Notice, notice_for, retry_text

TONE_COLORS = {"info": "#555", "warning": "#b26a00", "error": "#c62828"}

# A finished assistant text up to this long is shown rendered once the Task goes on past it (one
# more copy of it on the wire); a longer one stays plain until the static transcript.
RENDER_FINISHED_MAX_CHARS = 32_000
TextBlock = StreamTextBlock | SplitTextBlock



class LiveScope:
    """The widgets of one session scope (the main Session or one subagent)."""

    def __init__(
        self,
        container: widgets.Box,
        *,
        quiet: bool,
        redactor: Redactor = EMPTY,
        holdback: SecretHoldBack | None = None,
    ) -> None:
        self.container = container
        self.quiet = quiet
        self.redactor = redactor
        self.holdback = holdback or SecretHoldBack()
        self.text: TextBlock | None = None
        self.finished_text: TextBlock | None = None  # ended, still plain (see `_render_finished`)
        self.thinking: TextBlock | None = None
        self.streaming = streaming_available()
        self.thinking_box: widgets.Accordion | None = None
        self.cards: dict[str, ToolCardWidget] = {}
        self.children: dict[str, LiveScope] = {}
        self.countdown: asyncio.Task[None] | None = None
        self.blocks: list[TextBlock | ToolCardWidget] = []
        self.title_holder: tuple[widgets.Accordion, str] | None = None
        self.model_label = ""
        self.background = False

    def add(self, widget: widgets.Widget) -> None:
        self.container.children = (*self.container.children, widget)

    def note(self, text: str, color: str = "#555") -> widgets.HTML:
        widget = plain_html(note_html(self.redactor.text(text), color))
        self.add(widget)
        return widget

    def notice(self, notice: Notice) -> widgets.HTML:
        return self.note(notice.text, TONE_COLORS[notice.tone])

    # --- segments ---------------------------------------------------------------------
    def _open_text(self) -> TextBlock:
        if self.text is None:
            if self.streaming:
                self.text = StreamTextBlock(self.container, redactor=self.redactor, holdback=self.holdback)
            else:
                box = plain_vbox()
                self.add(box)
                self.text = SplitTextBlock(box, markdown_html, redactor=self.redactor, holdback=self.holdback)
            self.blocks.append(self.text)
        return self.text

    def _end_text(self) -> None:
        """The open text block is finished: send what it still holds and release its capture.
        It is shown rendered only if the Task goes on (`_render_finished`): when the Task ends
        here, the static transcript replaces it anyway and a rendered copy would be wasted."""
        if self.text is not None:
            self.text.flush()
            self.finished_text, self.text = self.text, None

    def _render_finished(self) -> None:
        if isinstance(self.finished_text, StreamTextBlock):
            self.finished_text.show_rendered(markdown_html, RENDER_FINISHED_MAX_CHARS)
        self.finished_text = None

    def _open_thinking(self) -> TextBlock:
        if self.thinking is None:
            box = plain_vbox()
            self.thinking_box = widgets.Accordion(children=[box], selected_index=None, layout=shared_layout())
            self.thinking_box.set_title(0, "Thinking…")
            self.add(self.thinking_box)
            if self.streaming:
                self.thinking = StreamTextBlock(box, redactor=self.redactor, holdback=self.holdback)
            else:
                self.thinking = SplitTextBlock(
                    box, pre_html, boundary="\n", redactor=self.redactor, holdback=self.holdback
                )
            self.blocks.append(self.thinking)
        return self.thinking

    def _end_thinking(self) -> None:
        if self.thinking is not None:
            self.thinking.flush()
            self.thinking = None

    def card(self, tool_call_id: str, name: str = "") -> ToolCardWidget:
        card = self.cards.get(tool_call_id)
        if card is None:
            card = ToolCardWidget(
                tool_call_id, name, quiet=self.quiet, redactor=self.redactor, holdback=self.holdback
            )
            self.cards[tool_call_id] = card
            self.blocks.append(card)
            self.add(card.widget)
        return card

    def child(self, hop: str) -> LiveScope:
        scope = self.children.get(hop)
        if scope is None:
            box = plain_vbox()
            accordion = widgets.Accordion(children=[box], selected_index=0, layout=shared_layout())
            self.add(accordion)
            scope = LiveScope(box, quiet=self.quiet, redactor=self.redactor, holdback=self.holdback)
            scope.title_holder = (accordion, hop)
            scope._show_title()
            self.children[hop] = scope
        return scope

    def mark_background(self) -> None:
        """This subagent scope runs in the background (its title says so)."""
        if not self.background:
            self.background = True
            self._show_title()

    def _show_title(self) -> None:
        if self.title_holder is None:
            return
        accordion, hop = self.title_holder
        title = f"Subagent {hop}" + (f" — {self.model_label}" if self.model_label else "")
        accordion.set_title(0, title + (" (background)" if self.background else ""))

    # --- routing ----------------------------------------------------------------------
    def handle(self, msg: OmniMessage, origin: list[str]) -> None:
        if origin:
            self.child(origin[0]).handle(msg, origin[1:])
            return
        payload = msg.payload
        if isinstance(payload, SessionMetaPayload):
            self.model_label = f"{payload.provider}/{payload.model_id}"
            self._show_title()
            return
        if not isinstance(payload, RequestEndPayload):
            self._stop_countdown()
        if isinstance(
            payload, PartialTextPayload | PartialThinkingPayload | PartialToolCallPayload | ToolCallPayload
        ):
            self._render_finished()  # the Task goes on past the last text
        if not (self._handle_text(msg) or self._handle_tool(msg)):
            self._handle_event(msg)

    def _handle_text(self, msg: OmniMessage) -> bool:
        """Assistant/user text and thinking; False when `msg` is something else."""
        payload = msg.payload
        if isinstance(payload, PartialTextPayload):
            if payload.event_type == "start":
                self._end_text()
            self._open_text().append(payload.text)
        elif isinstance(payload, TextPayload):
            if payload.role == "assistant":
                self._open_text().replace(payload.text)
                self._end_text()
            else:
                self.add(_user_text_widget(self.redactor.text("▸ " + saved_user_text(payload.text))))
        elif isinstance(payload, PartialThinkingPayload):
            if payload.event_type == "start":
                self._end_thinking()
            self._open_thinking().append(payload.thinking)
        elif isinstance(payload, ThinkingPayload):
            if payload.thinking:
                self._open_thinking().replace(payload.thinking)
            self._end_thinking()
            if self.thinking_box is not None:
                self.thinking_box.set_title(0, "Thinking")
        else:
            return False
        return True

    def _handle_tool(self, msg: OmniMessage) -> bool:
        """Tool calls, their output and approval; False when `msg` is something else."""
        payload = msg.payload
        if isinstance(payload, PartialToolCallPayload):
            self._end_text()
            if payload.event_type == "start":
                self.card(payload.tool_call_id, payload.name)
        elif isinstance(payload, ToolCallPayload):
            self._end_text()
            self.card(payload.tool_call_id, payload.name).set_call(msg)
        elif isinstance(payload, PartialToolCallOutputPayload):
            card = self.card(payload.tool_call_id)
            card.append_output(payload.output)
            card.add_images(payload.images)
        elif isinstance(payload, ToolCallOutputPayload):
            self.card(payload.tool_call_id).finish(msg)
        elif isinstance(payload, ApprovalDecisionPayload):
            self.card(payload.tool_call_id).set_decision(payload.decision)
        else:
            return False
        return True

    def _handle_event(self, msg: OmniMessage) -> None:
        payload = msg.payload
        if isinstance(payload, (ImageUrlPayload, InlineDataPayload)):
            self.add(plain_html(muted_html(f"[{msg.kind}]")))
        elif (
            isinstance(payload, RequestEndPayload)
            and payload.status != "completed"
            and payload.retry_in_ms is not None
        ):
            self._start_countdown(payload)
        else:
            shown = notice_for(payload)
            if shown is not None:
                self.notice(shown)

    def _start_countdown(self, payload: RequestEndPayload) -> None:
        self._stop_countdown()
        color = TONE_COLORS["warning"]
        left_s = (payload.retry_in_ms or 0) / 1000
        label = self.note(retry_text(payload, left_s), color)

        async def tick() -> None:
            left = left_s
            while left > 0:
                await asyncio.sleep(min(1.0, left))
                left -= 1.0
                label.value = note_html(self.redactor.text(retry_text(payload, left)), color)

        try:
            self.countdown = asyncio.get_running_loop().create_task(tick())
        except RuntimeError:
            self.countdown = None

    def _stop_countdown(self) -> None:
        if self.countdown is not None:
            self.countdown.cancel()
            self.countdown = None

    def flush(self) -> None:
        self._stop_countdown()
        for block in self.blocks:
            block.flush()
        for child in self.children.values():
            child.flush()


UNTRUSTED_LINE = "penguin: trust this notebook to see the live view and its approval buttons"


class LiveRoot(widgets.VBox):
    """The view's outer box. Its text/plain form is what a page that does not render widgets
    shows instead — a collaborator's page on an untrusted notebook (docs/notebook-tools.md,
    "Several windows, collaborators, reloads") — so it says what to do, not `VBox(children=…`."""

    def __repr__(self) -> str:
        return UNTRUSTED_LINE


class LiveView:
    """Header + body for one Task (a `CellView`)."""

    def __init__(
        self,
        info: Mapping[str, str],
        on_stop: Callable[[], None],
        *,
        quiet: bool = False,
        redactor: Redactor = EMPTY,
    ) -> None:
        self.header = HeaderWidget(info, on_stop)
        self.body = plain_vbox()
        self.scope = LiveScope(self.body, quiet=quiet, redactor=redactor, holdback=SecretHoldBack(redactor))
        self.root = LiveRoot([self.header.widget, self.body], layout=shared_layout())

    def handle(self, msg: OmniMessage) -> None:
        if not msg.origin and not self._header_status(msg.payload):
            return
        self.scope.handle(msg, list(msg.origin or []))

    def _header_status(self, payload: object) -> bool:
        """The header follows the main Task; False when the message is for the header only."""
        if isinstance(payload, TokenUsagePayload):
            self.header.set_usage(
                usage_text(payload.session.total, payload.request.total, payload.request.output)
            )
            return False
        if isinstance(payload, RequestBeginPayload):
            self.header.set_status("waiting for the model…")
        elif isinstance(payload, (PartialTextPayload, PartialThinkingPayload, PartialToolCallPayload)):
            self.header.set_status("model responding…")
        elif isinstance(payload, ToolCallPayload):
            self.header.set_status(f"running {payload.name}…")
        return True

    def handle_background(self, msg: OmniMessage) -> None:
        """A live message of a background subagent: its card is marked, the header is left alone."""
        origin = list(msg.origin or [])
        if not origin:
            return
        self.scope.child(origin[0]).mark_background()
        self.scope.handle(msg, origin)

    def show_approval(
        self,
        tool_call: OmniMessage,
        row: ApprovalRow | None,
        *,
        background: bool = False,
        preview: CellPreview | None = None,
        touches: Sequence[str] = (),
    ) -> None:
        payload = tool_call.payload
        if not isinstance(payload, ToolCallPayload):
            return
        scope = self.scope
        for depth, hop in enumerate(tool_call.origin or []):
            scope = scope.child(hop)
            if background and depth == 0:
                scope.mark_background()
        scope._render_finished()
        card = scope.card(payload.tool_call_id, payload.name)
        card.set_call(tool_call, preview, touches)
        if row is not None:
            self.header.set_status(f"waiting for approval of {payload.name}")
            card.show_approval_row(row.widget)
        else:
            card.show_approval_row(None, "approval requested")

    def show_decision_reason(self, decision: OmniMessage, reason: str) -> None:
        payload = decision.payload
        if not isinstance(payload, ApprovalDecisionPayload):
            return
        scope = self.scope
        for hop in decision.origin or []:
            scope = scope.child(hop)
        scope.card(payload.tool_call_id).set_decision(payload.decision, reason)

    def show_note(self, text: str) -> None:
        self.scope.note(text, TONE_COLORS["warning"])

    def show_cost(self, text: str) -> None:
        self.header.set_cost(text)

    def finish(self, status_text: str) -> None:
        self.scope.flush()
        self.header.finish(status_text)

    def display_object(self) -> object | None:
        return self.root

    def close(self) -> None:
        """Close every widget of the view (after the static transcript replaced it), paced, and
        then the shared layout and style models they used (live_shared.py)."""
        close_widgets_paced([self.root], last=retire_shared())


def _user_text_widget(text: str) -> widgets.Widget:
    """A user message: a long one shows its head and folds the rest behind "… N more lines" (a
    collapsed Accordion), as a tool card's long body does."""
    folded = fold(text)
    head = plain_html(muted_html(folded.head))
    if not folded.rest:
        return head
    more = widgets.Accordion(
        children=[plain_html(muted_html(folded.rest))], selected_index=None, layout=shared_layout()
    )
    more.set_title(0, folded.label)
    return plain_vbox([head, more])
