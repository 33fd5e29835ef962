"""The notebook as saved on disk: where it is, its cells, and a cell's saved transcript.

Owns the fallbacks used when no frontend bridge is connected (nbconvert, papermill, VS Code, a
frontend without the extension) and the rule for "this cell is unchanged" (`normalize_cell_source`).
The "Run All reproduces" check reads the file through saved_notebook_cache.py (parsed once per
version of the file). The live notebook (unsaved edits included) is read through the bridge instead.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


class NotebookFileError(Exception):
    """The saved notebook could not be found or read; `str()` is one line."""


def notebook_file_path(user_ns: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """The .ipynb this kernel belongs to, when the host said (jupyter_server or VS Code)."""
    ns = user_ns or {}
    env = os.environ if environ is None else environ
    for candidate in (env.get("JPY_SESSION_NAME"), ns.get("__session__"), ns.get("__vsc_ipynb_file__")):
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            path = Path(candidate).expanduser()
            return str(path if path.is_absolute() else (Path.cwd() / path))
    return None


MAX_SCANNED_NOTEBOOKS = 50


def locate_notebook(directory: str, cell_source: str) -> str | None:
    """The .ipynb in `directory` holding a cell whose source is `cell_source` (newest first):
    how a kernel started by nbconvert or papermill, which are not told their notebook, finds it."""
    if not cell_source.strip():
        return None
    try:
        candidates = sorted(Path(directory).glob("*.ipynb"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    wanted = normalize_cell_source(cell_source)
    for path in candidates[:MAX_SCANNED_NOTEBOOKS]:
        try:
            cells = read_saved_cells(str(path))
        except NotebookFileError:
            continue
        if any(normalize_cell_source(str(cell.get("source", ""))) == wanted for cell in cells):
            return str(path)
    return None


def notebooks_holding_cell(directory: str, cell_id: str) -> list[str]:
    """The .ipynb files in `directory` (the newest MAX_SCANNED_NOTEBOOKS, none larger than
    MAX_NOTEBOOK_BYTES) whose text holds the cell id `cell_id` (a JSON string): how a kernel that
    was not told its notebook, and heard from no page, identifies it by the running cell. Only a
    candidate list — the caller parses them; copies of a notebook share their cell ids."""
    needle = json.dumps(cell_id).encode()
    try:
        candidates = sorted(Path(directory).glob("*.ipynb"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    found = []
    for path in candidates[:MAX_SCANNED_NOTEBOOKS]:
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_NOTEBOOK_BYTES:
                continue  # a FIFO or device named *.ipynb is never opened
            with open(path, "rb") as handle:
                if needle in handle.read(MAX_NOTEBOOK_BYTES):
                    found.append(str(path))
        except OSError:
            continue
    return found


def read_saved_cells(path: str) -> list[dict[str, object]]:
    """The saved cells with `index` added (nbformat 4 JSON, read without nbformat)."""
    try:
        if os.path.getsize(path) > MAX_NOTEBOOK_BYTES:
            raise NotebookFileError(f"the notebook file is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: {path}")
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise NotebookFileError(f"the notebook has not been saved yet: {path}") from None
    except (OSError, ValueError) as exc:
        raise NotebookFileError(f"cannot read the notebook file {path}: {exc}") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookFileError(f"{path} is not a notebook (no cells)")
    out = []
    for index, cell in enumerate(cells):
        if isinstance(cell, dict):
            out.append({**cell, "index": index, "source": cell_text(cell.get("source"))})
    return out


def cell_text(value: object) -> str:
    """A cell's `source` as one string (nbformat stores it as a string or a list of lines)."""
    return "".join(str(v) for v in value) if isinstance(value, list) else str(value or "")


def normalize_cell_source(source: str) -> str:
    """A cell's source compared for "unchanged": outer blank space and the magic line's spacing
    do not count."""
    text = source.strip()
    first, _, rest = text.partition("\n")
    return " ".join(first.split()) + ("\n" + rest.rstrip() if rest else "")
