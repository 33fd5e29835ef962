"""Browser tests of the agent working in its own notebook: a real JupyterLab (Debian chromium +
playwright), the labextension's notebook bridge, a real kernel with subshells, and the scripted
model. The Task inserts a markdown and a code cell, runs the code cell as a notebook cell while its
own `%%penguin` cell is still running, and Restart & Run All reproduces the analysis without
calling the model. Fixtures and page helpers: tests/support/browser.py.
"""

from __future__ import annotations

import re
import time

import nbformat
import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    CURRENT_NOTEBOOK,
    TRANSCRIPT_MIME,
    cell,
    interrupt_from_toolbar,
    open_notebook,
    output_text,
    run_all,
    run_menu_command,
    save,
    transcript_text,
    wait_cell_done,
    wait_kernel_idle,
)
from tests.support.session import request_messages  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CLEANING = (
    "import pandas as pd\n"
    "df_clean = pd.DataFrame({'x': [1, 2, 3]})\n"
    "df_clean['y'] = df_clean['x'] * 2\n"
    "ax = df_clean.plot(x='x', y='y')\n"
    "print('rows', len(df_clean))\n"
    "df_clean"
)
CHECK = "print('check', df_clean['y'].tolist())"
CODE_CELL_ID = "{{match:code cell with id (\\S+) at}}"


def _all_cells(page):
    return page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell")


def _tool_texts(request: dict) -> str:
    return "\n".join(content for role, content in request_messages(request) if role == "tool")


def _restart_and_run_all(page) -> None:
    run_menu_command(page, "Kernel", "Restart Kernel and Run All Cells…")
    page.locator(".jp-Dialog .jp-mod-accept").click()


def test_task_inserts_and_runs_cells_and_run_all_reproduces_without_the_model(page, lab, scripted):
    server = scripted(
        [
            {
                "tool_calls": [
                    {
                        "name": "insert_cell",
                        "id": "call_md",
                        "arguments": {"cell_type": "markdown", "source": "## Doubling x", "description": "Title"},
                    },
                    {
                        "name": "insert_cell",
                        "id": "call_code",
                        "arguments": {"cell_type": "code", "source": CLEANING, "description": "Clean"},
                    },
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "run_cell",
                        "id": "call_run",
                        "arguments": {"cell_id": CODE_CELL_ID, "description": "Run the cleaning"},
                    }
                ]
            },
            {"text": "Done: df_clean has y = 2x.", "delay_ms": 200},
        ]
    )
    path = lab.write_notebook("agent_cells.ipynb", "%%penguin --approve allow-all\nClean the data", CHECK)
    open_notebook(page, lab, "agent_cells.ipynb")
    run_all(page)

    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for(timeout=120_000)
    # Code cells now: load_ext, %%penguin, the inserted code cell, the check cell. The check cell
    # ran after the Task, so df_clean exists in the kernel.
    wait_cell_done(page, 3)
    assert "check [2, 4, 6]" in output_text(page, 3)

    cells = _all_cells(page)
    assert cells.count() == 5
    assert "Doubling x" in cells.nth(2).inner_text()
    code = cells.nth(3)
    assert "df_clean['y']" in code.inner_text()
    assert re.search(r"\[\d+\]", code.locator(".jp-InputArea-prompt").inner_text())
    code_out = code.locator(".jp-OutputArea").inner_text()
    assert "rows 3" in code_out
    assert code.locator(".jp-OutputArea img").count() >= 1, "the plot did not land in the inserted cell"

    assert len(server.requests) == 3
    assert "rows 3" in _tool_texts(server.requests[2]), "the next request lacks run_cell's outputs"
    assert "Done: df_clean has y = 2x." in transcript_text(transcript)

    notebook = save(page, path)
    assert notebook["metadata"]["penguin"]["session_id"].startswith("session-")
    sources = [("".join(c["source"]) if isinstance(c["source"], list) else c["source"]) for c in notebook["cells"]]
    assert sources[2] == "## Doubling x" and sources[3] == CLEANING

    _restart_and_run_all(page)
    time.sleep(1.0)
    wait_kernel_idle(page, timeout_ms=120_000)
    code_cells = page.locator(f"{CURRENT_NOTEBOOK} .jp-CodeCell")
    code_cells.nth(3).locator(".jp-OutputArea", has_text="check [2, 4, 6]").wait_for(timeout=60_000)
    assert len(server.requests) == 3, "Run All called the model for a completed, unchanged Task"
    replayed = code_cells.nth(1)
    assert "Done: df_clean has y = 2x." in transcript_text(replayed.locator(".penguin-transcript"))
    assert "the model was not called" in replayed.locator(".jp-OutputArea").inner_text()
    assert TRANSCRIPT_MIME in save(page, path, expect="check [2, 4, 6]")["cells"][1]["outputs"][-1]["data"]


