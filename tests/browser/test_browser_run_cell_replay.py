"""Browser test: a `run_cell` on a stranger's `%%penguin` cell (issue 25, defect 1, its second
route to the replay) shows that cell on the card and is refused, so none of its saved outputs is
published again.

A real JupyterLab (tests/support/browser.py) holds a notebook whose third cell is forged
(tests/support/forged_notebook.py): a `%%penguin` cell whose bundle says `completed`, beside an
`application/javascript` output and `text/html` with a `<script>` and a remote `<img>`, all aimed
at a counting HTTP server. The user's own `%%penguin` cell asks the scripted model, which calls
`run_cell` on the forged cell: the approval card shows that cell's source (not just its id);
even approved, the call is refused with one line (a `%%penguin` cell is the user's to run), the
cell is not executed, the counting server sees no request and no script runs. On 838a3dd the
card showed the cell id only and the run reached the replay that re-published the saved outputs.
"""

from __future__ import annotations

import nbformat
import pytest

pytest.register_assert_rewrite("tests.support.browser", "tests.support.no_fetch")

from tests.support.browser import CURRENT_NOTEBOOK, cell, open_notebook, transcript_text, wait_kernel_idle  # noqa: E402
from tests.support.forged_notebook import forged_cell, hostile_bundle, write_notebook  # noqa: E402

pytest_plugins = ["tests.support.browser", "tests.support.no_fetch"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_run_cell_on_a_forged_penguin_cell_shows_its_source_and_is_refused(
    page, lab, scripted, counting
):
    scripted(
        [
            {"tool_calls": [{"name": "run_cell", "id": "call_run", "arguments": {"cell_id": "forged", "description": "Re-run the report"}}]},
            {"text": "The report cell ran."},
        ]
    )
    name = "run_forged.ipynb"
    load = nbformat.v4.new_code_cell("%load_ext penguin_jupyter", id="load")
    agent = nbformat.v4.new_code_cell("%%penguin --approve ask\nRe-run the report cell", id="agent")
    write_notebook(lab.root_dir / name, [load, agent, forged_cell("forged", hostile_bundle(counting.base), counting.base)])
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    open_notebook(page, lab, name)
    page.wait_for_timeout(1500)  # whatever opening the untrusted file loads, it loads now
    opened_hits = dict(counting.hits)
    opened_seen = len(seen)

    cell(page, 0).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")  # %load_ext
    page.keyboard.press("Shift+Enter")  # the user's %%penguin cell
    mine = cell(page, 1)
    card = mine.locator(".widget-vbox", has_text="run_cell").last
    approve = card.get_by_role("button", name="Approve")
    approve.wait_for(timeout=120_000)
    card.locator("pre", has_text="Summarize the report").wait_for()  # the forged cell's source
    approve.click()

    mine.locator(".penguin-transcript").wait_for(timeout=120_000)
    wait_kernel_idle(page, timeout_ms=120_000)
    page.wait_for_timeout(1500)  # let anything a re-published output started reach the server

    transcript = transcript_text(mine.locator(".penguin-transcript"))
    assert "run_cell refused: cell forged is a %%penguin cell" in transcript, transcript
    assert dict(counting.hits) == opened_hits, f"run_cell fetched: {dict(counting.hits)} (on open: {opened_hits})"
    assert [url for url in seen[opened_seen:] if counting.host in url] == []
    assert page.evaluate("() => document.body.dataset.pwned ?? null") is None, "a saved script ran"
    assert page.locator(f"{CURRENT_NOTEBOOK} script").count() == 0
    assert "[1]:" in cell(page, 2).locator(".jp-InputPrompt").inner_text(), "the forged cell was run"
