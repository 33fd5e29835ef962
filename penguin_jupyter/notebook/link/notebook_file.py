"""The notebook as saved on disk: where it is, its cells, and a cell's saved transcript.

Owns the fallbacks used when no frontend bridge is connected (nbconvert, papermill, VS Code, a
frontend without the extension) and the rule for "this cell is unchanged" (`normalize_cell_source`).
The file is a stranger's data: `read_notebook_bytes` reads only a regular file of at most
`MAX_NOTEBOOK_BYTES` (never a FIFO or device) and `decode_notebook` turns every way JSON decoding
can fail — not JSON, nested too deeply (`RecursionError`), too large (`MemoryError`) — into the
same one-line `NotebookFileError`; `read_saved_cells` remembers a refusal per version of the file,
so a bad notebook is not decoded again at every cell. The "Run All reproduces" check reads the
file through saved_notebook_cache.py (parsed once per version of the file). The live notebook
(unsaved edits included) is read through the bridge instead.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

from ...regular_files import read_regular_bytes

TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
MAX_REMEMBERED_REFUSALS = 8
FileKey = tuple[str, int, int, int]  # resolved path, st_mtime_ns, st_size, st_ino


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


def file_key(resolved: str, st: os.stat_result) -> FileKey:
    """What identifies one version of a file: a rewrite (new mtime or size) or a replacement
    (new inode) is another version."""
    return (resolved, st.st_mtime_ns, st.st_size, st.st_ino)


def read_notebook_bytes(path: str) -> bytes:
    """The file's bytes, when it is a regular file (a symlink to one is followed) of at most
    `MAX_NOTEBOOK_BYTES`; NotebookFileError (one line) otherwise."""
    try:
        return read_regular_bytes(path, MAX_NOTEBOOK_BYTES)
    except FileNotFoundError:
        raise NotebookFileError(f"the notebook has not been saved yet: {path}") from None
    except OSError as exc:
        raise NotebookFileError(f"cannot read the notebook file {path}: {exc}") from None


def decode_notebook(raw: bytes, path: str) -> object:
    """The decoded JSON of a notebook file; NotebookFileError (one line) for bytes that are not
    JSON, nest too deeply for the decoder or do not fit in memory."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise NotebookFileError(f"cannot read the notebook file {path}: its JSON is nested too deeply") from None
    except MemoryError:
        raise NotebookFileError(f"cannot read the notebook file {path}: it is too large to decode") from None
    except ValueError as exc:  # UnicodeDecodeError included
        raise NotebookFileError(f"cannot read the notebook file {path}: {exc}") from None


class _Refusals:
    """The last few notebook versions `read_saved_cells` refused, with the line it gave."""

    def __init__(self) -> None:
        self._lines: OrderedDict[FileKey, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: FileKey) -> str | None:
        with self._lock:
            return self._lines.get(key)

    def add(self, key: FileKey, line: str) -> None:
        with self._lock:
            self._lines[key] = line
            while len(self._lines) > MAX_REMEMBERED_REFUSALS:
                self._lines.popitem(last=False)


_REFUSED = _Refusals()


def notebooks_holding_cell(directory: str, cell_id: str) -> list[str]:
    """The .ipynb files in `directory` (the newest MAX_SCANNED_NOTEBOOKS; regular files of at most
    MAX_NOTEBOOK_BYTES, `read_notebook_bytes`) whose text holds the cell id `cell_id` (a JSON
    string): how a kernel that was not told its notebook, and heard from no page, identifies it by
    the running cell. Only a candidate list: copies of a notebook share their cell ids."""
    needle = json.dumps(cell_id).encode()
    try:
        candidates = sorted(Path(directory).glob("*.ipynb"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    found = []
    for path in candidates[:MAX_SCANNED_NOTEBOOKS]:
        try:
            if needle in read_notebook_bytes(str(path)):
                found.append(str(path))
        except NotebookFileError:
            continue  # not a regular file (a FIFO, a device), too large, unreadable
    return found


def read_saved_cells(path: str) -> list[dict[str, object]]:
    """The saved cells with `index` added (nbformat 4 JSON, read without nbformat). A file that
    cannot be used raises NotebookFileError (one line), the same line again without reading it
    while the file is unchanged."""
    resolved = os.path.realpath(path)
    try:
        key = file_key(resolved, os.stat(resolved))
    except FileNotFoundError:
        raise NotebookFileError(f"the notebook has not been saved yet: {path}") from None
    except OSError as exc:
        raise NotebookFileError(f"cannot read the notebook file {path}: {exc}") from None
    refused = _REFUSED.get(key)
    if refused is not None:
        raise NotebookFileError(refused)
    try:
        return _cells(decode_notebook(read_notebook_bytes(resolved), path), path)
    except NotebookFileError as exc:
        _REFUSED.add(key, str(exc))
        raise


def _cells(data: object, path: str) -> list[dict[str, object]]:
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookFileError(f"{path} is not a notebook (no cells)")
    out = []
    for index, cell in enumerate(cells):
        if isinstance(cell, dict):
            out.append({**cell, "index": index, "source": cell_text(cell.get("source"))})
    return out


def cell_text(value: object) -> str:
    """A cell's `source` as one string (nbformat stores it as a string or a list of lines; other
    items are data a stranger wrote: scalars are shown, nested lists and objects left out)."""
    if isinstance(value, list):
        return "".join(str(v) for v in value if isinstance(v, str | int | float))
    return value if isinstance(value, str) else str(value) if isinstance(value, int | float) else ""


def normalize_cell_source(source: str) -> str:
    """A cell's source compared for "unchanged": outer blank space and the magic line's spacing
    do not count."""
    text = source.strip()
    first, _, rest = text.partition("\n")
    return " ".join(first.split()) + ("\n" + rest.rstrip() if rest else "")
