"""Browser test: the notebook remembers its agent across a kernel restart.

A real JupyterLab (Debian chromium + playwright), the labextension's notebook bridge (it keeps the
session id in the notebook's metadata), a real kernel and the scripted model. Task A runs and the
notebook is saved; after Kernel ▸ Restart Kernel (no Run All) the next `%%penguin` cell resumes
the session the notebook used last, so its request carries Task A's exchange; after a second
restart, `--new` starts a session without it. Fixtures and page helpers: tests/support/browser.py.
"""

from __future__ import annotations

import time

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    cell,
    open_notebook,
    output_text,
    run_menu_command,
    save,
    wait_cell_done,
    wait_kernel_idle,
)
from tests.support.session import request_messages  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

TASK_A = "Task A: name the capital of Iceland"
ANSWER_A = "Reykjavik is the capital of Iceland."
TASK_B = "Task B: and its population?"
ANSWER_B = "About 140,000 people live there."
TASK_C = "Task C: start over"
ANSWER_C = "Starting fresh."


def _texts(request: dict) -> str:
    return "\n".join(content for _role, content in request_messages(request))


def _run_cell(page, index: int) -> None:
    """Select code cell `index` and Shift+Enter it (nothing else runs)."""
    cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def _restart_kernel(page) -> None:
    run_menu_command(page, "Kernel", "Restart Kernel…")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")
    time.sleep(1.0)  # the status goes busy→idle as the new kernel starts
    wait_kernel_idle(page, timeout_ms=120_000)


def test_after_a_kernel_restart_the_next_cell_resumes_the_notebooks_session(page, lab, scripted):
    server = scripted([{"text": ANSWER_A}, {"text": ANSWER_B}, {"text": ANSWER_C}])
    path = lab.write_notebook(
        "memory.ipynb",
        f"%%penguin\n{TASK_A}",
        f"%%penguin\n{TASK_B}",
        f"%%penguin --new\n{TASK_C}",
    )
    open_notebook(page, lab, "memory.ipynb")
    _run_cell(page, 0)  # %load_ext
    wait_cell_done(page, 0)
    _run_cell(page, 1)  # Task A
    cell(page, 1).locator(".penguin-transcript", has_text=ANSWER_A).wait_for(timeout=120_000)
    wait_cell_done(page, 1)
    assert len(server.requests) == 1
    session_id = save(page, path)["metadata"]["penguin"]["session_id"]
    assert session_id.startswith("session-")

    _restart_kernel(page)
    _run_cell(page, 0)  # %load_ext in the new kernel
    wait_cell_done(page, 0)
    _run_cell(page, 2)  # Task B
    cell(page, 2).locator(".penguin-transcript", has_text=ANSWER_B).wait_for(timeout=120_000)
    wait_cell_done(page, 2)
    assert len(server.requests) == 2
    resumed = _texts(server.requests[1])
    assert TASK_A in resumed and ANSWER_A in resumed, "the request after the restart lacks Task A"
    assert TASK_B in resumed
    resumed_line = f"resumed session {session_id}, which this notebook used last"
    assert resumed_line in output_text(page, 2)
    # information, not an error: no red stderr box, and it stands above the transcript
    outputs = cell(page, 2).locator(".jp-OutputArea-output")
    stderr = outputs.and_(page.locator('[data-mime-type="application/vnd.jupyter.stderr"]'))
    assert all(resumed_line not in text for text in stderr.all_inner_texts())
    texts = outputs.all_inner_texts()
    line_at = next(i for i, text in enumerate(texts) if resumed_line in text)
    transcript_at = next(i for i, text in enumerate(texts) if ANSWER_B in text)
    assert line_at < transcript_at, texts

    _restart_kernel(page)
    _run_cell(page, 0)
    wait_cell_done(page, 0)
    _run_cell(page, 3)  # Task C, --new
    cell(page, 3).locator(".penguin-transcript", has_text=ANSWER_C).wait_for(timeout=120_000)
    wait_cell_done(page, 3)
    assert len(server.requests) == 3
    fresh = _texts(server.requests[2])
    assert TASK_C in fresh
    assert TASK_A not in fresh and ANSWER_A not in fresh and TASK_B not in fresh, "--new resumed the old session"
    assert "resumed session" not in output_text(page, 3)
    # The notebook now remembers the new session.
    assert save(page, path, expect=ANSWER_C)["metadata"]["penguin"]["session_id"] != session_id
