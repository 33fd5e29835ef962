"""Browser test: the approval row's buttons show their whole label (real JupyterLab, chromium).

"Save to project: allow exec_command command "git status*"" is the exact rule a click writes, so
the card must show all of it. Before the row wrapped and its buttons kept their width, the flex
row shrank the "Always allow" and "Save to project" buttons and JupyterLab cut both labels with an
ellipsis ("Save to project: allow exec_command comma…"), hiding the rule (found by QA at 1280×900
with the file browser open).
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.support_browser")

from tests.support_browser import cell, open_notebook  # noqa: E402

pytest_plugins = ["tests.support_browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SAVE_LABEL = 'Save to project: allow exec_command command "git status*"'

# Every button of the row, and whether its label is cut (wider than the button shows).
CUT_BUTTONS = """row => [...row.querySelectorAll('button')].map(b => ({
    label: b.innerText.trim(), cut: b.scrollWidth > b.clientWidth + 1,
    inside: b.getBoundingClientRect().right <= row.getBoundingClientRect().right + 1}))"""


def test_the_save_to_project_button_shows_the_whole_rule(page, lab, scripted):
    scripted(
        [
            {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "git status --short --branch"}}]},
            {"text": "Done."},
        ]
    )
    lab.write_notebook("row.ipynb", "%%penguin --approve ask\nCheck the repo")
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
    agent.locator(".penguin-transcript").wait_for(timeout=60_000)
