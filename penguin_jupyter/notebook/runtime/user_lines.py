"""The one way the notebook tells the user a line outside a cell's live view
(docs/notebook-runtime.md "Lines for the user").

Owns `tell(text)`: the line goes to the running cell's stderr stream, which the kernel sends to
the notebook as that cell's own output (shown in red, saved with the notebook). It is for what
the user must act on or know — a cell that did not start, a line command's error, a replay note,
a notice left at a Task's end. A Task's information lines (a `.env` read, a resumed session)
are not told: `cell.Cell.show_info` shows them above its live view. Diagnostics are not told
here either: they go through `logging`. What to say (and redacting it) is the caller's.
Imports nothing, so `%load_ext` stays light.
"""

from __future__ import annotations

import sys


def tell(text: str) -> None:
    """Show `text` (one line) under the running cell."""
    sys.stderr.write(f"{text}\n")
