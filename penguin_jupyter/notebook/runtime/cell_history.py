"""The cell you mean: which cell is running and what the cell before it did, from the kernel's own
history (docs/notebook-tools.md "The cell you mean").

Owns `previous_cell_text` (the cell executed just before the running one: its source as typed,
its result's repr or its error's type, message and last traceback lines — IPython's
`input_hist_raw`, `Out` and stored exceptions, so no frontend is needed) and
`task_context` (the block added to the model's first request of a Task: the running cell's
execution count and id, and that previous cell as `quoted_data`, so nothing in it — a CSV value
quoted in an error, a fake `[/notebook_context]` — can end the block). Both are bounded. The cells of the notebook by
id come from the bridge or the saved file (notebook_cells.py / link/notebook_file.py).
"""

from __future__ import annotations

import re
import traceback

from ...omni.markers import marker_block, quoted_data

PREVIOUS_CELL_MAX = 3_000  # characters of one expanded cell
SOURCE_MAX = 1_500
RESULT_MAX = 800
TRACEBACK_LINES = 8
NOTEBOOK_CONTEXT = "notebook_context"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def running_count(shell: object) -> int | None:
    """The execution count of the cell running now (IPython counted it when it started)."""
    count = getattr(shell, "execution_count", None)
    return count - 1 if isinstance(count, int) and count > 1 else None


def _raw_source(shell: object, count: int) -> str | None:
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if isinstance(history, list) and 0 < count < len(history):
        return str(history[count])
    inputs = getattr(shell, "user_ns", {}).get("In")
    return str(inputs[count]) if isinstance(inputs, list) and 0 < count < len(inputs) else None


def _error(shell: object, count: int) -> str | None:
    """`Type: message` and the last traceback lines of the error cell `count` raised, if it did."""
    stored = getattr(getattr(shell, "history_manager", None), "exceptions", None)
    found = stored.get(count) if isinstance(stored, dict) else None
    if isinstance(found, dict):
        head = f"{found.get('ename', 'Error')}: {found.get('evalue', '')}".rstrip()
        frames = [_ANSI.sub("", str(line)) for line in found.get("traceback") or []]
    else:
        last = getattr(shell, "last_execution_result", None)
        exc = getattr(last, "error_in_exec", None) or getattr(last, "error_before_exec", None)
        if exc is None or getattr(last, "execution_count", None) != count:
            return None
        head = f"{type(exc).__name__}: {exc}".rstrip()
        frames = traceback.format_exception(exc)
    lines = "\n".join(frames).splitlines()
    tail = [line for line in lines if line.strip()][-TRACEBACK_LINES:]
    return head + ("\ntraceback (last lines):\n" + "\n".join(tail) if tail else "")


def plain_cell_id(value: object) -> str | None:
    """A cell id as the harness writes it into a prompt: nbformat's shape (letters, digits, `-`,
    `_`, at most 64) or nothing — an id comes from a notebook a stranger may have written."""
    return value if isinstance(value, str) and _CELL_ID.fullmatch(value) else None


def _cell_id(shell: object, count: int) -> str | None:
    last = getattr(shell, "last_execution_result", None)
    if getattr(last, "execution_count", None) != count:
        return None
    return plain_cell_id(getattr(getattr(last, "info", None), "cell_id", None))


def previous_cell_text(shell: object) -> str | None:
    """The cell executed just before the running one, bounded; None when there is none."""
    running = running_count(shell)
    if running is None or running < 2:
        return None
    count = running - 1
    source = _raw_source(shell, count)
    if source is None:
        return None
    cell_id = _cell_id(shell, count)
    head = f"cell [{count}]" + (f" · id {cell_id}" if cell_id else "")
    parts = [f"{head}\n```python\n{_cut(source.strip(), SOURCE_MAX)}\n```"]
    error = _error(shell, count)
    outputs = getattr(shell, "user_ns", {}).get("Out")
    if error:
        parts.append("raised " + error)
    elif isinstance(outputs, dict) and count in outputs:
        try:
            shown = repr(outputs[count])
        except Exception as exc:  # a broken __repr__ says so, it does not stop the cell
            shown = f"<repr failed: {type(exc).__name__}>"
        parts.append("result: " + _cut(shown, RESULT_MAX))
    else:
        parts.append("it ran without error and returned no value (what it printed is not kept by the kernel)")
    return _cut("\n".join(parts), PREVIOUS_CELL_MAX)


def task_context(shell: object, running_cell_id: str | None) -> str:
    """The block the model gets with a Task's prompt: which cell runs, which ran before it."""
    running = running_count(shell)
    shown_id = plain_cell_id(running_cell_id)
    lines = [
        "The user wrote this in the running %%penguin cell"
        + (f" [{running}]" if running else "")
        + (f" (id {shown_id})" if shown_id else "")
        + ". \"This\", \"above\" or \"the error\" most likely mean the cell executed just before it"
        + " (quoted, each line after `| `):"
    ]
    previous = previous_cell_text(shell)
    lines.append(quoted_data(previous) if previous else "(no cell ran before it in this kernel)")
    return marker_block(NOTEBOOK_CONTEXT, "\n".join(lines))
