"""How notebook cells read to the model: one bounded text per cell, images kept as images.

Owns the formatting shared by `read_notebook` and `run_cell`: a header line per cell (index, id,
type, execution count, whether it is the running `%%penguin` cell), its source, and its outputs
summarized — text cut to a budget, errors as `ename: evalue` plus the last lines of the traceback
without terminal colours, images as data URLs handed back beside the text, penguin transcripts as
one line. Fetching cells (bridge or saved file) is left to the tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TEXT_PER_CELL = 2_000
SOURCE_PER_CELL = 6_000
TRACEBACK_LINES = 12
MAX_IMAGES = 4
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class CellsText:
    """The text for the model and the images found (at most MAX_IMAGES, in cell order)."""

    text: str = ""
    images: list[str] = field(default_factory=list)
    images_dropped: int = 0


def _join(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return "" if value is None else str(value)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more chars]"


def error_text(output: dict[str, object]) -> str:
    """`ename: evalue` and the last traceback lines, colours stripped."""
    head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip()
    traceback = output.get("traceback")
    frames = [_ANSI.sub("", str(line)) for line in traceback] if isinstance(traceback, list) else []
    lines = "\n".join(frames).splitlines()
    tail = lines[-TRACEBACK_LINES:]
    dropped = len(lines) - len(tail)
    body = ("… [traceback trimmed]\n" if dropped > 0 else "") + "\n".join(tail)
    return head + ("\n" + body if body.strip() else "")


def _transcript_line(data: dict[str, object]) -> str:
    bundle = data.get(TRANSCRIPT_MIME)
    status = bundle.get("status", "?") if isinstance(bundle, dict) else "?"
    return f"[penguin transcript of a Task ({status})]"


def _rich_output(data: dict[str, object], result: CellsText) -> str:
    if TRANSCRIPT_MIME in data:
        return _transcript_line(data)
    for mime in IMAGE_TYPES:
        if mime in data:
            if len(result.images) < MAX_IMAGES:
                result.images.append(f"data:{mime};base64,{_join(data[mime]).strip()}")
                return f"[image {len(result.images)}: {mime}]"
            result.images_dropped += 1
            return f"[{mime} image not attached: at most {MAX_IMAGES} per call]"
    for mime in ("text/markdown", "text/plain"):
        if mime in data:
            return _join(data[mime])
    if "text/html" in data:
        return f"[html output, {len(_join(data['text/html']))} chars]"
    kinds = ", ".join(sorted(data)) or "nothing"
    return f"[output of type {kinds}]"


def outputs_text(outputs: list[object], result: CellsText) -> str:
    """All outputs of one cell as one text: printed and plain text share a budget of
    TEXT_PER_CELL characters; errors, image markers and transcript lines are always kept."""
    parts: list[str] = []
    left = TEXT_PER_CELL
    for output in outputs or []:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "error":
            parts.append(error_text(output))
            continue
        if kind == "stream":
            text = _join(output.get("text"))
        elif kind in ("display_data", "execute_result"):
            data = output.get("data")
            text = _rich_output(data if isinstance(data, dict) else {}, result)
            if text.startswith("[") and text.endswith("]"):  # a marker, not content
                parts.append(text)
                continue
        else:
            continue
        if left > 0:
            parts.append(_cut(text, left))
            left -= min(len(text), left)
        elif text:
            parts.append(f"[{len(text)} more chars of output not shown]")
    return "\n".join(part.rstrip("\n") for part in parts if part)


def cell_text(cell: dict[str, object], result: CellsText, running_cell_id: str | None) -> str:
    """One cell: header, fenced source, outputs."""
    cell_type = str(cell.get("cell_type", "code"))
    header = f"### cell {cell.get('index', '?')} · id {cell.get('id', '?')} · {cell_type}"
    count = cell.get("execution_count")
    if cell_type == "code":
        header += f" · [{count if count is not None else ' '}]"
    if running_cell_id and cell.get("id") == running_cell_id:
        header += " · the running %%penguin cell (this Task)"
    source = _cut(_join(cell.get("source")), SOURCE_PER_CELL)
    fence = "```python" if cell_type == "code" else "```markdown" if cell_type == "markdown" else "```"
    text = f"{header}\n{fence}\n{source}\n```"
    raw_outputs = cell.get("outputs")
    listed = raw_outputs if isinstance(raw_outputs, list) else []
    outputs = outputs_text(listed, result) if cell_type == "code" else ""
    if outputs:
        text += f"\noutputs:\n{outputs}"
    return text


def cells_text(cells: list[dict[str, object]], running_cell_id: str | None) -> CellsText:
    result = CellsText()
    result.text = "\n\n".join(cell_text(cell, result, running_cell_id) for cell in cells)
    return result
