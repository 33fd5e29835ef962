"""Browser tests: a person in a real JupyterLab (Debian chromium + playwright) running `%%penguin`
cells against the ScriptedModelServer over loopback — streaming, Approve/Deny clicks, the
kernel's interrupt button, save + reload rendered by the labextension, and nbconvert's HTML
(docs/notebook.md "The labextension", docs/model.md). Fixtures and page helpers: `tests/support/browser.py`.

Set PENGUIN_DOCS_SCREENSHOTS=1 to refresh docs/live-approval.png and docs/static-transcript.png.
"""

from __future__ import annotations

import json
import os
import time

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    API_KEY,
    INTERRUPTED_LINE,
    TRANSCRIPT_MIME,
    cell,
    copy_to_docs,
    interrupt_from_toolbar,
    nbconvert_html,
    open_notebook,
    output_text,
    ps_lines,
    run_all,
    save,
    screenshot,
    transcript_text,
    wait_cell_done,
    wait_kernel_idle,
)
from tests.support.session import request_messages, typed_messages  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

UPDATE_DOCS = os.environ.get("PENGUIN_DOCS_SCREENSHOTS") == "1"
STREAMED = "Step one: look at the folder. Step two: write hello.txt. Step three: report back."
FIRST_WORDS = "Step one"
LAST_WORDS = "Step three: report back."


def _shot(page, name: str, docs_name: str | None = None) -> None:
    path = screenshot(page, name)
    if UPDATE_DOCS and docs_name:
        copy_to_docs(path, docs_name)


def _outputs(notebook: dict, index: int) -> list[dict]:
    return [c for c in notebook["cells"] if c["cell_type"] == "code"][index]["outputs"]


def _watch_streaming(page) -> None:
    """Record in the page whether the penguin cell ever showed the first words without the last."""
    page.evaluate(
        """([first, last]) => {
            window.__penguinPartialSeen = false;
            const timer = setInterval(() => {
                const cells = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell');
                const out = cells.length > 1 ? cells[1].querySelector('.jp-OutputArea') : null;
                const text = out ? out.innerText : '';
                if (text.includes(first) && !text.includes(last)) {
                    window.__penguinPartialSeen = true;
                    clearInterval(timer);
                }
            }, 50);
        }""",
        [FIRST_WORDS, LAST_WORDS],
    )


def test_approve_streams_runs_the_tool_and_survives_save_and_reload(page, lab, scripted):
    server = scripted(
        [
            {
                "text": STREAMED,
                "tool_calls": [
                    {
                        "name": "exec_command",
                        "id": "call_hello",
                        "arguments": {
                            "description": "Create hello.txt",
                            "cmd": "printf hi > hello.txt && echo wrote-hello.txt",
                        },
                    }
                ],
                "delay_ms": 120,
            },
            # Slow enough that the live card shows the tool output before the static transcript.
            {"text": "Created hello.txt in the notebook folder.", "delay_ms": 400},
        ]
    )
    path = lab.write_notebook("approve.ipynb", "%%penguin\nCreate hello.txt here")
    open_notebook(page, lab, "approve.ipynb")
    _watch_streaming(page)
    run_all(page)

    approve = cell(page, 1).get_by_role("button", name="Approve")
    approve.wait_for()
    assert page.evaluate("window.__penguinPartialSeen"), "the assistant text did not stream in pieces"
    out = output_text(page, 1)
    assert LAST_WORDS in out and "exec_command" in out
    assert cell(page, 1).get_by_role("button", name="Deny").is_visible()
    assert "[*]" in cell(page, 1).locator(".jp-InputArea-prompt").inner_text()
    assert not (lab.root_dir / "hello.txt").exists(), "the tool ran before approval"
    _shot(page, "live-approval", "live-approval.png")

    approve.click()
    cell(page, 1).locator(".widget-html-content", has_text="wrote-hello.txt").first.wait_for()
    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for()
    wait_cell_done(page, 1)
    final = transcript_text(transcript)
    assert "wrote-hello.txt" in final
    assert "Created hello.txt in the notebook folder." in final
    assert "approval: allow" in final
    assert (lab.root_dir / "hello.txt").read_text() == "hi"
    assert len(server.requests) == 2
    assert API_KEY not in page.content()

    notebook = save(page, path)
    outputs = _outputs(notebook, 1)
    bundles = [o for o in outputs if TRANSCRIPT_MIME in o.get("data", {})]
    assert len(bundles) == 1, json.dumps(outputs)[:2000]
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert not any(o["output_type"] == "stream" for o in outputs), "streamed text escaped the live Output"

    page.reload()
    reloaded = cell(page, 1).locator(".penguin-transcript")
    reloaded.wait_for()
    wait_kernel_idle(page)
    page.locator(".jp-DirListing-item", has_text="approve.ipynb").wait_for()
    assert cell(page, 1).locator(".penguin-transcript-html").count() == 0, "HTML fallback used"
    assert cell(page, 1).locator(".jupyter-widgets").count() == 0, "a live widget was saved"
    text = transcript_text(reloaded)
    assert "Created hello.txt in the notebook folder." in text and "wrote-hello.txt" in text
    card = reloaded.locator(".penguin-tool-card")
    assert card.count() == 1
    assert card.get_attribute("data-tool-call-id") == "call_hello"
    _shot(page, "static-transcript", "static-transcript.png")


