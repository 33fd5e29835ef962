"""Live streaming in a real JupyterLab (Debian chromium + playwright): a long single paragraph
streams into the cell's live view, and what crosses the page's kernel websocket in both
directions stays linear in the answer — the frontend's sync-back of the `Output` widget is not
echoed, and a block moves on to a fresh `Output` before that sync-back grows large.

Fixtures and page helpers: `tests/support/browser.py`.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytest.register_assert_rewrite("tests.support.browser")

from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    cell,
    open_notebook,
    run_all,
    wait_cell_done,
)

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

ANSWER_CHARS = 60_000


def _paragraph(size: int) -> str:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    out, n = [], 0
    while sum(map(len, out)) < size:
        n += 1
        out.append(f"Sentence {n:05d} is {' '.join(words[(n + i) % len(words)] for i in range(9))}. ")
    return "".join(out)[:size].rstrip() + "."


def test_a_long_paragraph_streams_live_and_the_websocket_traffic_stays_linear(page, lab, scripted):
    text = _paragraph(ANSWER_CHARS)
    deltas = [text[i : i + 50] for i in range(0, len(text), 50)]
    scripted([{"text": deltas, "delay_ms": 5}])  # ~1,200 deltas over ~6 s: many live updates
    lab.write_notebook("stream.ipynb", "%%penguin\nWrite one long paragraph")
    open_notebook(page, lab, "stream.ipynb")
    traffic = {"received": 0, "sent": 0, "echo": 0}

    def on_socket(ws):
        if "/api/kernels/" not in ws.url:
            return

        def received(payload):
            traffic["received"] += len(payload)
            if (b"echo_update" if isinstance(payload, bytes) else "echo_update") in payload:
                traffic["echo"] += 1

        ws.on("framereceived", received)
        ws.on("framesent", lambda payload: traffic.__setitem__("sent", traffic["sent"] + len(payload)))

    page.on("websocket", on_socket)
    page.reload()  # (re)connect the kernel websocket with the listener in place
    cell(page, 1).wait_for()
    run_all(page)
    live = cell(page, 1).locator(".jupyter-widgets .jp-OutputArea").first
    live.wait_for()
    live.get_by_text("Sentence 00010", exact=False).wait_for()
    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for(timeout=120_000)
    wait_cell_done(page, 1)
    expect(transcript).to_contain_text(text[-40:])  # the renderer fills the node it attached
    assert traffic["echo"] == 0, "the kernel echoed the Output's synced-back text"
    assert traffic["received"] <= 6 * len(text), f"received {traffic['received'] / len(text):.1f}x the answer"
    assert traffic["sent"] <= 30 * len(text), f"sent {traffic['sent'] / len(text):.1f}x the answer"
    print(
        f"websocket: received {traffic['received'] / len(text):.2f}x, sent {traffic['sent'] / len(text):.2f}x"
    )
