"""What the cell-start checks need from the saved .ipynb, parsed once per version of the file.

Owns `SavedNotebookCache`: a small, bounded cache (two notebooks by default) keyed by the file's
resolved path and its `stat` (mtime in ns, size, inode), holding a `SavedNotebookIndex` — for
each cell that holds a completed Task, its normalised source and the transcript bundle its
outputs carry (never its other outputs: a replay shows nothing else), plus the notebook's
`penguin` metadata — instead of the whole notebook. The bundle is as the file holds it, its image
references not put back (a `SavedBundle` with the images of its HTML): data, checked by
transcript/replay_bundle.py, sizes first, before anything expands or shows it. A file rewritten since (new
mtime, new size even within the same mtime tick, or replaced by an atomic save) is parsed again;
a file that cannot be read is remembered as such until it changes. Reading and the "unchanged
cell" rules stay in notebook_file.py; deciding when to ask is notebook_link.py's. See
docs/notebook-tools.md.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ..transcript.saved_images import SavedBundle, html_images
from .notebook_file import (
    MAX_NOTEBOOK_BYTES,
    TRANSCRIPT_MIME,
    FileKey,
    NotebookFileError,
    cell_text,
    decode_notebook,
    file_key,
    normalize_cell_source,
    read_notebook_bytes,
)


@dataclass(frozen=True)
class SavedNotebookIndex:
    """One version of a saved notebook, reduced to what the cell-start checks read."""

    # cell id → (normalised source, its saved transcript bundle), for the cells holding a completed Task
    completed: dict[str, tuple[str, SavedBundle]] = field(default_factory=dict)
    metadata: dict[str, object] = field(default_factory=dict)  # the notebook's `penguin` metadata

    def completed_bundle(self, cell_id: str | None, source: str) -> SavedBundle | None:
        """The saved transcript bundle of cell `cell_id` when its outputs hold a completed Task
        and its saved source equals `source` (see `normalize_cell_source`); None otherwise.
        Read-only: shared."""
        entry = self.completed.get(cell_id) if cell_id else None
        if entry is None or entry[0] != normalize_cell_source(source):
            return None
        return entry[1]


def index_notebook(data: object, path: str) -> SavedNotebookIndex:
    """The index of a decoded nbformat-4 notebook (`path` only names it in errors)."""
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(cells, list):
        raise NotebookFileError(f"{path} is not a notebook (no cells)")
    completed: dict[str, tuple[str, SavedBundle]] = {}
    seen: set[str] = set()  # a duplicated id (invalid nbformat): its first cell decides
    for cell in cells:
        cell_id = cell.get("id") if isinstance(cell, dict) else None
        if not isinstance(cell_id, str) or not cell_id or cell_id in seen:
            continue
        seen.add(cell_id)
        outputs = [o for o in cell.get("outputs") or [] if isinstance(o, dict)]
        bundles = [bundle for bundle in map(_completed_bundle, outputs) if bundle is not None]
        if bundles:  # the last one, as a cell shows one transcript at its end
            completed[cell_id] = (normalize_cell_source(cell_text(cell.get("source"))), bundles[-1])
    meta = data.get("metadata")
    penguin = meta.get("penguin") if isinstance(meta, dict) else None
    return SavedNotebookIndex(completed, penguin if isinstance(penguin, dict) else {})


def _completed_bundle(output: dict[str, object]) -> SavedBundle | None:
    data = output.get("data")
    if not isinstance(data, dict):
        return None
    bundle = data.get(TRANSCRIPT_MIME)
    if not isinstance(bundle, dict) or bundle.get("status") != "completed":
        return None
    return SavedBundle(bundle, tuple(html_images(data.get("text/html"))))  # images saved in the HTML


class SavedNotebookCache:
    """`index(path)` parses a notebook file only when it changed since the last call.

    `parses` counts the files actually read and decoded (the benchmark and tests read it).
    Thread-safe: the kernel's main thread and tool threads may ask at once.
    """

    def __init__(self, capacity: int = 2) -> None:
        self.capacity = max(1, capacity)
        self.parses = 0
        # resolved path → (the file's key when read, its index or the one-line reason it has none)
        self._entries: OrderedDict[str, tuple[FileKey, SavedNotebookIndex | str]] = OrderedDict()
        self._lock = threading.Lock()

    def index(self, path: str) -> SavedNotebookIndex:
        """The index of the notebook at `path`; raises NotebookFileError (one line) when the file
        is missing, larger than MAX_NOTEBOOK_BYTES, not JSON or not a notebook."""
        resolved = os.path.realpath(path)
        try:
            key = file_key(resolved, os.stat(resolved))
        except FileNotFoundError:
            self._forget(resolved)
            raise NotebookFileError(f"the notebook has not been saved yet: {path}") from None
        except OSError as exc:
            raise NotebookFileError(f"cannot read the notebook file {path}: {exc}") from None
        with self._lock:
            cached = self._entries.get(resolved)
            if cached is not None and cached[0] == key:
                self._entries.move_to_end(resolved)
                result = cached[1]
                if isinstance(result, str):
                    raise NotebookFileError(result)
                return result
        if key[2] > MAX_NOTEBOOK_BYTES:  # today's rule: too large to read at a cell start
            raise NotebookFileError(f"the notebook file is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: {path}")
        read_key, result = self._parse(resolved, path, key)
        if read_key is not None:
            self._store(resolved, read_key, result)
        if isinstance(result, str):
            raise NotebookFileError(result)
        return result

    def _parse(self, resolved: str, path: str, before: FileKey) -> tuple[FileKey | None, SavedNotebookIndex | str]:
        """Read and index the file (or say in one line why not: not a regular file, too large,
        not JSON, nested too deeply, out of memory); the key is None when the file changed while
        being read (then nothing is cached)."""
        self.parses += 1
        try:
            raw = read_notebook_bytes(resolved)
            after = file_key(resolved, os.stat(resolved))
        except FileNotFoundError:
            return None, f"the notebook has not been saved yet: {path}"
        except NotebookFileError as exc:
            return before, str(exc)
        except OSError as exc:
            return None, f"cannot read the notebook file {path}: {exc}"
        key = before if before == after else None
        try:
            return key, index_notebook(decode_notebook(raw, path), path)
        except NotebookFileError as exc:
            return key, str(exc)
        except (RecursionError, MemoryError) as exc:  # a stranger's nesting or size, past the decoder
            return key, f"cannot read the notebook file {path}: {_too_much(exc)}"

    def _store(self, resolved: str, key: FileKey, result: SavedNotebookIndex | str) -> None:
        with self._lock:
            self._entries[resolved] = (key, result)
            self._entries.move_to_end(resolved)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def _forget(self, resolved: str) -> None:
        with self._lock:
            self._entries.pop(resolved, None)


def _too_much(exc: BaseException) -> str:
    return "its JSON is nested too deeply" if isinstance(exc, RecursionError) else "it is too large to read"


SAVED_NOTEBOOKS = SavedNotebookCache()
"""The kernel's one cache (a kernel belongs to one notebook; two covers a rename or a copy)."""
