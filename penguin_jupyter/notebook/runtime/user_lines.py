"""The one way the notebook tells the user a line outside a cell's live view
(docs/notebook-runtime.md "Lines for the user").

Owns `tell(text)`: the line goes to the running cell's stderr stream, which the kernel sends to
the notebook as that cell's own output (shown in red, saved with the notebook). It is for what
the user must act on — a cell that did not start, a line command's error, a problem noticed
during a Task. And `inform(text)`: a line that is information, not a problem (the replay notice
"the model was not called", a `.env` read, a resumed session, the model a key selected), shown
as a plain-text output of its own in the notebook's normal text colour, never on stderr
(issue 39: info notes rendered as red error boxes). Both are published through the kernel's
sink while one is open, so they are redacted like the rest of the cell. Diagnostics are neither
told nor informed: they go through `logging`. What to say (and redacting it) is the caller's.
Imports nothing at load, so `%load_ext` stays light.
"""

from __future__ import annotations

import sys


def tell(text: str) -> None:
    """Show `text` (one line) under the running cell."""
    sys.stderr.write(f"{text}\n")


def inform(text: str) -> None:
    """Show `text` (information, one or a few lines) under the running cell, not as an error."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:  # no kernel (a plain script): stdout
        sys.stdout.write(f"{text}\n")
        return
    display({"text/plain": text}, raw=True)
