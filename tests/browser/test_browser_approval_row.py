"""Browser test: the approval row's buttons show their whole label (real JupyterLab, chromium).

"Save to project: allow exec_command command "git status"" is the exact rule a click writes, so
the card must show all of it. Before the row wrapped and its buttons kept their width, the flex
row shrank the "Always allow" and "Save to project" buttons and JupyterLab cut both labels with an
ellipsis ("Save to project: allow exec_command comma…"), hiding the rule (found by QA at 1280×900
with the file browser open).

The card's muted lines — the call's description and the line naming the cell a notebook tool
shows — are separate lines: they were joined into one ("Run the analysis cellcell a49… as the
notebook holds it now").
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.browser.test_browser_notebook_tools import _notebook_with_ids  # noqa: E402
from tests.support.browser import cell, open_notebook  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SAVE_LABEL = 'Save to project: allow exec_command command "git status"'

# Every button of the row, and whether its label is cut (wider than the button shows).
CUT_BUTTONS = """row => [...row.querySelectorAll('button')].map(b => ({
    label: b.innerText.trim(), cut: b.scrollWidth > b.clientWidth + 1,
    inside: b.getBoundingClientRect().right <= row.getBoundingClientRect().right + 1}))"""


def test_the_save_to_project_button_shows_the_whole_rule_and_the_card_its_lines(page, lab, scripted):
    delete = {"cell_id": "scratch", "description": "Remove the scratch cell"}
    scripted(
        [
            {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "git status --short --branch"}}]},
            {"tool_calls": [{"name": "delete_cell", "id": "call_2", "arguments": delete}]},
            {"text": "Done."},
        ]
    )
    _notebook_with_ids(
        lab,
        "row.ipynb",
        [("load", "%load_ext penguin_jupyter"), ("agent", "%%penguin --approve ask\nCheck the repo"), ("scratch", "x = 1")],
    )
    open_notebook(page, lab, "row.ipynb")
    cell(page, 0).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")  # %load_ext
    page.keyboard.press("Shift+Enter")  # the %%penguin cell
    agent = cell(page, 1)
    save = agent.get_by_role("button", name=SAVE_LABEL)
    save.wait_for()
    row = save.locator("xpath=..")  # the row: the buttons and the status
    buttons = row.evaluate(CUT_BUTTONS)
    assert [b["label"] for b in buttons][:2] == ["Approve", "Deny"], buttons
    assert SAVE_LABEL in [b["label"] for b in buttons], buttons
    assert not [b for b in buttons if b["cut"] or not b["inside"]], buttons
    agent.get_by_role("button", name="Deny").click()

    card = agent.locator(".widget-vbox", has_text="delete_cell").last
    card.get_by_role("button", name="Deny").wait_for()
    card.locator("text=as the notebook holds it now").wait_for()
    lines = card.inner_text().splitlines()
    assert "Remove the scratch cell" in lines, lines
    assert "cell scratch as the notebook holds it now" in lines, lines
    card.get_by_role("button", name="Deny").click()
    agent.locator(".penguin-transcript").wait_for(timeout=60_000)
