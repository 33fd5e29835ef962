"""Browser tests of the notebook bridge following its pages: a real JupyterLab (Debian chromium +
playwright), the labextension, a real kernel and the scripted model. A page reloaded after
`%load_ext` still serves the Task; two windows (and two collaborators with jupyter-collaboration)
on one notebook carry out each request once; a late joiner takes over when the first page closes;
closing the only page mid-Task fails the next tool call at once. Fixtures and page helpers:
tests/support/browser.py; the protocol: docs/notebook-tools.md.
"""

from __future__ import annotations

import time

import nbformat
import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    CURRENT_NOTEBOOK,
    cell,
    cell_sources,
    open_notebook,
    output_text,
    run_cell_at,
    save,
    wait_cell_done,
)
from tests.support.session import request_messages  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# Counts its own runs in the kernel: a request carried out twice prints "runs 2".
COUNTING = "runs = globals().get('runs', 0) + 1\nprint('runs', runs)"
CODE_CELL_ID = "{{match:code cell with id (\\S+) at}}"
HELLO_CELL = (
    "from penguin_jupyter.notebook.link.frontend_bridge import current_hello\n"
    "h = current_hello()\n"
    "print('keys', *sorted(h))\n"
    "print('where', h['path'], h['server_root'])\n"
    "print('session', h['session'])"
)


def _tool_texts(request: dict) -> str:
    return "\n".join(content for role, content in request_messages(request) if role == "tool")


def _insert_and_run_script() -> list[dict]:
    return [
        {
            "tool_calls": [
                {"name": "insert_cell", "id": "call_md", "arguments": {"cell_type": "markdown", "source": "## Counting", "description": "Title"}},
                {"name": "insert_cell", "id": "call_code", "arguments": {"cell_type": "code", "source": COUNTING, "description": "Count"}},
            ]
        },
        {"tool_calls": [{"name": "run_cell", "id": "call_run", "arguments": {"cell_id": CODE_CELL_ID, "description": "Run it"}}]},
        {"text": "Counted."},
    ]


def _saved_sources(path) -> list[str]:
    return [c.source for c in nbformat.read(str(path), as_version=4).cells]


def _open_second(windows, server, name: str):
    window = windows(server)
    open_notebook(window, server, name)
    return window


def _kernel_of(server, notebook: str) -> str:
    for session in server.api("GET", "/api/sessions"):
        if session.get("path") == notebook and session.get("kernel"):
            return str(session["kernel"]["id"])
    raise AssertionError(f"no kernel for {notebook}")


def _wait_connections(server, notebook: str, kernel: str, count: int, timeout_s: float = 60.0) -> None:
    """Until `count` pages are connected to `kernel`, still the notebook's kernel."""
    deadline = time.monotonic() + timeout_s
    seen: dict = {}
    while time.monotonic() < deadline:
        current = _kernel_of(server, notebook)
        assert current == kernel, f"JupyterLab gave {notebook} a new kernel ({kernel} -> {current})"
        seen = server.api("GET", f"/api/kernels/{kernel}")
        if seen.get("connections", 0) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"{count} pages never connected to the kernel of {notebook}: {seen}")


def _wait_load_ext(page) -> None:
    run_cell_at(page, 0)
    wait_cell_done(page, 0)


