"""Cost in the page (issue 41): a person runs a `%%penguin --budget` cell in a real JupyterLab; the
live header shows what the Task has cost after each request (seen while the cell waits for an
Approve click), the Task stops before the request that could cross the budget, and the saved
transcript the labextension renders after a reload says what the Task cost and why it stopped.

Set PENGUIN_DOCS_SCREENSHOTS=1 to refresh docs/cost-header.png and docs/budget-stop.png.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from penguin_jupyter.state import update_project_config  # noqa: E402
from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    cell,
    docs_shot,
    open_notebook,
    run_all,
    save,
    wait_cell_done,
)

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

USAGE = {"prompt_tokens": 5000, "completion_tokens": 100}  # $0.051 a request at $10/M in and out


def _priced(lab) -> None:  # type: ignore[no-untyped-def]
    def change(cfg) -> None:  # type: ignore[no-untyped-def]
        cfg.models[0].price = None
        cfg.models[0].extra["price"] = {"input": 10.0, "cached": 1.0, "output": 10.0}
        cfg.models[0].max_tokens = 100

    update_project_config(lab.penguin_home, "default_project", change)


def test_the_header_shows_the_cost_and_a_budget_stops_the_task(page, lab, scripted):
    call = {"name": "exec_command", "arguments": {"description": "Count the rows", "cmd": "echo 42"}}
    server = scripted(
        [
            {"tool_calls": [{**call, "id": "call_1"}], "usage": USAGE},
            {"tool_calls": [{**call, "id": "call_2"}], "usage": USAGE},
            {"text": "never sent", "usage": USAGE},
        ]
    )
    _priced(lab)
    path = lab.write_notebook("budget.ipynb", "%%penguin --budget 0.12\nCount the rows of sales.csv")
    open_notebook(page, lab, "budget.ipynb")
    run_all(page)

    approve = cell(page, 1).get_by_role("button", name="Approve")
    approve.first.click()  # request 1's usage is read once its tool call is decided
    header = cell(page, 1).locator(".widget-html-content", has_text="cost: $0.051 this Task")
    header.first.wait_for()
    approve.first.wait_for()  # request 2's call waits for its click, its cost not yet counted
    docs_shot(page, "cost-header")
    approve.first.click()
    transcript = cell(page, 1).locator(".penguin-transcript", has_text="cost: $0.102 this Task")
    transcript.wait_for()  # attached before the renderer fills it: wait for its text
    wait_cell_done(page, 1)
    assert len(server.requests) == 2  # the third request was never sent
    text = transcript.inner_text()
    assert "stopped before a model request: this cell's budget of $0.12" in text
    assert "cost: $0.102 this Task" in text

    save(page, path)
    page.reload()
    reloaded = cell(page, 1).locator(".penguin-transcript", has_text="cost: $0.102 this Task")
    reloaded.wait_for()
    assert cell(page, 1).locator(".penguin-transcript-html").count() == 0, "the labextension rendered it"
    saved = reloaded.inner_text()
    assert "cost: $0.102 this Task · $0.102 session" in saved
    assert "stopped before a model request" in saved
    assert "Request failed" not in saved  # the unsent request's request_end is the notice, once
    reloaded.locator(".pg-usage").scroll_into_view_if_needed()
    docs_shot(page, "budget-stop")
