"""Browser test: what `run_python` displays in a live `%%penguin` cell fetches nothing.

A real JupyterLab (tests/support/browser.py) runs, live, a `%%penguin --approve allow-all`
cell whose scripted model calls run_python with code displaying every vector of
tests/support/run_python_no_fetch.py (HTML `<img>`, CSS `url()`, Markdown image, SVG `href`,
JavaScript `fetch`, IFrame, `<script src>`, vega-lite and plotly payloads, ipywidgets, an
`update_display`, a display from a thread the code starts, math with URLs) at a counting HTTP
server on 127.0.0.2. The server receives no request while the pandas table and the matplotlib
PNG render and the placeholders name the host. The control: the same code run afterwards in a
user's own cell of the same notebook does reach the server (13 requests), except the math,
which JupyterLab's MathJax never loads.
"""

from __future__ import annotations

import json

import pytest

pytest.register_assert_rewrite("tests.support.browser", "tests.support.no_fetch")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    cell,
    open_notebook,
    wait_cell_done,
)
from tests.support.run_python_no_fetch import MATH_PATHS, hostile_display_code  # noqa: E402

pytest_plugins = ["tests.support.browser", "tests.support.no_fetch"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _run_and_advance(page, index: int) -> None:
    """Select code cell `index` (command mode) and Shift+Enter it."""
    cell(page, index).locator(".jp-InputArea-prompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")


def test_run_python_displays_in_a_live_cell_fetch_nothing(page, lab, scripted, counting):
    code = hostile_display_code(counting.base)
    call = {"name": "run_python", "id": "call_show", "arguments": {"description": "Show", "code": code}}
    scripted([{"tool_calls": [call]}, {"text": "Shown.", "delay_ms": 200}])
    lab.write_notebook("run_python_no_fetch.ipynb", "%%penguin --approve allow-all\nShow the report", code)
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    open_notebook(page, lab, "run_python_no_fetch.ipynb")

    _run_and_advance(page, 0)
    wait_cell_done(page, 0)
    _run_and_advance(page, 1)
    penguin = cell(page, 1)
    penguin.locator(".penguin-transcript").wait_for(timeout=120_000)
    wait_cell_done(page, 1)
    outputs = penguin.locator(".jp-OutputArea")
    # The data scientist's outputs still render: the pandas table and the matplotlib PNG.
    outputs.locator("table.dataframe").first.wait_for()
    assert "North" in outputs.locator("table.dataframe").first.inner_text()
    page.wait_for_function(
        """cell => [...cell.querySelectorAll('.jp-OutputArea img')]
                   .some(img => img.src.startsWith('data:image/png') && img.complete && img.naturalWidth > 20)""",
        arg=penguin.element_handle(),
    )
    page.wait_for_timeout(2000)  # let anything the rendering might have started reach the server

    assert counting.total() == 0, dict(counting.hits)
    assert [url for url in seen if counting.host in url] == []
    output_area = penguin.locator(".jp-Cell-outputArea")
    assert output_area.locator("iframe, script, object, embed, video, audio, link").count() == 0
    remote = output_area.locator(".jp-OutputArea-output .pg-remote")
    texts = remote.all_inner_texts()
    assert any(f"image from {counting.host} — click to open" in text for text in texts), texts
    note = output_area.inner_text()
    assert "penguin: not shown live (application/javascript)" in note
    assert "widget" in note

    # The control: the same code in the user's own cell reaches the server at once.
    _run_and_advance(page, 2)
    wait_cell_done(page, 2)
    control = cell(page, 2).locator(".jp-OutputArea")
    control.locator("table.dataframe").first.wait_for()
    page.wait_for_timeout(2000)
    leaked = set(counting.hits)
    assert {"/html-img", "/md-img", "/js-fetch", "/iframe"} <= leaked, json.dumps(dict(counting.hits))
    # JupyterLab's MathJax loads nothing for math with CSS url()s, which is why text/latex and
    # the `$…$` of HTML text are kept: if this changes, so must display_no_fetch.KEPT_AS_IS.
    assert not leaked & set(MATH_PATHS), dict(counting.hits)
    print(f"control: {counting.total()} requests to {sorted(leaked)}")