def test_a_page_reloaded_after_load_ext_serves_the_task(page, lab, scripted):
    server = scripted(
        [
            {"tool_calls": [{"name": "insert_cell", "id": "call_md", "arguments": {"cell_type": "markdown", "source": "## After reload", "description": "Title"}}]},
            {"text": "Inserted."},
        ]
    )
    lab.write_notebook("reloaded.ipynb", "%%penguin --approve allow-all\nAdd a title", HELLO_CELL)
    open_notebook(page, lab, "reloaded.ipynb")
    _wait_load_ext(page)
    page.reload()
    page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
    lab.wait_kernel_connected("reloaded.ipynb")

    started = time.monotonic()
    run_cell_at(page, 1)
    cell(page, 1).locator(".penguin-transcript").wait_for(timeout=120_000)
    took = time.monotonic() - started
    print(f"Task after reload: {took:.1f}s")
    assert "Inserted a markdown cell" in _tool_texts(server.requests[1])
    assert cell_sources(page).count("## After reload") == 1
    assert took < 30, "the reloaded page never answered (the old 30 s timeout)"
    # The hello contract (docs/notebook-tools.md): what the reloaded page told the kernel.
    run_cell_at(page, 2)
    wait_cell_done(page, 2)
    hello = output_text(page, 2)
    assert "keys frontend metadata page_id path server_root session subshells" in hello, hello
    assert f"where reloaded.ipynb {lab.root_dir}" in hello, hello
    client_id = page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.clientId")
    assert f"session {client_id}" in hello, hello


def test_two_windows_without_collaboration_one_insert_and_one_run(page, lab, scripted, windows):
    server = scripted(_insert_and_run_script())
    path = lab.write_notebook("two_windows.ipynb", "%%penguin --approve allow-all\nCount")
    open_notebook(page, lab, "two_windows.ipynb")
    other = _open_second(windows, lab, "two_windows.ipynb")
    _wait_load_ext(page)  # both windows are open when %load_ext announces the bridge
    before = cell_sources(other)

    run_cell_at(page, 1)
    cell(page, 1).locator(".penguin-transcript").wait_for(timeout=120_000)
    assert "runs 1" in _tool_texts(server.requests[2])
    assert "runs 1" in output_text(page, 2)
    assert cell_sources(other) == before, "the other window carried out the Task's requests too"

    notebook = save(page, path, expect="Counting")
    shown = cell_sources(page)
    assert shown == [c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in notebook["cells"]]
    assert shown.count("## Counting") == 1 and shown.count(COUNTING) == 1
    other.reload()  # without collaboration the other window shows the file once it reloads
    other.locator(f"{CURRENT_NOTEBOOK} .jp-Cell", has_text="Counting").first.wait_for()
    assert cell_sources(other) == _saved_sources(path)


def test_two_collaborators_with_rtc_see_one_insert_and_one_run(lab_rtc, windows):
    from penguin_jupyter.testing import ScriptedModelServer

    server = ScriptedModelServer(_insert_and_run_script()).start()
    try:
        lab_rtc.use_model_server(server)
        path = lab_rtc.write_notebook("rtc.ipynb", "%%penguin --approve allow-all\nCount")
        alice = _open_second(windows, lab_rtc, "rtc.ipynb")
        bob = _open_second(windows, lab_rtc, "rtc.ipynb")
        _wait_load_ext(alice)  # both collaborators are there when %load_ext announces the bridge

        run_cell_at(alice, 1)
        cell(alice, 1).locator(".penguin-transcript").wait_for(timeout=120_000)
        assert "runs 1" in _tool_texts(server.requests[2])
        bob.locator(f"{CURRENT_NOTEBOOK} .jp-Cell", has_text="Counting").first.wait_for()
        cell(bob, 2).locator(".jp-OutputArea", has_text="runs 1").wait_for(timeout=30_000)
        assert "runs 1" in output_text(alice, 2) and "runs 2" not in output_text(bob, 2)
        shown = cell_sources(alice)
        assert shown.count("## Counting") == 1 and shown.count(COUNTING) == 1
        assert cell_sources(bob) == shown
        save(alice, path, expect="Counting")
        assert _saved_sources(path) == shown
    finally:
        server.stop()


