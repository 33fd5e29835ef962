"""The notebook as saved on disk: where it is, its cells, and a cell's saved transcript.

Owns the fallbacks used when no frontend bridge is connected (nbconvert, papermill, VS Code, a
frontend without the extension) and the "Run All reproduces" check: finding the saved outputs of
the `%%penguin` cell being executed. The live notebook (unsaved edits included) is read through
the bridge instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


class NotebookFileError(Exception):
    """The saved notebook could not be found or read; `str()` is one line."""


def notebook_file_path(user_ns: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> str | None:
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


def read_saved_cells(path: str) -> list[dict[str, Any]]:
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
            out.append({**cell, "index": index, "source": _text(cell.get("source"))})
    return out


def saved_metadata(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    meta = data.get("metadata", {}).get("penguin") if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else {}


def _text(value: Any) -> str:
    return "".join(str(v) for v in value) if isinstance(value, list) else str(value or "")


def normalize_cell_source(source: str) -> str:
    """A cell's source compared for "unchanged": outer blank space and the magic line's spacing
    do not count."""
    text = source.strip()
    first, _, rest = text.partition("\n")
    return " ".join(first.split()) + ("\n" + rest.rstrip() if rest else "")


def _same_source(a: str, b: str) -> bool:
    return normalize_cell_source(a) == normalize_cell_source(b)


def completed_transcript(cells: list[dict[str, Any]], cell_id: str | None, source: str) -> list[dict[str, Any]] | None:
    """The saved outputs of this `%%penguin` cell when they hold a completed Task and the saved
    source equals `source`; None otherwise (then the cell asks the model again)."""
    if not cell_id:
        return None
    for cell in cells:
        if cell.get("id") != cell_id:
            continue
        if not _same_source(_text(cell.get("source")), source):
            return None
        outputs = [o for o in cell.get("outputs") or [] if isinstance(o, dict)]
        for output in outputs:
            data = output.get("data")
            bundle = data.get(TRANSCRIPT_MIME) if isinstance(data, dict) else None
            if isinstance(bundle, dict) and bundle.get("status") == "completed":
                return outputs
        return None
    return None