def _notebook_with_ids(lab, name: str, cells: list[tuple[str, str]]):
    """A notebook whose cells have the given (id, source), so a script can name them."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in cells]
    path = lab.root_dir / name
    nbformat.write(nb, str(path))
    return path


def test_edit_cell_deny_then_approve_and_the_interrupt_stops_run_cell(page, lab, scripted):
    server = scripted(
        [
            {"tool_calls": [{"name": "read_notebook", "id": "call_read", "arguments": {}}]},
            {"tool_calls": [{"name": "edit_cell", "id": "call_edit1", "arguments": {"cell_id": "value-cell", "source": "value = 2", "description": "Bump"}}]},
            {"tool_calls": [{"name": "edit_cell", "id": "call_edit2", "arguments": {"cell_id": "value-cell", "source": "value = 3", "description": "Bump again"}}]},
            {"tool_calls": [{"name": "run_cell", "id": "call_loop", "arguments": {"cell_id": "loop-cell", "description": "Spin"}}]},
            {"text": "never reached"},
        ]
    )
    _notebook_with_ids(
        lab,
        "edit_cells.ipynb",
        [
            ("load", "%load_ext penguin_jupyter"),
            ("agent", "%%penguin --approve read-only\nChange value"),
            ("value-cell", "value = 1"),
            ("loop-cell", "import time\nwhile True:\n    time.sleep(0.01)"),
        ],
    )
    open_notebook(page, lab, "edit_cells.ipynb")
    cell(page, 0).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")  # %load_ext
    page.keyboard.press("Shift+Enter")  # the %%penguin cell

    agent = cell(page, 1)
    deny = agent.get_by_role("button", name="Deny")
    deny.wait_for()
    card = agent.locator(".widget-vbox", has_text="edit_cell").last
    assert "-value = 1" in card.inner_text() and "+value = 2" in card.inner_text(), "no diff on the card"
    deny.click()
    agent.locator(".widget-html-content", has_text="Approval: denied").first.wait_for()
    assert "value = 1" in cell(page, 2).inner_text()

    agent.get_by_role("button", name="Approve").click()
    cell(page, 2).locator(".jp-InputArea", has_text="value = 3").wait_for()

    agent.get_by_role("button", name="Approve").click()  # run_cell on the endless loop
    cell(page, 3).locator(".jp-InputArea-prompt", has_text="[*]").wait_for()
    time.sleep(1.0)
    started = time.monotonic()
    interrupt_from_toolbar(page)
    agent.locator(".jp-OutputArea", has_text="task interrupted").wait_for(timeout=15_000)
    print(f"interrupt to end of the %%penguin cell: {time.monotonic() - started:.2f}s")
    # The static transcript (the labextension's renderer): the applied edit's card shows its diff,
    # the denied one none.
    static_cards = agent.locator('.penguin-tool-card[data-tool-name="edit_cell"]')
    static_cards.nth(1).locator(".pg-diff").wait_for(timeout=15_000)
    applied = static_cards.nth(1).locator(".pg-diff").inner_text()
    assert "-value = 1" in applied and "+value = 3" in applied, applied
    assert static_cards.nth(0).locator(".pg-diff").count() == 0
    cell(page, 3).locator(".jp-OutputArea", has_text="KeyboardInterrupt").wait_for(timeout=15_000)
    assert len(server.requests) == 4

    # The kernel is usable: run the edited cell and a new one.
    cell(page, 2).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    wait_cell_done(page, 2)
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.type("print('alive', value)")
    page.keyboard.press("Shift+Enter")
    cell(page, 4).locator(".jp-OutputArea", has_text="alive 3").wait_for(timeout=30_000)