def test_a_late_joiner_takes_over_when_the_first_page_closes(page, lab, scripted, windows):
    server = scripted(
        [
            {"tool_calls": [{"name": "insert_cell", "id": "call_md", "arguments": {"cell_type": "markdown", "source": "## From B", "description": "Title"}}]},
            {"text": "Inserted."},
        ]
    )
    lab.write_notebook("late.ipynb", "%%penguin --approve allow-all\nAdd a title")
    open_notebook(page, lab, "late.ipynb")
    _wait_load_ext(page)
    kernel = _kernel_of(lab, "late.ipynb")
    late = _open_second(windows, lab, "late.ipynb")
    # Both pages on the kernel before the first closes: closed while the second was still
    # connecting, JupyterLab once gave the second page a new kernel (CI, twice in ~7 runs), one
    # where `%load_ext` never ran — not the scenario under test.
    _wait_connections(lab, "late.ipynb", kernel, 2)
    page.close()

    started = time.monotonic()
    run_cell_at(late, 1)
    cell(late, 1).locator(".penguin-transcript").wait_for(timeout=120_000)
    print(f"late joiner's Task: {time.monotonic() - started:.1f}s")
    assert "Inserted a markdown cell" in _tool_texts(server.requests[1])
    assert cell_sources(late).count("## From B") == 1


def test_closing_the_only_page_mid_task_fails_the_next_tool_call_at_once(page, lab, scripted):
    server = scripted(
        [
            {"tool_calls": [{"name": "insert_cell", "id": "call_1", "arguments": {"cell_type": "markdown", "source": "## One", "description": "First"}}]},
            # Streams for about a second: the page is closed meanwhile.
            {
                "text": "Adding a second cell now.",
                "chunk": 2,
                "delay_ms": 80,
                "tool_calls": [{"name": "insert_cell", "id": "call_2", "arguments": {"cell_type": "markdown", "source": "## Two", "description": "Second"}}],
            },
            {"text": "The page went away."},
        ]
    )
    lab.write_notebook("closed.ipynb", "%%penguin --approve allow-all\nAdd two titles")
    open_notebook(page, lab, "closed.ipynb")
    _wait_load_ext(page)
    run_cell_at(page, 1)
    deadline = time.monotonic() + 120
    while len(server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(server.requests) == 2, "the Task never reached its second turn"
    page.close()
    closed = time.monotonic()
    while len(server.requests) < 3 and time.monotonic() < closed + 60:
        time.sleep(0.05)
    took = time.monotonic() - closed
    print(f"page closed → the failed tool call reached the model: {took:.1f}s (includes ~1 s of streaming)")
    assert len(server.requests) == 3
    tool_text = _tool_texts(server.requests[2])
    failure = [line for line in tool_text.splitlines() if line.startswith("insert_cell failed:")]
    assert failure and "page" in failure[0], tool_text
    assert took < 15, f"the next tool call waited {took:.1f}s for a page that was gone"


def test_a_collaborator_on_an_untrusted_notebook_sees_a_readable_line(lab_rtc, windows):
    from penguin_jupyter.testing import ScriptedModelServer

    server = ScriptedModelServer(
        [
            {"tool_calls": [{"name": "insert_cell", "id": "call_md", "arguments": {"cell_type": "markdown", "source": "## Approved once", "description": "Title"}}]},
            {"text": "Inserted."},
        ]
    ).start()
    try:
        lab_rtc.use_model_server(server)
        lab_rtc.write_notebook("untrusted.ipynb", "%%penguin --approve read-only\nAdd a title")
        alice = _open_second(windows, lab_rtc, "untrusted.ipynb")
        _wait_load_ext(alice)
        bob = _open_second(windows, lab_rtc, "untrusted.ipynb")
        run_cell_at(alice, 1)
        approve = cell(alice, 1).get_by_role("button", name="Approve")
        approve.wait_for(timeout=120_000)
        # Bob's page does not render the (untrusted) widget output: it shows the live view's text.
        bob_out = cell(bob, 1).locator(".jp-OutputArea", has_text="trust this notebook to see")
        bob_out.wait_for(timeout=30_000)
        assert "VBox(" not in bob_out.inner_text()
        approve.click()
        cell(alice, 1).locator(".penguin-transcript").wait_for(timeout=120_000)
        bob.locator(f"{CURRENT_NOTEBOOK} .jp-Cell", has_text="Approved once").first.wait_for()
        assert cell_sources(bob).count("## Approved once") == 1
    finally:
        server.stop()
