"""Streamed text blocks for the live view: each update carries only the new text.

Owns `StreamTextBlock` (assistant text and thinking while they stream) and the kernel-wide
capture of the `Output` widget that receives them. An ipywidgets `Output` whose `msg_id` is the
cell's request id takes every output message of that request into itself (the frontend does
this; no custom JavaScript). So a block is one `Output`, and each throttled update is one iopub
`stream` message holding only the text added since the last one: the live cost is the text once
plus one small envelope per update, whatever the text's shape (a 100 KB paragraph or code block
costs what 100 KB of short paragraphs cost). The text shows as plain text while it streams; once
the block is finished and the Task goes on (a tool call follows), `show_rendered` swaps in the
rendered Markdown, sent once; the static transcript that replaces the live view at the end
renders everything (docs/notebook-streaming.md).

Only one `Output` can capture at a time, so the capture moves to the block that writes and is
released when a block ends (`flush`), before the cell's final display update. It is used only
where the frontend is known to capture (`streaming_available`) and the kernel's stream sender
is there (`seams.kernel.KernelStream`, a seam: ipykernel's display publisher's session and
socket); the live view falls back to split HTML widgets elsewhere.

Traffic the other way: a widget frontend answers every captured message by syncing the
`Output`'s whole `outputs` (the text so far) back to the kernel. The kernel does not echo that
back on iopub (`StreamOutput.outputs` has `echo_update=False`), and a block moves on to a fresh
`Output` once the text synced back for the current one exceeds `SEGMENT_SYNC_FACTOR` times its
length (about every 200 updates, preferably at a line break), so that upstream traffic stays
linear in the text too.

Secrets: the shown part of the text stops before any tail that could still become a secret
(`live_holdback.SecretHoldBack`) and goes through the `Redactor`; the rest follows when it is known.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import ipywidgets as widgets
from ipywidgets.widgets.trait_types import TypedTuple
from traitlets import Dict

from ...redaction import EMPTY, Redactor
from ...seams.kernel import KernelStream
from .live_holdback import SecretHoldBack
from .live_shared import plain_html, shared_layout
from .live_throttle import TEXT_INTERVAL_S, ThrottledSetter

Publish = Callable[[str], None]
# `PENGUIN_LIVE_TEXT=stream` / `=widgets` forces the choice `streaming_available` makes.
MODE_VARIABLE = "PENGUIN_LIVE_TEXT"
# A block's current `Output` is replaced by a fresh one once the frontend could have synced back
# more than this many times its text (the sum of its sizes after each update): after ~2x this
# many updates, ~20 s of continuous streaming. (JupyterLab's widget manager keeps one sync in
# flight and coalesces the rest, so the real upstream is far below this bound; each new segment
# costs ~3 KB of iopub: its open, the capture moving, the container's children, its close.)
SEGMENT_SYNC_FACTOR = 100
# Streamed text updates at 10 a second while short; beyond GROWTH_FREE_CHARS an update waits
# until the new text is GROWTH_SHARE of the whole (or TEXT_MAX_INTERVAL_S passed).
GROWTH_FREE_CHARS = 2_000
GROWTH_SHARE = 0.05


class StreamOutput(widgets.Output):
    """The core `Output` widget (same model, same view) whose `outputs`, synced from the frontend
    after each captured message, are not echoed back on iopub: the frontend that sent them has
    them, and echoing the whole text at every update would make the live cost quadratic again."""

    outputs = TypedTuple(trait=Dict(), help="The output messages synced from the frontend.").tag(
        sync=True, echo_update=False
    )


def streaming_available(environ: Mapping[str, str] | None = None) -> bool:
    """Whether text blocks stream into `Output` widgets here: in an ipykernel whose frontend is
    known to capture into them — started by jupyter_server (JupyterLab, Notebook 7: it sets
    `JPY_SESSION_NAME` / `__session__`) or VS Code (`__vsc_ipynb_file__`). Elsewhere (nbclient /
    nbconvert / papermill, plain jupyter_client) the live text uses split HTML widgets instead:
    nbclient's `Output` mimic fails on every captured message when it runs with
    `store_widget_state=False`, and nobody watches a headless run anyway."""
    env = os.environ if environ is None else environ
    forced = env.get(MODE_VARIABLE, "").strip().lower()
    if forced in ("stream", "widgets"):
        return forced == "stream"  # (without a kernel the text goes into the widget's own state)
    if KernelStream.find() is None:
        return False
    if env.get("JPY_SESSION_NAME"):
        return True
    try:
        from IPython import get_ipython

        namespace = getattr(get_ipython(), "user_ns", None) or {}
    except ImportError:
        return False
    return bool(namespace.get("__session__") or namespace.get("__vsc_ipynb_file__"))


class _Capture:
    """Which `Output` holds the kernel's capture now (one at a time for the whole kernel)."""

    holder: widgets.Output | None = None

    @classmethod
    def take(cls, output: widgets.Output, parent_id: str) -> None:
        current = cls.holder
        if current is not None and current is not output:
            cls.release(current)
        if output.msg_id != parent_id:
            output.msg_id = parent_id
        cls.holder = output

    @classmethod
    def release(cls, output: widgets.Output) -> None:
        holder = cls.holder
        if holder is None or holder is not output:
            return
        cls.holder = None
        if holder.comm is not None:
            holder.msg_id = ""


