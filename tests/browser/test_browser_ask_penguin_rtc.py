"""Browser test: Ask penguin with real-time collaboration on (jupyter-collaboration, chromium).

With RTC the cells live in a shared document whose cell ids come from the file: the ask names
the failing cell by the id the file gives it (`{cell:calc}`), and the kernel's `{cell:…}`
expansion, reading the notebook through the bridge, finds that same cell — its source and error
go to the model.
"""

from __future__ import annotations

import nbformat
import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.browser.test_browser_ask_penguin import (  # noqa: E402
    ANSWER,
    ASK,
    FAILING,
    LOAD,
    _button,
    _failing_cell,
    _notebook,
)
from tests.support.browser import cell, cell_sources, open_notebook, run_all, wait_cell_done  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_with_rtc_the_ask_names_the_cell_by_the_id_the_kernel_resolves(lab_rtc, windows):
    from penguin_jupyter.testing import ScriptedModelServer

    with ScriptedModelServer([{"text": ANSWER}]) as server:
        lab_rtc.use_model_server(server)
        _notebook(lab_rtc, "rtc_ask.ipynb", [nbformat.v4.new_code_cell(LOAD, id="load"), _failing_cell(with_error=False)])
        page = windows(lab_rtc)
        open_notebook(page, lab_rtc, "rtc_ask.ipynb")
        run_all(page)
        wait_cell_done(page, 1)

        _button(page, 1, "Ask penguin").click()
        _button(page, 1, "Send to penguin").wait_for()
        assert cell_sources(page) == [LOAD, FAILING, ASK]
        assert server.requests == []

        _button(page, 1, "Send to penguin").click()
        cell(page, 2).locator(".penguin-transcript").get_by_text(ANSWER).wait_for(timeout=60_000)
        assert len(server.requests) == 1 and "undefined_price * 3" in str(server.requests)
