"""Streaming text blocks for the live view: growing text split into frozen widgets.

Owns the split rule (docs/notebook-streaming.md) for tool output, whose lines arrive whole and
are rendered as `<pre>`: a block's text lives in a run of HTML widgets; once the open widget
holds more than `chunk_chars`, its next update is the split: its text up to the last paragraph
(or line) boundary is sent one final time and frozen, and a fresh widget takes the rest, so an
update never re-sends finished text. A text with no boundary at all (one endless line or
paragraph) is cut at a space before `chunk_chars` (or at it), so the cost stays linear. Every
widget update goes through a `ThrottledSetter` at the text rate (`TEXT_INTERVAL_S`), splits
included. Assistant text and thinking stream as appended text instead (`live_stream.py`) where
the frontend is known to support it; elsewhere (nbconvert, papermill) they use this block too.

Secrets: the open widget shows its text only up to `SecretHoldBack.safe_end` (a tail that could
still become a secret waits), and a split never falls inside a secret.

Traffic per split (each is an iopub message carrying the whole state): the widgets share one
Layout and one style (`live_shared`: no LayoutModel/HTMLStyleModel `comm_open` per widget), and
they sit in group boxes of `GROUP_SIZE`, so a new widget re-sends one small `children` list rather
than the whole, ever-growing list of the block's container.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets

from ...redaction import EMPTY, Redactor
from .live_holdback import SecretHoldBack
from .live_shared import plain_html, plain_vbox
from .live_teardown import close_widgets_now
from .live_throttle import TEXT_INTERVAL_S, ThrottledSetter

Render = Callable[[str], str]
GROUP_SIZE = 8


class SplitTextBlock:
    """A growing text rendered into `container` (a Box) as a run of HTML widgets."""

    def __init__(
        self,
        container: widgets.Box,
        render: Render,
        *,
        boundary: str = "\n\n",
        chunk_chars: int = 2000,
        redactor: Redactor = EMPTY,
        holdback: SecretHoldBack | None = None,
        min_interval_s: float = TEXT_INTERVAL_S,
    ) -> None:
        self.container = container
        self.holdback = holdback or SecretHoldBack()
        self.min_interval_s = min_interval_s
        self.render = render
        self.boundary = boundary
        self.chunk_chars = chunk_chars
        self.redactor = redactor
        self.frozen: list[str] = []
        self.open_text = ""
        self.widgets: list[widgets.HTML] = []
        self.groups: list[widgets.VBox] = []
        self._setter: ThrottledSetter | None = None

    @property
    def text(self) -> str:
        return "".join(self.frozen) + self.open_text

    def _new_widget(self, value: str) -> None:
        """A fresh widget opened with `value` (its first update rides on the `comm_open`)."""
        widget = plain_html(value)
        self.widgets.append(widget)
        self._setter = ThrottledSetter(widget, min_interval_s=self.min_interval_s)
        self._setter.mark_sent()
        group = self.groups[-1] if self.groups else None
        children = self.container.children
        if group is None or len(group.children) >= GROUP_SIZE or not children or children[-1] is not group:
            # A fresh group (also when something else was added to the container after the last
            # one, e.g. an image in a tool card, so the order on the page stays the arrival order).
            group = plain_vbox([widget])
            self.groups.append(group)
            self.container.children = (*children, group)
        else:
            group.children = (*group.children, widget)

    def _split_point(self) -> int:
        """Index just after the last safe boundary in the shown part of the open text (or, with
        no boundary at all, `chunk_chars`), never inside a secret; -1 when there is none yet."""
        text = self.open_text
        limit = self.holdback.safe_end(text)
        index = text.rfind(self.boundary, 0, limit)
        while index > 0:
            cut = index + len(self.boundary)
            fenced = self.boundary == "\n\n" and text[:cut].count("```") % 2 == 1
            if not fenced and self._outside_secrets(cut):
                return cut
            index = text.rfind(self.boundary, 0, index)
        if self.boundary not in text and limit > self.chunk_chars:
            space = text.rfind(" ", 0, self.chunk_chars)  # a word boundary, if there is one
            cut = space + 1 if space >= self.chunk_chars // 2 else self.chunk_chars
            if self._outside_secrets(cut):
                return cut
        return -1

    def _outside_secrets(self, cut: int) -> bool:
        return self.holdback.cut_is_outside(self.open_text, cut)

    def append(self, delta: str) -> None:
        if not delta:
            return
        if self._setter is not None and self._overtaken():
            self._freeze_open()
        self.open_text += delta
        if self._setter is None:
            self._new_widget(self._render_open())
        else:
            self._setter.set_lazy(self._next_value)

    def _overtaken(self) -> bool:
        """Something else (an image in a tool card) was added to the container after the open
        widget's group: new text must go below it, in a fresh widget."""
        children = self.container.children
        return not children or children[-1] is not self.groups[-1]

    def _freeze_open(self) -> None:
        assert self._setter is not None
        self._setter.set(self._render_all())
        self._setter.flush()
        self.frozen.append(self.open_text)
        self.open_text, self._setter = "", None

    def _next_value(self) -> str:
        """The open widget's value at its next send slot. Once the open text has outgrown
        `chunk_chars`, that slot is the split: the widget gets its head, final, and the rest
        opens a fresh widget, so the head is sent once rather than as an update and again as
        the split (a split also keeps to the widget's update rate: 3 messages, not 1)."""
        if len(self.open_text) > self.chunk_chars:
            cut = self._split_point()
            if cut > 0:
                head, self.open_text = self.open_text[:cut], self.open_text[cut:]
                self.frozen.append(head)
                self._setter = None
                if self.open_text:
                    self._new_widget(self._render_open())
                return self.render(self.redactor.text(head))
        return self._render_open()

    def _render_open(self) -> str:
        return self.render(self.redactor.text(self.open_text[: self.holdback.safe_end(self.open_text)]))

    def replace(self, text: str) -> None:
        """Make the block show exactly `text` (used when the complete message disagrees)."""
        if text == self.text:
            return
        self.container.children = tuple(c for c in self.container.children if c not in self.groups)
        close_widgets_now(self.groups)  # off the page: the paced teardown would not find them
        self.frozen, self.open_text, self.widgets, self.groups, self._setter = [], "", [], [], None
        self.append(text)

    def flush(self) -> None:
        """Send the pending value; the block ended, so the held-back tail (if any) goes too."""
        if self._setter is not None:
            if self.holdback.safe_end(self.open_text) < len(self.open_text):
                self._setter.set_lazy(self._render_all)
            self._setter.flush()

    def _render_all(self) -> str:
        return self.render(self.redactor.text(self.open_text))
