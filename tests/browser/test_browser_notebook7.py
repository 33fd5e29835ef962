"""Browser test: Ask penguin and the Busy status in Notebook 7 (`jupyter notebook`, chromium).

Notebook 7's page is built from JupyterLab's parts, so the labextension runs there too: an error
output's "Ask penguin" inserts the `%load_ext` cell (a fresh kernel) and the ask naming the failing
cell, sends nothing until "Send to penguin", and the kernel reads Busy (the kernel connection, the
toolbar's indicator, the tab's busy favicon) while the Task waits for approval, Idle after.
"""

from __future__ import annotations

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
from tests.support.browser import (  # noqa: E402
    PAGE_TIMEOUT_MS,
    cell,
    cell_sources,
    wait_cell_done,
    wait_kernel_idle,
)

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SETTLE_MS = 1500
SHOWN = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const indicator = panel.node.querySelector('.jp-Notebook-ExecutionIndicator');
    const icon = document.querySelector('link[rel="icon"]');
    return {kernel: panel.sessionContext.session.kernel.status,
            indicator: indicator && indicator.getAttribute('data-status'),
            favicon: icon ? icon.getAttribute('href') : ''};
}"""


@pytest.fixture
def nb7_page(browser, notebook7, request):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        from tests.support.browser import node_failed, screenshot

        if node_failed(request):
            print(f"screenshot: {screenshot(page, request.node.name)}\n{notebook7.log_tail()}")
        context.close()
        notebook7.shutdown_kernels()


def test_notebook_7_asks_penguin_from_an_error_and_reads_busy_while_waiting(nb7_page, notebook7):
    from penguin_jupyter.testing import ScriptedModelServer

    page = nb7_page
    with ScriptedModelServer(
        [
            {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "echo checked"}}]},
            {"text": ANSWER},
        ]
    ) as server:
        notebook7.use_model_server(server)
        _notebook(notebook7, "nb7.ipynb", [_failing_cell(with_error=True)])
        page.goto(notebook7.notebook_url("nb7.ipynb"))
        page.locator(".jp-Notebook .jp-Cell").first.wait_for()
        notebook7.wait_kernel_connected("nb7.ipynb")
        wait_kernel_idle(page)

        _button(page, 0, "Ask penguin").click()
        _button(page, 0, "Send to penguin").wait_for()
        assert cell_sources(page) == [FAILING, LOAD, ASK]
        wait_cell_done(page, 1)
        page.wait_for_timeout(SETTLE_MS)
        assert server.requests == []

        _button(page, 0, "Send to penguin").click()
        agent = cell(page, 2)
        agent.get_by_role("button", name="Approve").wait_for()
        page.wait_for_timeout(SETTLE_MS)
        shown = page.evaluate(SHOWN)
        assert shown["kernel"] == "busy" and shown["indicator"] == "busy" and "busy" in shown["favicon"], shown
        agent.get_by_role("button", name="Approve").click()

        agent.locator(".penguin-transcript").get_by_text(ANSWER).wait_for()
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'")
        assert "undefined_price * 3" in str(server.requests) and len(server.requests) == 2
