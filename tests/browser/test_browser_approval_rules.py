"""Browser test: a saved approval rule says why on the card, live, saved and replayed.

A real JupyterLab (tests/support/browser.py) with a project rule `allow exec_command command
"echo*"` in the data root: the scripted model's `echo` runs without a click and its live card
says `Approval: approved — allowed by rule 1 (echo*) in …/approval_rules.toml` (a second command
no rule covers keeps the Task waiting for a click, so the live card can be read); the static
card the labextension renders says it after the Task, and again after save + reload. Then the
saved file's reason is forged into `<img src=http://127.0.0.2:PORT/x>`: reopening the notebook
and Restart & Run All (a replay: the reason comes back through replay_bundle.py's validation)
show it as text, and the counting server sees 0 requests.
"""

from __future__ import annotations

import json
import time

import pytest

pytest.register_assert_rewrite("tests.support.browser", "tests.support.no_fetch")

from penguin_jupyter.state.approval_rules import Rule, project_rules_path, save_project_rule  # noqa: E402
from tests.support.browser import (  # noqa: E402
    TRANSCRIPT_MIME,
    cell,
    open_notebook,
    run_all,
    run_menu_command,
    save,
    transcript_text,
    wait_cell_done,
    wait_kernel_idle,
)

pytest_plugins = ["tests.support.browser", "tests.support.no_fetch"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def _decisions(notebook: dict) -> list[dict]:
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    bundles = [o["data"][TRANSCRIPT_MIME] for o in code[1]["outputs"] if TRANSCRIPT_MIME in o.get("data", {})]
    assert len(bundles) == 1
    return [m["payload"] for m in bundles[0]["messages"] if m["payload"]["type"] == "approval_decision"]


def test_a_saved_rule_says_why_on_the_live_saved_and_replayed_card_and_a_forged_reason_is_text(
    page, lab, scripted, counting
):
    rules_file = project_rules_path(lab.penguin_home, "default_project")
    save_project_rule(lab.penguin_home, "default_project", Rule("allow", "exec_command", command="echo*"))
    reason = f"allowed by rule 1 (echo*) in {rules_file}"
    scripted(
        [
            {"tool_calls": [{"name": "exec_command", "id": "call_rule", "arguments": {"cmd": "echo by-rule"}}]},
            {"tool_calls": [{"name": "exec_command", "id": "call_ask", "arguments": {"cmd": "ls"}}]},
            {"text": "Done."},
        ]
    )
    name = "rules.ipynb"
    path = lab.write_notebook(name, "%%penguin\nEcho something")
    try:
        open_notebook(page, lab, name)
        run_all(page)
        penguin = cell(page, 1)
        deny = penguin.get_by_role("button", name="Deny")
        deny.wait_for()  # `ls` asks: the Task waits, the first card is live
        live = penguin.locator(".jp-OutputArea").inner_text()
        assert f"Approval: approved — {reason}" in live, live
        assert "by-rule" in live  # it ran without a click
        deny.click()
        transcript = penguin.locator(".penguin-transcript")
        transcript.wait_for()
        wait_cell_done(page, 1)
        assert f"approval: allow — {reason}" in transcript_text(transcript)

        saved = save(page, path)
        assert {d["tool_call_id"]: d.get("reason") for d in _decisions(saved)} == {
            "call_rule": reason,
            "call_ask": None,
        }
        open_notebook(page, lab, name)  # reload: the labextension renders the saved output
        reloaded = cell(page, 1).locator(".penguin-transcript")
        reloaded.wait_for()
        assert f"approval: allow — {reason}" in transcript_text(reloaded)

        forged = f"allowed by rule 1 <img src={counting.base}/x>"
        text = path.read_text()
        assert text.count(json.dumps(reason)) == 1
        path.write_text(text.replace(json.dumps(reason), json.dumps(forged)))
        seen: list[str] = []
        page.on("request", lambda request: seen.append(request.url))
        open_notebook(page, lab, name)
        opened = cell(page, 1).locator(".penguin-transcript")
        opened.wait_for()
        assert f"approval: allow — {forged}" in transcript_text(opened)

        run_menu_command(page, "Kernel", "Restart Kernel and Run All Cells…")
        page.locator(".jp-Dialog .jp-mod-accept").click()
        time.sleep(1.0)
        replayed = cell(page, 1)
        replayed.locator(".jp-OutputArea", has_text="the model was not called").wait_for(timeout=120_000)
        wait_kernel_idle(page, timeout_ms=120_000)
        card = replayed.locator(".penguin-transcript")
        assert card.count() == 1
        assert f"approval: allow — {forged}" in transcript_text(card)
        page.wait_for_timeout(1500)  # anything the reason made the page load would arrive now
        assert counting.total() == 0, dict(counting.hits)
        assert [url for url in seen if counting.host in url] == []
        assert page.locator(f'img[src^="{counting.base}"]').count() == 0
    finally:
        rules_file.unlink(missing_ok=True)  # the lab is shared by the session's browser tests
