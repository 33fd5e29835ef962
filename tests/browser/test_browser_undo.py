"""Undo in the browser (issue 30): a real JupyterLab with the labextension, a real kernel and the
scripted model. A Task inserts two cells, edits one, deletes one and runs one; a later Task
disables its Undo button (saying why) until that later Task is undone; then the Undo button in
its transcript's header brings the notebook back cell for cell (ids, sources, outputs, execution
counts, order); after save and reload the transcript still says "undone".
Fixtures and page helpers: tests/support/browser.py.
"""

from __future__ import annotations

import nbformat
import pytest
from playwright.sync_api import expect

pytest.register_assert_rewrite("tests.support.browser")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    CURRENT_NOTEBOOK,
    TRANSCRIPT_MIME,
    cell,
    open_notebook,
    save,
    wait_kernel_idle,
)

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _call(call_id: str, name: str, **arguments) -> dict:
    return {"name": name, "id": call_id, "arguments": arguments}


def _notebook(lab, name: str):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    stream = nbformat.v4.new_output
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext penguin_jupyter", id="load"),
        nbformat.v4.new_code_cell("%%penguin --approve allow-all\nRework the notebook", id="task"),
        nbformat.v4.new_code_cell(
            "a = 1\nprint('a is', a)", id="edited", execution_count=3,
            outputs=[stream("stream", name="stdout", text="a is 1\n")],
        ),
        nbformat.v4.new_code_cell(
            "print('to delete')", id="deleted", execution_count=4,
            outputs=[stream("stream", name="stdout", text="to delete\n")],
        ),
        nbformat.v4.new_code_cell(
            "print('run me', 41 + 1)", id="ran", execution_count=5,
            outputs=[stream("stream", name="stdout", text="an older output\n")],
        ),
        nbformat.v4.new_code_cell("%%penguin --approve allow-all\nSay hi", id="later"),
    ]
    path = lab.root_dir / name
    nbformat.write(nb, str(path))
    return path


def _cells(notebook: dict) -> list[tuple]:
    """(id, type, source, outputs as text, execution count) of the cells between the two Tasks."""
    out = []
    for c in notebook["cells"][2:-1]:
        source = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        texts = []
        for o in c.get("outputs", []):
            text = o.get("text", "")
            texts.append((o["output_type"], "".join(text) if isinstance(text, list) else text))
        out.append((c["id"], c["cell_type"], source, texts, c.get("execution_count")))
    return out


def test_undo_button_brings_the_notebook_back_cell_for_cell(page, lab, scripted):
    server = scripted(
        [
            {
                "tool_calls": [
                    _call("call_i1", "insert_cell", cell_type="code", source="inserted_one = 1", description="One"),
                    _call("call_i2", "insert_cell", cell_type="markdown", source="## inserted two", description="Two"),
                ]
            },
            {
                "tool_calls": [
                    _call("call_edit", "edit_cell", cell_id="edited", source="a = 2\nprint('a is', a)"),
                    _call("call_delete", "delete_cell", cell_id="deleted"),
                ]
            },
            {"tool_calls": [_call("call_run", "run_cell", cell_id="ran", description="Run it")]},
            {"text": "Reworked."},
            # the later Task changes a variable: a Task that changed nothing offers no Undo at all
            {"tool_calls": [_call("call_hi", "run_python", code="greeting = 'hi'", description="Greet")]},
            {"text": "Hi."},
        ]
    )
    path = _notebook(lab, "undo_cells.ipynb")
    before = _cells(nbformat.read(str(path), as_version=4))
    open_notebook(page, lab, "undo_cells.ipynb")
    cell(page, 0).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    wait_kernel_idle(page)
    page.keyboard.press("Shift+Enter")

    button = cell(page, 1).locator(".penguin-transcript .pg-undo-button")
    button.wait_for(timeout=120_000)
    wait_kernel_idle(page)
    assert len(server.requests) == 4
    changed = save(page, path)
    assert [c[0] for c in _cells(changed)][2:] == ["edited", "ran"]
    assert any("run me 42" in text for _, text in _cells(changed)[3][3])
    assert button.is_enabled()

    # a later Task: the first one's button is disabled and says why
    later = page.locator(f"{CURRENT_NOTEBOOK} .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea-editor", has_text="Say hi")
    )
    later.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+Enter")
    later_button = later.locator(".penguin-transcript .pg-undo-button")
    later_button.wait_for(timeout=120_000)
    wait_kernel_idle(page)
    blocked = cell(page, 1).locator(".penguin-transcript .pg-undo-button[disabled]")
    blocked.wait_for(timeout=30_000)
    assert "undo the later Task “Say hi” first" in cell(page, 1).locator(".pg-undo-note").inner_text()

    # undo the later Task first (it bound `greeting`), then the first one is the target again
    later_button.click()
    later.locator(".penguin-transcript .pg-undone").wait_for(timeout=60_000)
    wait_kernel_idle(page)
    button = cell(page, 1).locator(".penguin-transcript .pg-undo-button:not([disabled])")
    button.wait_for(timeout=30_000)
    button.click()
    undone = cell(page, 1).locator(".penguin-transcript .pg-undone")
    undone.wait_for(timeout=60_000)
    page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").nth(6).wait_for(state="detached", timeout=30_000)
    wait_kernel_idle(page)
    note = cell(page, 1).locator(".penguin-transcript .pg-undo-note").inner_text()
    assert note.startswith("penguin: undone — cells: ")
    # cells are named by their position and first line, never by their raw ids (issue 39)
    assert "removed the inserted cell 3 “inserted_one = 1”" in note
    assert "deleted cell " in note and "“print('to delete')” back" in note
    assert "outputs of cell " in note and "“print('run me', 41 + 1)” put back" in note
    assert "cell deleted" not in note and "cell ran" not in note

    restored = save(page, path, expect='"state": "undone"')
    assert _cells(restored) == before
    bundle = restored["cells"][1]["outputs"][-1]["data"][TRANSCRIPT_MIME]
    assert bundle["undo"]["state"] == "undone" and bundle["undo"]["note"] == note
    assert "undone" in "".join(restored["cells"][1]["outputs"][-1]["data"]["text/html"])

    page.reload()
    cell(page, 1).locator(".penguin-transcript .pg-undone").wait_for(timeout=60_000)
    assert cell(page, 1).locator(".pg-undo-button").count() == 0
    expect(page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell")).to_have_count(6)  # a reloaded notebook renders its cells in turn
    assert [c["id"] for c in restored["cells"]] == ["load", "task", "edited", "deleted", "ran", "later"]
