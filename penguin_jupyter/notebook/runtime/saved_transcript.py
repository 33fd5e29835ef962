"""Showing a `%%penguin` cell's saved transcript again instead of asking the model.

Owns the cell-source form used to recognise an unchanged cell and the re-display of its saved
outputs (the transcript bundle with its HTML and text, plus any notes), with one line saying why
the model was not called. Deciding *whether* a cell qualifies is notebook_link.py's.
"""

from __future__ import annotations

import sys
from typing import Any

RERUN_LINE = (
    "penguin: this cell's Task already completed and its source is unchanged, so the model was not "
    "called; the saved transcript is shown. Use %%penguin --rerun (or edit the cell) to ask again."
)


def penguin_cell_source(line: str, body: str) -> str:
    """The cell as the notebook stores it: the magic line and the body."""
    return f"%%penguin {line}".rstrip() + "\n" + body


def show_saved_transcript(outputs: list[dict[str, Any]]) -> None:
    from IPython.display import display

    print(RERUN_LINE, file=sys.stderr)
    for output in outputs:
        kind = output.get("output_type")
        if kind in ("display_data", "execute_result") and isinstance(output.get("data"), dict):
            display(output["data"], raw=True, metadata=output.get("metadata") or None)
        elif kind == "stream" and output.get("name") == "stderr" and "already completed" not in str(output.get("text")):
            text = output.get("text")
            print("".join(text) if isinstance(text, list) else str(text or ""), end="", file=sys.stderr)
