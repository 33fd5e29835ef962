"""CappedText: the unread child-text buffer of one managed subagent session.

Keeps the newest `cap` characters; `drain()` hands over everything unread, prefixed by a marker
counting what was dropped. Single-loop use (the pump and the tools share one event loop).
"""

from __future__ import annotations


class CappedText:
    def __init__(self, cap: int, drop_label: str) -> None:
        self._cap = cap
        self._drop_label = drop_label
        self._text = ""
        self._dropped = 0

    @property
    def empty(self) -> bool:
        return not self._text and self._dropped == 0

    def append(self, chunk: str) -> None:
        self._text += chunk
        excess = len(self._text) - self._cap
        if excess > 0:
            self._text = self._text[excess:]
            self._dropped += excess

    def drain(self) -> str:
        text, self._text = self._text, ""
        dropped, self._dropped = self._dropped, 0
        if dropped:
            return f"[... {dropped} chars of {self._drop_label} dropped ...]\n{text}"
        return text