class _Sink:
    """What the throttle sets: assigning `value` publishes that chunk (when not empty)."""

    def __init__(self, publish: Publish) -> None:
        self._publish = publish

    @property
    def value(self) -> str:
        return ""

    @value.setter
    def value(self, chunk: str) -> None:
        if chunk:
            self._publish(chunk)


class StreamTextBlock:
    """A growing text shown in `container` as one `Output` receiving appended stream text."""

    def __init__(
        self,
        container: widgets.Box,
        *,
        redactor: Redactor = EMPTY,
        holdback: SecretHoldBack | None = None,
        min_interval_s: float = TEXT_INTERVAL_S,
    ) -> None:
        self.container = container
        self.redactor = redactor
        self.holdback = holdback or SecretHoldBack()
        self.output = StreamOutput(layout=shared_layout())  # the current segment
        self.segments: list[StreamOutput] = [self.output]
        container.children = (*container.children, self.output)
        self._segment_chars = 0  # text published into the current segment
        self._segment_synced = 0  # what the frontend synced back for it: the sum of its sizes
        self.raw = ""
        self.shown = 0  # characters of `raw` already published
        self.sent: list[str] = []  # the published (redacted) chunks, in order
        self.rendered: widgets.HTML | None = None  # the finished text, rendered (`show_rendered`)
        self._kernel = KernelStream.find()
        self._setter = ThrottledSetter(_Sink(self._publish), min_interval_s=min_interval_s, ready=self._worth_sending)

    @property
    def text(self) -> str:
        return self.raw

    def append(self, delta: str) -> None:
        if not delta:
            return
        self.raw += delta
        self._setter.set_lazy(self._next_chunk)

    def _worth_sending(self) -> bool:
        """A short text updates at the full rate; a long one once what is new is a GROWTH_SHARE of
        it (else at the throttle's longest interval): the count of updates grows with the log of
        the text's length, not with how long it streams."""
        return len(self.raw) <= GROWTH_FREE_CHARS or len(self.raw) - self.shown >= len(self.raw) * GROWTH_SHARE

    def _next_chunk(self, final: bool = False) -> str:
        """The redacted text from the last published point to the safe end (the end when final)."""
        end = len(self.raw) if final else self.holdback.safe_end(self.raw, self.shown)
        chunk, self.shown = self.raw[self.shown : end], end
        return self.redactor.text(chunk) if chunk else ""

    def _publish(self, chunk: str) -> None:
        self.sent.append(chunk)
        due = self._segment_chars and self._segment_synced > SEGMENT_SYNC_FACTOR * self._segment_chars
        if due:
            overdue = self._segment_synced > 2 * SEGMENT_SYNC_FACTOR * self._segment_chars
            cut = chunk.rfind("\n") + 1 or (chunk.rfind(" ") + 1 if overdue else 0)
            if cut or overdue:
                if chunk[:cut]:
                    self._send_to_segment(chunk[:cut])
                self._new_segment()
                chunk = chunk[cut:]
        if chunk:
            self._send_to_segment(chunk)

    def _new_segment(self) -> None:
        """Continue in a fresh `Output` placed right after the current one."""
        _Capture.release(self.output)
        previous, self.output = self.output, StreamOutput(layout=shared_layout())
        self.segments.append(self.output)
        children = list(self.container.children)
        at = children.index(previous) + 1 if previous in children else len(children)
        children.insert(at, self.output)
        self.container.children = tuple(children)
        self._segment_chars = self._segment_synced = 0

    def _send_to_segment(self, chunk: str) -> None:
        self._segment_chars += len(chunk)
        self._segment_synced += self._segment_chars
        if self._kernel is not None:
            _Capture.take(self.output, self._kernel.parent_id())
            self._kernel.send(chunk)
        else:  # no kernel (unit tests, other hosts): the widget's own state holds the text
            self.output.append_stdout(chunk)

    def replace(self, text: str) -> None:
        """Make the block show exactly `text` (the complete message). Normally it extends what
        streamed; if it disagrees, the output is cleared and the text sent again."""
        if text == self.raw:
            return
        if text.startswith(self.raw):
            self.append(text[len(self.raw) :])
            return
        self._setter.flush()
        _Capture.release(self.output)
        first, *rest = self.segments
        if rest:
            self.container.children = tuple(c for c in self.container.children if c not in rest)
            for segment in rest:
                segment.close()
        if self.shown and self._kernel is not None:
            first.clear_output()  # (captures and releases by itself)
        elif self.shown:
            first.outputs = ()
        self.output, self.segments = first, [first]
        self.raw, self.shown, self.sent = "", 0, []
        self._segment_chars = self._segment_synced = 0
        self.append(text)

    def show_rendered(self, render: Callable[[str], str], max_chars: int) -> bool:
        """Put the finished text, rendered (`render` of the redacted text), in place of the
        streamed plain text: one HTML widget, sent once. Skipped (False) for a text longer than
        `max_chars` or a block no longer on display."""
        children = self.container.children
        if len(self.raw) > max_chars or self.segments[0] not in children:
            return False
        self.flush()
        widget = plain_html(render(self.redactor.text(self.raw)))
        first = self.segments[0]
        self.container.children = tuple(
            widget if child is first else child for child in children if child not in self.segments[1:]
        )
        for segment in self.segments:
            segment.close()  # off the page now; the paced teardown would no longer find them
        self.rendered = widget
        return True

    def flush(self) -> None:
        """Send everything still held (the block ended: no tail can grow into a secret any more)
        and give up the capture."""
        self._setter.flush()
        chunk = self._next_chunk(final=True)
        if chunk:
            self._publish(chunk)
        _Capture.release(self.output)
