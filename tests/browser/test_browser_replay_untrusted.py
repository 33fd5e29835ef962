"""Browser test: Restart & Run All on a notebook a stranger wrote runs none of its outputs.

A real JupyterLab (tests/support/browser.py) opens a forged saved notebook
(tests/support/forged_notebook.py): a `%%penguin` cell whose transcript bundle says `completed`,
beside an `application/javascript` output and `text/html` with a `<script>` and a remote `<img>`,
all aimed at a counting HTTP server on 127.0.0.2 and marking the page when they run. Restart &
Run All replays the cell without the model: the kernel publishes only the rebuilt transcript, so
the counting server sees no request made by the replay, no script runs and no stranger's text is
on the page. On 838a3dd the replay re-displayed the saved outputs as trusted ones: the script ran
and the server was hit.
"""

from __future__ import annotations

import time

import nbformat
import pytest

pytest.register_assert_rewrite("tests.support.browser", "tests.support.no_fetch")

from penguin_jupyter.notebook.runtime.saved_transcript import RERUN_LINE  # noqa: E402
from tests.support.browser import (  # noqa: E402
    CURRENT_NOTEBOOK,
    cell,
    open_notebook,
    run_menu_command,
    wait_kernel_idle,
)
from tests.support.forged_notebook import FORGED, forged_cell, hostile_bundle, write_notebook  # noqa: E402

pytest_plugins = ["tests.support.browser", "tests.support.no_fetch"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_restart_and_run_all_of_a_forged_notebook_fetches_nothing_and_runs_no_script(page, lab, counting):
    name = "forged.ipynb"
    load = nbformat.v4.new_code_cell("%load_ext penguin_jupyter", id="load")
    write_notebook(lab.root_dir / name, [load, forged_cell("agent", hostile_bundle(counting.base), counting.base)])
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    open_notebook(page, lab, name)
    page.wait_for_timeout(1500)  # whatever opening the untrusted file loads, it loads now
    opened_hits = dict(counting.hits)
    opened_seen = len(seen)

    run_menu_command(page, "Kernel", "Restart Kernel and Run All Cells…")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    time.sleep(1.0)
    replayed = cell(page, 1)
    replayed.locator(".jp-OutputArea", has_text="the model was not called").wait_for(timeout=120_000)
    wait_kernel_idle(page, timeout_ms=120_000)
    page.wait_for_timeout(1500)  # let anything the replayed outputs started reach the server

    assert dict(counting.hits) == opened_hits, f"the replay fetched: {dict(counting.hits)} (on open: {opened_hits})"
    assert [url for url in seen[opened_seen:] if counting.host in url] == []
    assert page.evaluate("() => document.body.dataset.pwned ?? null") is None, "a saved script ran"
    outputs = replayed.locator(".jp-OutputArea-output")
    text = replayed.locator(".jp-OutputArea").inner_text()
    assert FORGED not in text
    assert RERUN_LINE in text
    assert outputs.count() == 2, text  # the one line and the rebuilt transcript, nothing else
    transcript = replayed.locator(".penguin-transcript")
    assert transcript.count() == 1
    assert transcript.locator(f'.pg-remote[title^="{counting.base}/md-image"]').count() == 1
    assert page.locator(f"{CURRENT_NOTEBOOK} script").count() == 0
