"""What `read_notebook` answers, bounded whatever the notebook's size (docs/notebook-tools.md
"Reading a large notebook").

Owns the choice between the whole notebook (a small one), a compact outline (a large one: one
line per cell — index, short id, type, first line, outputs' kind and size, the running cell
marked) and the full cells asked for (`start`/`end` or ids), each answer held to a character
budget that says what it left out and which call gets it. Owns the short cell ids the outline
shows and their resolution back to full ids (`resolve_cell_id`). How one cell reads in full is
cell_outputs.py's; fetching the cells (bridge or saved file) is the tool's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..kernel_shapes import JsonObject
from .cell_outputs import IMAGE_TYPES, TRANSCRIPT_MIME, CellsText, cell_text

ANSWER_BUDGET = 15_000  # characters of any read_notebook answer (the tool's own cap is 32,000)
WHOLE_NOTEBOOK_MAX = 6_000  # a notebook whose full text fits this is answered in full
FIRST_LINE_CHARS = 60
MIN_FIRST_LINE_CHARS = 32
SHORT_ID_CHARS = 8
KEEP_HEAD = 5  # when the outline must drop cells: the first ones, and those around the running cell
KEEP_AFTER_RUNNING = 5
ELISION_LINE_CHARS = 110


@dataclass
class NotebookAnswer:
    text: str = ""
    images: list[str] = field(default_factory=list)


def short_ids(cells: Iterable[JsonObject]) -> dict[str, str]:
    """Full id → the shortest prefix of at least SHORT_ID_CHARS characters unique in `cells`."""
    ids = [str(c.get("id") or "") for c in cells if c.get("id")]
    out: dict[str, str] = {}
    for cell_id in ids:
        size = SHORT_ID_CHARS
        while size < len(cell_id) and sum(1 for other in ids if other.startswith(cell_id[:size])) > 1:
            size += 4
        out[cell_id] = cell_id[:size]
    return out


def resolve_cell_id(cell_id: str, known: Iterable[str]) -> str:
    """`cell_id` as given, or the one known full id it is a unique prefix of (the outline's short ids)."""
    ids = list(known)
    if cell_id in ids:
        return cell_id
    matches = [full for full in ids if full.startswith(cell_id)]
    return matches[0] if len(matches) == 1 else cell_id


def _size(chars: int) -> str:
    return f"{chars / 1000:.1f}k" if chars >= 1000 else str(chars)


def _joined(value: object) -> str:
    return "".join(str(v) for v in value) if isinstance(value, list) else str(value or "")


def outputs_kind(outputs: object) -> str:
    """The outputs of one cell in a few words: kinds and sizes, an error's type."""
    parts: list[str] = []
    text_chars = 0
    for output in outputs if isinstance(outputs, list) else []:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "error":
            parts.append(f"error {output.get('ename', 'Error')}")
        elif kind == "stream":
            text_chars += len(_joined(output.get("text")))
        elif kind in ("display_data", "execute_result"):
            raw = output.get("data")
            data: JsonObject = raw if isinstance(raw, dict) else {}
            image = next((m.split("/")[1] for m in IMAGE_TYPES if m in data), None)
            if TRANSCRIPT_MIME in data:
                parts.append("penguin transcript")
            elif image:
                parts.append(image)
            elif "text/html" in data:
                parts.append(f"html {_size(len(_joined(data['text/html'])))}")
            else:
                text_chars += len(_joined(data.get("text/plain") or data.get("text/markdown")))
    if text_chars:
        parts.insert(0, f"text {_size(text_chars)}")
    return ", ".join(parts)


def outline_line(cell: JsonObject, short: dict[str, str], running_cell_id: str | None, width: int) -> str:
    cell_type = str(cell.get("cell_type", "code"))
    cell_id = str(cell.get("id") or "")
    source = _joined(cell.get("source")).strip()
    first, _, rest = source.partition("\n")
    lines = source.count("\n") + 1 if source else 0
    if first.startswith("%%") and rest.strip():  # a cell magic: its first line says little
        first, lines = first + " " + rest.strip().split("\n", 1)[0], lines - 1
    if len(first) > width:
        first = first[: width - 1] + "…"
    line = f"{cell.get('index', '?')} {short.get(cell_id, cell_id or '-')} {cell_type}"
    if cell_type == "code":
        count = cell.get("execution_count")
        line += f" [{count if count is not None else ' '}]"
    line += f" {first!r}" + (f" +{lines - 1} lines" if lines > 1 else "")
    kinds = outputs_kind(cell.get("outputs") or []) if cell_type == "code" else ""
    if kinds:
        line += f" → {kinds}"
    if running_cell_id and cell_id == running_cell_id:
        line += " ◀ the running %%penguin cell (this Task)"
    return line


def _outline_lines(cells: list[JsonObject], running_cell_id: str | None, room: int) -> list[str]:
    """One line per cell within `room` characters: first lines shortened, then (still too long)
    the cells far above the running cell (or in the middle) replaced by one line saying how to read them."""
    short = short_ids(cells)
    width = FIRST_LINE_CHARS
    while True:
        lines = [outline_line(c, short, running_cell_id, width) for c in cells]
        if sum(len(line) + 1 for line in lines) <= room or width <= MIN_FIRST_LINE_CHARS:
            break
        width = max(MIN_FIRST_LINE_CHARS, width - 8)
    if sum(len(line) + 1 for line in lines) <= room:
        return lines
    found = [i for i, c in enumerate(cells) if running_cell_id and c.get("id") == running_cell_id]
    running = found[0] if found else len(cells) - 1
    keep_head = min(KEEP_HEAD, len(lines))
    used = sum(len(line) + 1 for line in lines[:keep_head]) + 2 * ELISION_LINE_CHARS
    begin = end = max(keep_head, running)
    # The running cell and a few after it, then the cells just above it, then what follows.
    while end < len(lines) and end <= running + KEEP_AFTER_RUNNING and used + len(lines[end]) + 1 <= room:
        used += len(lines[end]) + 1
        end += 1
    while begin > keep_head and used + len(lines[begin - 1]) + 1 <= room:
        begin -= 1
        used += len(lines[begin]) + 1
    while end < len(lines) and used + len(lines[end]) + 1 <= room:
        used += len(lines[end]) + 1
        end += 1
    out = lines[:keep_head]
    if begin > keep_head:
        first, last = cells[keep_head].get("index", keep_head), cells[begin - 1].get("index", begin - 1)
        out.append(f"… cells {first}–{last} ({begin - keep_head} cells) not listed: read_notebook start={first} end={last + 1 if isinstance(last, int) else begin}")
    out.extend(lines[begin:end])
    if end < len(cells):
        first = cells[end].get("index", end)
        out.append(f"… cells {first}–{cells[-1].get('index', len(cells) - 1)} ({len(cells) - end} cells) not listed: read_notebook start={first}")
    return out


def outline(cells: list[JsonObject], running_cell_id: str | None, head: str, budget: int = ANSWER_BUDGET) -> str:
    intro = (
        f"{head}\nOne line per cell: index, id (short; every notebook tool takes it), type, "
        "[execution count], first line, outputs. For full source and outputs call read_notebook with "
        "start/end (cell indexes, end exclusive) or cell_ids."
    )
    lines = _outline_lines(cells, running_cell_id, budget - len(intro) - 2)
    return intro + "\n\n" + "\n".join(lines)


def full_cells(
    cells: list[JsonObject], running_cell_id: str | None, head: str, budget: int = ANSWER_BUDGET
) -> NotebookAnswer:
    """`cells` in full (cell_outputs.py's form) while they fit `budget`; the rest named, with the call that reads them."""
    result = CellsText()
    parts: list[str] = []
    used = len(head) + 2
    left_out: list[JsonObject] = []
    for cell in cells:
        if left_out:
            left_out.append(cell)
            continue
        before = (len(result.images), result.images_dropped)
        text = cell_text(cell, result, running_cell_id)
        if parts and used + len(text) + 2 > budget - 200:
            del result.images[before[0] :]
            result.images_dropped = before[1]
            left_out.append(cell)
            continue
        parts.append(text)
        used += len(text) + 2
    text = head + ("\n\n" + "\n\n".join(parts) if parts else "")
    if left_out:
        indexes = [c.get("index") for c in left_out]
        numbers = [i for i in indexes if isinstance(i, int)]
        consecutive = len(numbers) == len(indexes) and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        how = (
            f"read_notebook start={numbers[0]} end={numbers[-1] + 1}"
            if consecutive
            else "read_notebook cell_ids=[…] for the ones you need"
        )
        text += f"\n\n[{len(left_out)} more cells not shown (each answer is bounded to {budget:,} characters): {how}]"
    return NotebookAnswer(text, result.images)


def notebook_answer(
    cells: list[JsonObject],
    running_cell_id: str | None,
    *,
    note: str = "",
    start: int | None = None,
    end: int | None = None,
    cell_ids: list[str] | None = None,
    budget: int = ANSWER_BUDGET,
) -> NotebookAnswer:
    """read_notebook's answer: the asked cells in full, else the whole notebook when it is small,
    else the outline."""
    total = len(cells)
    if cell_ids:
        known = [str(c.get("id") or "") for c in cells]
        wanted = [resolve_cell_id(i, known) for i in cell_ids]
        chosen = [c for c in cells if c.get("id") in wanted]
        missing = [i for i, full in zip(cell_ids, wanted, strict=True) if full not in known]
        head = f"{len(chosen)} of {total} cells {note}".rstrip()
        if missing:
            head += "\nNo cell with id " + ", ".join(missing) + " (read_notebook without arguments lists the ids)."
        return full_cells(chosen, running_cell_id, head, budget)
    if start is not None or end is not None:
        chosen = cells[start or 0 : end if end is not None else total]
        return full_cells(chosen, running_cell_id, f"{len(chosen)} of {total} cells {note}".rstrip(), budget)
    head = f"{total} of {total} cells {note}".rstrip()
    whole = full_cells(cells, running_cell_id, head, budget)
    if len(whole.text) <= WHOLE_NOTEBOOK_MAX and "more cells not shown" not in whole.text:
        return whole
    return NotebookAnswer(outline(cells, running_cell_id, f"Outline of the {total} cells {note}".rstrip(), budget))
