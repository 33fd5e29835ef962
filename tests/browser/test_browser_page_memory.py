"""Browser test: what a finished `%%penguin` cell leaves in the page's memory (issue 31).

A real JupyterLab (Debian chromium + playwright), a real kernel and the scripted model. The
notebook bridge answers the kernel while a `%%penguin` cell runs; the kernel (ipykernel 7) handles
comm messages that arrive while a cell holds the shell without busy/idle statuses, so a kernel
future kept for such a message would never finish and would keep the message (a whole
`read_notebook` answer) in the page for as long as the page lives. The bridge sends and forgets
(docs/notebook-tools.md "Memory"). Fixtures and page helpers: tests/support/browser.py.
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    open_notebook,
    output_text,
    run_cell_at,
    wait_cell_done,
    wait_kernel_idle,
)

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PAGE_TARGET = "penguin-notebook-page"
# The kernel connection's pending futures for the bridge's comm (its open, messages, close).
BRIDGE_FUTURES = """(target) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const ours = new Set();
  for (const [id, comm] of kernel._comms) { if (comm.targetName === target) { ours.add(id); } }
  const pending = [];
  for (const future of kernel._futures.values()) {
    const msg = future.msg;
    const content = msg.content || {};
    if (content.target_name === target || ours.has(content.comm_id)) {
      pending.push(msg.header.msg_type + ' ' + JSON.stringify(content.data || {}).slice(0, 80));
    }
  }
  return {comms: ours.size, pending};
}"""


def test_bridge_answers_during_a_running_cell_leave_no_pending_futures(page, lab, scripted):
    read = {"name": "read_notebook", "id": "call_read", "arguments": {}}
    server = scripted(
        [
            {"tool_calls": [read]},
            {"text": "The notebook has two cells."},
            {"tool_calls": [{**read, "id": "call_read_2"}]},
            {"text": "Still two cells."},
        ]
    )
    lab.write_notebook(
        "page_memory.ipynb",
        "%%penguin --approve allow-all\nRead the notebook.",
        "%%penguin --approve allow-all\nAgain.",
    )
    open_notebook(page, lab, "page_memory.ipynb")
    for index in (0, 1, 2):
        run_cell_at(page, index)
        wait_cell_done(page, index)
    wait_kernel_idle(page)
    assert "Still two cells." in output_text(page, 2)
    # the bridge answered both reads while their cells ran (the tool output reached the model)
    outputs = [m for r in server.requests for m in r.get("messages", []) if m.get("role") == "tool"]
    assert len(outputs) >= 2 and all("Read the notebook." in str(m.get("content")) for m in outputs[:2])
    found = page.evaluate(BRIDGE_FUTURES, PAGE_TARGET)
    assert found["comms"] == 1, found
    assert found["pending"] == [], found