def test_deny_reaches_the_model_and_the_page(page, lab, scripted):
    server = scripted(
        [
            {
                "tool_calls": [
                    {
                        "name": "exec_command",
                        "id": "call_deny",
                        "arguments": {"cmd": "printf hi > denied.txt"},
                    }
                ]
            },
            {"text": "Understood, I did not create denied.txt."},
        ]
    )
    lab.write_notebook("deny.ipynb", "%%penguin\nCreate denied.txt")
    open_notebook(page, lab, "deny.ipynb")
    run_all(page)

    cell(page, 1).get_by_role("button", name="Deny").click()
    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for()
    wait_cell_done(page, 1)
    assert server.wait_for_requests(2, timeout=10)
    assert ("tool", "Tool call denied by user.") in request_messages(server.requests[1])
    text = transcript_text(transcript)
    assert "approval: deny" in text
    assert "Tool call denied by user." in text
    assert "Understood, I did not create denied.txt." in text
    assert not (lab.root_dir / "denied.txt").exists()


def test_always_allow_carries_to_the_next_cell_of_the_same_session(page, lab, scripted):
    server = scripted(
        [
            {
                "tool_calls": [
                    {"name": "exec_command", "id": "call_a", "arguments": {"cmd": "printf a > a.txt"}}
                ]
            },
            {"text": "Wrote a.txt."},
            {
                "tool_calls": [
                    {"name": "exec_command", "id": "call_b", "arguments": {"cmd": "printf b > b.txt"}}
                ]
            },
            {"text": "Wrote b.txt."},
        ]
    )
    lab.write_notebook("always.ipynb", "%%penguin\nWrite a.txt", "%%penguin\nNow write b.txt")
    open_notebook(page, lab, "always.ipynb")
    run_all(page)

    cell(page, 1).get_by_role("button", name="Always allow exec_command").click()
    cell(page, 1).locator(".penguin-transcript").wait_for()
    second = cell(page, 2).locator(".penguin-transcript")
    second.wait_for()
    wait_cell_done(page, 2)
    assert cell(page, 2).get_by_role("button", name="Approve").count() == 0
    assert "Wrote b.txt." in transcript_text(second)
    assert (lab.root_dir / "a.txt").read_text() == "a" and (lab.root_dir / "b.txt").read_text() == "b"
    assert len(server.requests) == 4
    sent = typed_messages(server.requests[2])
    assert ("user", "Write a.txt") in sent and ("assistant", "Wrote a.txt.") in sent
    assert sent[-1] == ("user", "Now write b.txt")
    first_session = cell(page, 1).locator(".penguin-transcript .pg-header .pg-meta").first.inner_text()
    second_session = second.locator(".pg-header .pg-meta").first.inner_text()
    assert first_session == second_session


def test_kernel_interrupt_button_ends_a_long_command(page, lab, scripted):
    marker = "sleep 30.125"
    server = scripted(
        [{"tool_calls": [{"name": "exec_command", "id": "call_sleep", "arguments": {"cmd": marker}}]}]
    )
    lab.write_notebook("interrupt.ipynb", "%%penguin --approve allow-all\nWait for a long time")
    open_notebook(page, lab, "interrupt.ipynb")
    run_all(page)

    deadline = time.monotonic() + 60
    while not ps_lines(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ps_lines(marker), "the sleep command never started"
    interrupted_at = time.monotonic()
    interrupt_from_toolbar(page)
    wait_cell_done(page, 1, timeout_ms=30_000)
    took = time.monotonic() - interrupted_at
    assert took < 20, f"the cell needed {took:.1f}s to end after the interrupt"

    print(f"cell ended {took:.1f}s after the interrupt click")
    out = output_text(page, 1)
    _shot(page, "interrupted")
    assert INTERRUPTED_LINE in out
    transcript = cell(page, 1).locator(".penguin-transcript")
    assert transcript.locator(".pg-status").inner_text() == "aborted"
    deadline = time.monotonic() + 10
    while ps_lines(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ps_lines(marker) == [], "the interrupted command is still running"
    assert len(server.requests) == 1


def test_stop_button_in_the_live_header_aborts_the_task(page, lab, scripted):
    marker = "sleep 30.375"
    server = scripted(
        [{"tool_calls": [{"name": "exec_command", "id": "call_stop", "arguments": {"cmd": marker}}]}]
    )
    lab.write_notebook("stop.ipynb", "%%penguin --approve allow-all\nWait a while")
    open_notebook(page, lab, "stop.ipynb")
    run_all(page)

    deadline = time.monotonic() + 60
    while not ps_lines(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ps_lines(marker), "the sleep command never started"
    cell(page, 1).get_by_role("button", name="Stop").click()
    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for(timeout=30_000)
    wait_cell_done(page, 1, timeout_ms=30_000)
    assert transcript.locator(".pg-status").inner_text() == "aborted"
    assert "[interrupted: tool aborted by user]" in transcript.inner_text()
    assert INTERRUPTED_LINE not in output_text(page, 1), "Stop is not a kernel interrupt: no error expected"
    deadline = time.monotonic() + 10
    while ps_lines(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ps_lines(marker) == [], "the stopped command is still running"
    assert len(server.requests) == 1


def test_nbconvert_html_of_the_saved_notebook_has_the_html_transcript(page, lab, scripted):
    scripted(
        [
            {
                "tool_calls": [
                    {"name": "exec_command", "id": "call_echo", "arguments": {"cmd": "echo converted-ok"}}
                ]
            },
            {"text": "The command printed converted-ok."},
        ]
    )
    path = lab.write_notebook("convert.ipynb", "%%penguin --approve allow-all\nEcho something")
    open_notebook(page, lab, "convert.ipynb")
    run_all(page)
    cell(page, 1).locator(".penguin-transcript").wait_for()
    wait_cell_done(page, 1)
    save(page, path)

    html = nbconvert_html(path, lab)
    assert 'class="penguin-transcript-html"' in html
    assert "The command printed converted-ok." in html
    assert "converted-ok" in html and "call_echo" in html
    assert API_KEY not in html
