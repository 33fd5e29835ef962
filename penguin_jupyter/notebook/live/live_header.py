"""The live header: model pair, workspace, session id, approval mode, whether the kernel is
sandboxed, Stop button, usage.

Owns the header widgets only; what Stop does is the runner's callback.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

import ipywidgets as widgets

from ..transcript.transcript_model import session_label
from .live_shared import plain_button, plain_hbox, plain_html, shared_layout
from .live_throttle import ThrottledSetter


def usage_text(session_total: int, request_total: int, output: int) -> str:
    return f"tokens: {session_total} total, last request {request_total} ({output} out)"


class HeaderWidget:
    def __init__(self, info: Mapping[str, str], on_stop: Callable[[], None]) -> None:
        self.info = info
        self.label = plain_html(self._label_html())
        self.usage = plain_html()
        self.cost = plain_html()
        self.status = plain_html("<i>running…</i>")
        self.stop_button = plain_button("Stop", button_style="warning", icon="stop")
        self.stop_button.on_click(lambda _b: on_stop())
        self._usage_setter = ThrottledSetter(self.usage)
        self._cost_setter = ThrottledSetter(self.cost)
        self.widget = widgets.VBox(
            [plain_hbox([self.label, self.stop_button]), plain_hbox([self.status, self.usage, self.cost])],
            layout=shared_layout(border_bottom="1px solid #d0d7de", margin="0 0 4px 0"),
        )

    def _label_html(self) -> str:
        i = self.info
        parts = [
            f"<b>{html.escape(str(i.get('provider', '?')))}/{html.escape(str(i.get('model_id', '?')))}</b>",
            f"workspace <code>{html.escape(str(i.get('workspace', '')))}</code>",
            f"<code>{html.escape(session_label(i.get('session_id', '')))}</code>",
            f"approve: {html.escape(str(i.get('approval_mode', '')))}",
        ]
        if i.get("kernel"):  # "sandboxed": the kernel runs in the penguin sandbox
            parts.append(f"<b>kernel: {html.escape(str(i['kernel']))}</b>")
        return " · ".join(parts)

    def set_usage(self, text: str) -> None:
        self._usage_setter.set(f'<span style="font-size:12px"> · {html.escape(text)}</span>')

    def set_cost(self, text: str) -> None:
        """`cost: $0.0123 this Task · $0.45 session` (transcript/cost_line.py), after each request."""
        self._cost_setter.set(f'<span style="font-size:12px"> · {html.escape(text)}</span>' if text else "")

    def set_status(self, text: str) -> None:
        self.status.value = f"<i>{html.escape(text)}</i>"

    def finish(self, text: str) -> None:
        self._usage_setter.flush()
        self._cost_setter.flush()
        self.stop_button.disabled = True
        self.set_status(text)
