"""The saved .ipynb is parsed once per version of the file, not at every `%%penguin` start.

Real files on disk (written by nbformat or by hand), the kernel's real `NotebookLink` with a
stand-in shell that says which cell runs; parses are counted by the cache's own `parses`
counter, the filesystem is never mocked.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from penguin_jupyter.notebook.link.notebook_file import MAX_NOTEBOOK_BYTES, NotebookFileError
from penguin_jupyter.notebook.link.notebook_link import NotebookLink
from penguin_jupyter.notebook.link.saved_notebook_cache import SavedNotebookCache
from penguin_jupyter.notebook.transcript.cell_sources import set_cell_source_lookup

MIME = "application/vnd.penguin.transcript+json"
SOURCE = "%%penguin --approve ask\nGo"


def _notebook(
    path: Path, *, status: str = "completed", source: str = SOURCE, extra: str = "", session: str = "s-1"
) -> None:
    bundle = nbformat.v4.new_output(
        "display_data", data={MIME: {"status": status}, "text/plain": "transcript"}
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["penguin"] = {"session_id": session}
    nb.cells = [
        nbformat.v4.new_code_cell("x = 1" + extra, id="c0"),
        nbformat.v4.new_code_cell(source, id="p1", outputs=[bundle]),
        nbformat.v4.new_code_cell("%%penguin\nAgain", id="p2", outputs=[]),
    ]
    nbformat.write(nb, str(path))


class _Kernel:
    def __init__(self) -> None:
        self.cell_id = "p1"

    def get_parent(self) -> dict[str, object]:
        return {"metadata": {"cellId": self.cell_id}}


class _Shell:
    def __init__(self, notebook: Path) -> None:
        self.user_ns: dict[str, object] = {"__session__": str(notebook)}
        self.events = None
        self.kernel = _Kernel()


@pytest.fixture
def link(tmp_path, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    made = NotebookLink(_Shell(tmp_path / "n.ipynb"), None)
    made.saved_notebooks = SavedNotebookCache()
    yield made
    set_cell_source_lookup(None)


def test_completed_bundle_needs_the_same_cell_the_same_source_and_a_completed_task(tmp_path):
    path = tmp_path / "n.ipynb"
    _notebook(path)
    index = SavedNotebookCache().index(str(path))
    bundle = index.completed_bundle("p1", "%%penguin  --approve ask\nGo\n")  # spacing ignored
    assert bundle is not None and bundle.bundle == {"status": "completed"}
    assert index.completed_bundle("p1", "%%penguin --approve ask\nGo now") is None  # edited
    assert index.completed_bundle("p2", "%%penguin\nAgain") is None  # no completed Task
    assert index.completed_bundle("c0", "x = 1") is None
    assert index.completed_bundle(None, SOURCE) is None  # no cell id (nbconvert)
    assert index.metadata == {"session_id": "s-1"}
    assert set(index.completed) == {"p1"}  # only what the check needs is kept


def test_a_failed_task_is_not_reproduced(tmp_path):
    path = tmp_path / "n.ipynb"
    _notebook(path, status="failed")
    assert SavedNotebookCache().index(str(path)).completed_bundle("p1", SOURCE) is None


def test_cell_starts_parse_an_unchanged_file_once(link, tmp_path):
    _notebook(tmp_path / "n.ipynb")
    for cell_id in ("p1", "p2", "c0", "p1"):
        link.shell.kernel.cell_id = cell_id
        found = link.saved_completed_bundle(SOURCE)
        assert (found is not None) == (cell_id == "p1")
    assert link.remembered_session() == "s-1"
    assert link.saved_notebooks.parses == 1


def test_a_rewritten_file_is_parsed_again(link, tmp_path):
    path = tmp_path / "n.ipynb"
    _notebook(path)
    assert link.saved_completed_bundle(SOURCE) is not None
    _notebook(path, source=SOURCE + " now", session="s-2")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later save
    assert link.saved_completed_bundle(SOURCE) is None  # the saved cell was edited
    assert link.remembered_session() == "s-2"
    assert link.saved_notebooks.parses == 2


def test_a_rewrite_within_the_same_mtime_tick_but_of_another_size_is_parsed_again(tmp_path):
    path = tmp_path / "n.ipynb"
    cache = SavedNotebookCache()
    _notebook(path, status="failed")
    before = path.stat()
    assert cache.index(str(path)).completed_bundle("p1", SOURCE) is None
    with open(path, "r+", encoding="utf-8") as handle:  # in place: same inode
        text = handle.read().replace('"failed"', '"completed"')
        handle.seek(0)
        handle.write(text)
        handle.truncate()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same mtime as before
    after = path.stat()
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)
    assert after.st_size != before.st_size
    assert cache.index(str(path)).completed_bundle("p1", SOURCE) is not None
    assert cache.parses == 2


def test_a_same_size_replacement_with_the_same_mtime_is_parsed_again(tmp_path):
    """JupyterLab saves by writing a new file and renaming it over the old one: a new inode."""
    path, fresh = tmp_path / "n.ipynb", tmp_path / "n.tmp"
    cache = SavedNotebookCache()
    _notebook(path, session="s-1")
    _notebook(fresh, session="s-9")
    before = path.stat()
    os.utime(fresh, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache.index(str(path)).metadata == {"session_id": "s-1"}
    os.replace(fresh, path)
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert cache.index(str(path)).metadata == {"session_id": "s-9"}
    assert cache.parses == 2


def test_the_cache_is_keyed_by_the_resolved_path(tmp_path):
    path = tmp_path / "n.ipynb"
    _notebook(path)
    (tmp_path / "link.ipynb").symlink_to(path)
    (tmp_path / "sub").mkdir()
    cache = SavedNotebookCache()
    cache.index(str(path))
    cache.index(str(tmp_path / "sub" / ".." / "n.ipynb"))
    cache.index(str(tmp_path / "link.ipynb"))
    assert cache.parses == 1


def test_the_cache_holds_at_most_its_capacity(tmp_path):
    cache = SavedNotebookCache(capacity=2)
    paths = [tmp_path / f"n{i}.ipynb" for i in range(3)]
    for path in paths:
        _notebook(path)
        cache.index(str(path))
    assert cache.parses == 3
    cache.index(str(paths[2]))
    cache.index(str(paths[1]))
    assert cache.parses == 3
    cache.index(str(paths[0]))  # the least recently used one was dropped
    assert cache.parses == 4


def test_a_corrupt_file_is_a_silent_miss_once_per_version(link, tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text('{"cells": [', encoding="utf-8")
    with pytest.raises(NotebookFileError) as error:
        link.saved_notebooks.index(str(path))
    assert "\n" not in str(error.value) and "cannot read the notebook file" in str(error.value)
    assert link.saved_completed_bundle(SOURCE) is None  # the cell asks the model, no traceback
    assert link.remembered_session() is None
    assert link.saved_notebooks.parses == 1  # the same corrupt file is not read again
    _notebook(path)  # fixed (another size)
    assert link.saved_completed_bundle(SOURCE) is not None
    assert link.saved_notebooks.parses == 2


def test_not_a_notebook_and_not_saved_yet_are_misses(link, tmp_path):
    path = tmp_path / "n.ipynb"
    assert link.saved_completed_bundle(SOURCE) is None  # not saved yet
    path.write_text('{"metadata": {}}', encoding="utf-8")
    with pytest.raises(NotebookFileError, match="is not a notebook"):
        link.saved_notebooks.index(str(path))
    assert link.saved_completed_bundle(SOURCE) is None
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert link.saved_completed_bundle(SOURCE) is None


def test_a_file_over_the_limit_is_not_read(link, tmp_path):
    path = tmp_path / "n.ipynb"
    with open(path, "wb") as handle:  # sparse: no 64 MB written
        handle.truncate(MAX_NOTEBOOK_BYTES + 1)
    with pytest.raises(NotebookFileError, match="larger than 64 MB"):
        link.saved_notebooks.index(str(path))
    assert link.saved_completed_bundle(SOURCE) is None
    assert link.saved_notebooks.parses == 0


PLOT = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_a_plot_saved_once_in_the_html_comes_back_for_replay(tmp_path):
    from penguin_jupyter.notebook.transcript.replay_bundle import validate_replay_bundle
    from penguin_jupyter.notebook.transcript.transcript_bundle import (
        TRANSCRIPT_MIME,
        make_bundle,
        static_transcript,
        transcript_mimebundle,
    )
    from penguin_jupyter.omni import tool_call, tool_call_output

    messages = [tool_call("run_python", {"code": "plot()"}, "p"), tool_call_output("[no output]", "p", images=[PLOT])]
    data = transcript_mimebundle(make_bundle(messages, session_info=None, status="completed"))
    assert PLOT not in str(data[TRANSCRIPT_MIME]) and data["text/html"].count(PLOT) == 1  # saved once
    cell = nbformat.v4.new_code_cell(SOURCE)
    cell.id = "p1"
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    path = tmp_path / "plot.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), str(path))  # text/html saved as lines

    saved = SavedNotebookCache().index(str(path)).completed_bundle("p1", SOURCE)
    assert saved is not None and saved.images == (PLOT,)  # the reference stays until replay's checks
    checked = validate_replay_bundle(saved.bundle, saved.images)
    assert checked.messages[-1].payload.images == [PLOT]
    again = static_transcript(checked.messages, session_info=checked.session, status="completed")
    assert again == data  # the replayed cell shows (and saves) exactly what the Task left


def test_a_forged_html_gives_a_reference_no_image(tmp_path):
    from penguin_jupyter.notebook.transcript.saved_images import with_saved_images

    bundle = {
        "messages": [
            {"payload": {"type": "tool_call_output", "images": ["penguin:html-image:0", "penguin:html-image:1"]}}
        ]
    }
    html = '<img src="javascript:alert(1)"><img src="http://example.com/x.png"><img src="' + PLOT + '">'
    assert with_saved_images(bundle, html)["messages"][0]["payload"]["images"] == [PLOT]
    assert with_saved_images(bundle, None)["messages"][0]["payload"]["images"] == []
    assert with_saved_images("not a bundle", html) == "not a bundle"


class _PageBridge:
    """What `NotebookLink` reads of a connected page: its hello (sent once, at connect) and the
    `set_metadata` request it answers. A stand-in: the real page is covered by the browser tests."""

    def __init__(self, metadata: dict[str, object]) -> None:
        self.connected = True
        self.hello: dict[str, object] = {"metadata": metadata}
        self.requests: list[tuple[str, dict[str, object]]] = []

    async def request(self, op: str, **args: object) -> dict[str, object]:
        self.requests.append((op, args))
        return {}


async def test_the_session_this_kernel_saved_wins_over_the_pages_stale_hello(link):
    """Issue 39: the hello's metadata is as old as the page's connection; after the kernel put a
    new session id in the notebook's metadata, the next fresh start named the old one."""
    bridge = _PageBridge({"session_id": "session-old"})
    link.bridge = bridge  # type: ignore[assignment]
    assert link.remembered_session() == "session-old"
    await link.remember_session("session-new")
    assert bridge.requests == [("set_metadata", {"value": {"session_id": "session-new"}, "timeout_s": 5.0})]
    assert link.remembered_session() == "session-new"
