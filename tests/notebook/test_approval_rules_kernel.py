"""Approval rules and the administrator's policy in real kernels (jupyter_client), against the
scripted model server.

* A rule saved from a card ("Save to project: allow exec_command command "git status"") approves
  `git status` in a later session of another kernel without a click; the card and the saved
  transcript say which rule; `git status; touch x` still asks (denied here: `x` never appears);
  `%penguin rules` lists the rule with its file and `%penguin rules forget 1` removes it;
  `%penguin rules forget 7` (no such rule) is one line on stderr, like every other error.
* The click itself is named: a card approved by "Save to project" says `saved as rule 1 (ls) in
  <file>` and one approved by "Always allow exec_command" says so, on the card and in the saved
  transcript (before, both read a bare "Approval: approved").
* A bad rule file stops a cell with one line naming the file, the rule and the field.
* An administrator's policy (`PENGUIN_POLICY`) with `max_approve = "ask"` turns
  `%%penguin --approve allow-all` into ask with one line; a model outside `allowed_models` is
  refused with one line; `read_dotenv = false` leaves the folder's `.env` unloaded; `%penguin
  config` shows the policy.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.live_text import widget_states
from tests.support.session import configure_child_model, configure_model

pytestmark = [pytest.mark.kernel, pytest.mark.security]

TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
SAVE_BUTTON = 'Save to project: allow exec_command command "git status"'


def _kernel(notebook_dir: Path, extra: dict[str, str] | None = None) -> KernelHarness:
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb"), **(extra or {})})
    harness = KernelHarness(str(notebook_dir), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def _clicker(harness: KernelHarness, description: str):
    clicked: list[str] = []

    def on_message(msg, result):
        if msg["msg_type"] == "comm_open":
            for comm_id in result.buttons(description):
                if comm_id not in clicked:
                    clicked.append(comm_id)
                    harness.click(comm_id)

    return on_message, clicked


def _shown(messages) -> str:
    states = widget_states(messages)
    return html.unescape("\n".join(s["value"] for s in states.values() if isinstance(s.get("value"), str)))


def _decisions(result) -> list[dict]:
    bundle = result.final_bundles()[-1][TRANSCRIPT_MIME]
    return [m["payload"] for m in bundle["messages"] if m["payload"].get("type") == "approval_decision"]


def test_a_saved_rule_approves_git_status_in_a_later_session_and_a_compound_still_asks(tmp_path):
    notebook_dir = tmp_path / "nb"
    notebook_dir.mkdir()
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(notebook_dir)], check=True)
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "git status"}}]},
        {"text": "Saved."},
        {"tool_calls": [{"name": "exec_command", "id": "call_2", "arguments": {"cmd": "git status --short"}}]},
        {"tool_calls": [{"name": "exec_command", "id": "call_3", "arguments": {"cmd": "git status; touch x"}}]},
        {"text": "Done."},
    ]
    rules_file = Path(os.environ["PENGUIN_HOME"]) / "default_project" / "approval_rules.toml"
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        first = _kernel(notebook_dir)
        try:
            on_message, saved = _clicker(first, SAVE_BUTTON)
            result = first.execute("%%penguin\nCheck the repo", on_message=on_message, timeout=180)
        finally:
            first.close()
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert len(saved) == 1, "the card did not offer the exact rule"
        assert 'command = "git status"' in rules_file.read_text()
        assert (rules_file.stat().st_mode & 0o777) == 0o600

        later = _kernel(notebook_dir)
        try:
            listed = later.execute("%penguin rules").stdout
            on_message, denied = _clicker(later, "Deny")
            second = later.execute("%%penguin --new\nCheck again", on_message=on_message, timeout=180)
            forgot = later.execute("%penguin rules forget 1").stdout
            no_such = later.execute("%penguin rules forget 7")
        finally:
            later.close()
    assert "1  allow exec_command command \"git status\"" in listed and str(rules_file) in listed
    assert second.reply["content"]["status"] == "ok", second.stderr
    assert len(denied) == 1, "git status --short must not ask and the compound command must"
    assert not (notebook_dir / "x").exists()
    why = f"allowed by rule 1 (git status) in {rules_file}"
    assert f"Approval: approved — {why}" in _shown(second.messages)
    decisions = _decisions(second)
    assert [d["decision"] for d in decisions] == ["allow", "deny"]
    assert decisions[0]["reason"] == why and "reason" not in decisions[1]  # the second was a click
    assert f"forgot rule 1 (allow exec_command command \"git status\") from {rules_file}" in forgot
    assert no_such.stdout == "" and no_such.stderr.strip() == "penguin: there is no rule 7 (%penguin rules lists 0)"
    assert "git status" not in rules_file.read_text()
    saved_html = second.final_bundles()[-1]["text/html"]
    assert html.escape(why, quote=False) in saved_html or why in html.unescape(saved_html)


def test_a_save_or_always_click_is_named_on_the_card_and_in_the_transcript(tmp_path):
    notebook_dir = tmp_path / "nb"
    notebook_dir.mkdir()
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "ls -la"}}]},
        {"tool_calls": [{"name": "exec_command", "id": "call_2", "arguments": {"cmd": "pwd"}}]},
        {"tool_calls": [{"name": "exec_command", "id": "call_3", "arguments": {"cmd": "echo once"}}]},
        {"text": "Done."},
    ]
    rules_file = Path(os.environ["PENGUIN_HOME"]) / "default_project" / "approval_rules.toml"
    save_button = 'Save to project: allow exec_command command "ls"'
    clicked: list[str] = []
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        harness = _kernel(notebook_dir)

        def on_message(msg, result):
            # card 1: Save to project; card 2: Always allow (a new card's button, not card 1's)
            if msg["msg_type"] != "comm_open":
                return
            saves = result.buttons(save_button)
            always = result.buttons("Always allow exec_command")
            if saves and saves[0] not in clicked:
                clicked.append(saves[0])
                harness.click(saves[0])
            elif len(always) >= 2 and always[1] not in clicked:
                clicked.append(always[1])
                harness.click(always[1])

        try:
            result = harness.execute("%%penguin\nLook around", on_message=on_message, timeout=180)
        finally:
            harness.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert len(clicked) == 2, clicked
    saved = f"saved as rule 1 (ls) in {rules_file}"
    always = "exec_command always allowed for this session"
    shown = _shown(result.messages)
    assert f"Approval: approved — {saved}" in shown, shown
    assert f"Approval: approved — {always}" in shown, shown
    decisions = _decisions(result)
    assert [(d["decision"], d.get("reason")) for d in decisions] == [
        ("allow", saved),
        ("allow", always),
        ("allow", "allowed for this session (always allow exec_command)"),
    ]


def test_the_policy_caps_the_mode_and_refuses_a_model(tmp_path):
    notebook_dir = tmp_path / "nb"
    notebook_dir.mkdir()
    policy = tmp_path / "policy.toml"
    policy.write_text('max_approve = "ask"\nallowed_models = ["openai/scripted-model"]\nread_dotenv = false\n')
    (notebook_dir / ".env").write_text("PENGUIN_POLICY_TEST_VAR=from-dotenv\n")
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "printf 1 > one.txt"}}]},
        {"text": "Wrote it."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        configure_child_model(Path(os.environ["PENGUIN_HOME"]), server, "other-model")
        kernel = _kernel(notebook_dir, {"PENGUIN_POLICY": str(policy)})
        try:
            on_message, approved = _clicker(kernel, "Approve")
            capped = kernel.execute("%%penguin --approve allow-all\nWrite one", on_message=on_message, timeout=180)
            refused = kernel.execute("%%penguin --new --model openai/other-model\nHello", timeout=120)
            config = kernel.execute("%penguin config")
            dotenv = kernel.execute("import os; print(os.environ.get('PENGUIN_POLICY_TEST_VAR'))")
            (notebook_dir / ".penguin").mkdir()
            (notebook_dir / ".penguin" / "approvals.toml").write_text('[[rule]]\naction = "deny"\ntool = "exec_command"\n[[rule]]\naction = "never"\ntool = "read_file"\n')
            bad_rules = kernel.execute("%%penguin\nHello again", timeout=120)
        finally:
            kernel.close()
    assert capped.reply["content"]["status"] == "ok", capped.stderr
    notice = f"penguin: the administrator's policy ({policy}) allows at most --approve ask; this cell runs under ask instead of allow-all"
    assert notice in capped.stderr
    assert len(approved) == 1, "under the policy the call had to be asked"
    assert (notebook_dir / "one.txt").read_text() == "1"
    assert capped.final_bundles()[-1][TRANSCRIPT_MIME]["session"]["approval_mode"] == "ask"
    line = refused.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "model openai/other-model is not allowed by the administrator's policy" in line
    bad_line = bad_rules.stderr.strip()
    assert bad_line.startswith(f"penguin: {notebook_dir / '.penguin' / 'approvals.toml'}: rule 2: action:"), bad_line
    assert "\n" not in bad_line and "nothing was run" in bad_line
    assert len(server.requests) == 2, "the refused cells must not reach the model"
    assert dotenv.stdout.strip() == "None", "read_dotenv = false: the workspace .env is not loaded"
    assert f"administrator's policy: {policy}" in config.stdout
    assert "highest approval mode: ask" in config.stdout and "allowed models: openai/scripted-model" in config.stdout
    assert "not the workspace's .env (the administrator's policy turns it off)" in config.stdout


def test_a_reason_naming_a_strangers_folder_shows_its_invisible_characters_live_and_saved(tmp_path):
    """The workspace's rule file lives in a folder a stranger named: a bidi override in that name
    reaches the reason ("denied by rule 1 (curl*) in …"), and the live card and the saved card
    both show it as ⟨U+202E⟩, the same one line."""
    notebook_dir = tmp_path / "nb\u202etxt.py"
    (notebook_dir / ".penguin").mkdir(parents=True)
    rules = notebook_dir / ".penguin" / "approvals.toml"
    rules.write_text('[[rule]]\naction = "deny"\ntool = "exec_command"\ncommand = "curl*"\n')
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_1", "arguments": {"cmd": "curl http://127.0.0.1:9/"}}]},
        {"text": "Denied."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = _kernel(notebook_dir)
        try:
            result = kernel.execute("%%penguin\nFetch it", timeout=180)
        finally:
            kernel.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    why = f"denied by rule 1 (curl*) in {str(rules).replace(chr(0x202E), '⟨U+202E⟩')}"
    lines = [line for line in _shown(result.messages).splitlines() if "Approval: denied —" in line]
    assert lines and all(f"Approval: denied — {why}" in line and "\u202e" not in line for line in lines), lines
    assert [d.get("reason") for d in _decisions(result)] == [why]
