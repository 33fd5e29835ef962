"""Browser test: the kernel reads Busy while a `%%penguin` cell runs and waits for approval.

ipykernel 7.4 handles JupyterLab's `create_subshell_request` (sent when a widget comm is first
used) and comm messages on subshells while the cell runs, each bracketed by its own busy/idle
status; JupyterLab took the last one for the kernel's state, so the status bar said "Idle" while
the cell waited for a click. The labextension counts busy requests instead (busy_status.ts): the
status bar says Busy through both approvals (the first click is itself a comm message) and Idle
once the Task ends. Approve and Deny still decide.
"""

from __future__ import annotations

import re

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.browser.test_browser_notebook_tools import _notebook_with_ids  # noqa: E402
from tests.support.browser import cell, docs_shot, open_notebook, run_all, transcript_text  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# the other statuses JupyterLab's would have shown by now (the subshell's idle) come within this
SETTLE_MS = 1500
STATUS_BAR = ".jp-StatusBar-TextItem"


def kernel_status(page) -> dict[str, str]:
    """What the page shows: the status bar's kernel item, the toolbar's indicator, the connection."""
    return page.evaluate(
        """() => {
            const panel = window.jupyterapp.shell.currentWidget;
            const bar = [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                .map(e => e.innerText).find(t => t.includes('(ipykernel) |')) || '';
            const indicator = panel.node.querySelector('.jp-Notebook-ExecutionIndicator');
            return {bar, indicator: indicator && indicator.getAttribute('data-status'),
                    kernel: panel.sessionContext.session.kernel.status};
        }"""
    )


def assert_busy(page) -> None:
    page.wait_for_timeout(SETTLE_MS)
    shown = kernel_status(page)
    assert shown["bar"].endswith("| Busy") and shown["kernel"] == "busy" and shown["indicator"] == "busy", shown


def test_the_status_bar_says_busy_while_a_penguin_cell_waits_for_approval(page, lab, scripted):
    server = scripted(
        [
            {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "echo first"}}]},
            {"tool_calls": [{"name": "exec_command", "id": "call_2", "arguments": {"cmd": "echo second"}}]},
            {"text": "Both asked."},
        ]
    )
    _notebook_with_ids(lab, "busy.ipynb", [("load", "%load_ext penguin_jupyter"), ("agent", "%%penguin\nRun two")])
    open_notebook(page, lab, "busy.ipynb")
    assert kernel_status(page)["bar"].endswith("| Idle")
    run_all(page)
    agent = cell(page, 1)

    agent.get_by_text("$ echo first").first.wait_for()
    agent.get_by_role("button", name="Approve").wait_for()
    assert_busy(page)
    docs_shot(page, "busy-status")
    agent.get_by_role("button", name="Approve").click()  # a comm message, handled beside the cell

    agent.get_by_text("$ echo second").first.wait_for()  # one row at a time: the first is decided
    agent.get_by_role("button", name="Deny").wait_for()
    assert_busy(page)
    agent.get_by_role("button", name="Deny").click()

    agent.locator(".penguin-transcript").get_by_text("Both asked.").wait_for()
    page.locator(STATUS_BAR, has_text=re.compile(r"\| Idle$")).wait_for(timeout=30_000)
    assert kernel_status(page)["kernel"] == "idle"
    assert len(server.requests) == 3
    transcript = transcript_text(agent.locator(".penguin-transcript"))
    assert "approval: allow" in transcript and "approval: deny" in transcript
