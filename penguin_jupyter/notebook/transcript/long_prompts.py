"""Long user messages: what a transcript keeps of them and where they fold.

Owns `saved_user_text` (a user message longer than `MAX_SAVED_USER_CHARS` is kept as its head
and one line saying how much is left out: the cell's source and the session's trace hold it
whole, so a saved notebook does not carry a big prompt three times — issue 39 measured a 1 MB
prompt making a 3 MB .ipynb) and `fold` (the head shown and the rest behind "… N more lines",
as long tool output folds). The bundle (transcript_bundle.py), the HTML (transcript_html.py) and
the live view (live/live_view.py) use them; the labextension reads the cut bundle as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_SAVED_USER_CHARS = 6_000
FOLD_HEAD_LINES = 12
FOLD_HEAD_CHARS = 1_500


def left_out_line(count: int) -> str:
    return (
        f"[… {count:,} more characters of this prompt are not kept in the transcript: "
        "the cell's source and the session's trace hold it whole]"
    )


def saved_user_text(text: str) -> str:
    """`text`, or its first `MAX_SAVED_USER_CHARS` (cut at a line end when one is near) and the
    line saying how many characters are left out."""
    if len(text) <= MAX_SAVED_USER_CHARS:
        return text
    cut = text.rfind("\n", MAX_SAVED_USER_CHARS // 2, MAX_SAVED_USER_CHARS)
    cut = cut if cut > 0 else MAX_SAVED_USER_CHARS
    return f"{text[:cut].rstrip()}\n\n{left_out_line(len(text) - cut)}"


@dataclass(frozen=True)
class Folded:
    head: str
    rest: str  # empty: nothing folded

    @property
    def label(self) -> str:
        """`… 40 more lines` (or `… 98,500 more characters` for one long line)."""
        lines = self.rest.count("\n") + 1
        if lines > 1:
            return f"… {lines} more lines"
        return f"… {len(self.rest):,} more characters"


def fold(text: str) -> Folded:
    """The first `FOLD_HEAD_LINES` lines (at most `FOLD_HEAD_CHARS` characters) and the rest."""
    lines = text.split("\n")
    head = "\n".join(lines[:FOLD_HEAD_LINES])
    if len(head) > FOLD_HEAD_CHARS:
        head = head[:FOLD_HEAD_CHARS]
    if len(head) >= len(text):
        return Folded(text, "")
    rest = text[len(head) :]
    return Folded(head, rest[1:] if rest.startswith("\n") else rest)
