"""Kernel-level tests against the real stack: a real ipykernel running `%%penguin` cells, a real
Agent/Session/Environment, and the ScriptedModelServer over loopback HTTP. Button clicks are the
comm messages a widget frontend sends (docs/notebook.md "Testing it as a person would")."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from penguin_jupyter.notebook.runtime.approval import NO_STDIN_NOTE, STDIN_NOTE
from penguin_jupyter.notebook.runtime.cell import INTERRUPTED_LINE, TaskInterrupted
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.live_text import captured_text
from tests.support.session import configure_model, request_messages, typed_messages

pytestmark = pytest.mark.kernel
API_KEY = "sk-test-secret"
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"


@pytest.fixture
def notebook_dir(tmp_path):
    path = tmp_path / "project" / "notebooks"
    path.mkdir(parents=True)
    return path


def _start(tmp_path, notebook_dir, server):
    configure_model(Path(os.environ["PENGUIN_HOME"]), server)
    kernel_cwd = tmp_path / "elsewhere"
    kernel_cwd.mkdir()
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb")})
    harness = KernelHarness(str(kernel_cwd), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def _clicker(harness, description):
    clicked: list[str] = []

    def on_message(msg, result):
        if msg["msg_type"] == "comm_open":
            for comm_id in result.buttons(description):
                if comm_id not in clicked:
                    clicked.append(comm_id)
                    harness.click(comm_id)

    return on_message, clicked


def _final_bundle(result):
    bundles = result.final_bundles()
    assert bundles, "the live view was not replaced by the static transcript"
    assert result.of_type("update_display_data"), (
        "the transcript must replace the live widget (display update)"
    )
    return bundles[-1]


def test_approve_click_runs_the_tool_in_the_notebook_directory(tmp_path, notebook_dir):
    script = [
        {
            "tool_calls": [
                {"name": "exec_command", "id": "call_1", "arguments": {"cmd": "printf hi > hello.txt"}}
            ]
        },
        {"text": "Created hello.txt."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            on_message, clicked = _clicker(kernel, "Approve")
            result = kernel.execute("%%penguin\nCreate hello.txt", on_message=on_message, timeout=120)
        finally:
            kernel.close()
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert len(clicked) == 1
        assert (notebook_dir / "hello.txt").read_text() == "hi"
        bundle = _final_bundle(result)
        data = bundle[TRANSCRIPT_MIME]
        assert "workspace" not in data["session"]  # the notebook's folder (hello.txt landed there)
        kinds = [m["payload"].get("type") for m in data["messages"]]
        assert "approval_decision" in kinds and "tool_call_output" in kinds
        decision = next(
            m["payload"] for m in data["messages"] if m["payload"].get("type") == "approval_decision"
        )
        assert decision == {"type": "approval_decision", "decision": "allow", "tool_call_id": "call_1"}
        assert "Created hello.txt." in bundle["text/html"]
        everything = json.dumps(bundle) + json.dumps(result.messages, default=str)
        assert API_KEY not in everything
        assert len(server.requests) == 2


def test_deny_click_sends_the_denial_to_the_model(tmp_path, notebook_dir):
    script = [
        {
            "tool_calls": [
                {"name": "exec_command", "id": "call_1", "arguments": {"cmd": "printf hi > hello.txt"}}
            ]
        },
        {"text": "Understood, I did not create it."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            on_message, clicked = _clicker(kernel, "Deny")
            result = kernel.execute("%%penguin\nCreate hello.txt", on_message=on_message, timeout=120)
        finally:
            kernel.close()
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert clicked
        assert not (notebook_dir / "hello.txt").exists()
        assert len(server.requests) == 2
        assert ("tool", "Tool call denied by user.") in request_messages(server.requests[1])
        data = _final_bundle(result)[TRANSCRIPT_MIME]
        decision = next(
            m["payload"] for m in data["messages"] if m["payload"].get("type") == "approval_decision"
        )
        assert decision["decision"] == "deny"


def _sleep_processes(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


def test_interrupt_during_exec_command_kills_the_command_and_carries_over(tmp_path, notebook_dir):
    marker = "sleep 30.25"
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_sleep", "arguments": {"cmd": marker}}]},
        {"text": "Picking up after the interruption."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            state = {"interrupted_at": None}

            def on_message(msg, result):
                if state["interrupted_at"] is None and _sleep_processes(marker):
                    state["interrupted_at"] = time.monotonic()
                    kernel.interrupt()

            result = kernel.execute(
                "%%penguin --approve allow-all\nSleep for a while", on_message=on_message, timeout=90
            )
            assert state["interrupted_at"] is not None, "the sleep command never started"
            ended_after = time.monotonic() - state["interrupted_at"]
            assert ended_after < 20, f"cell took {ended_after:.1f}s to end after the interrupt"
            assert result.reply["content"]["status"] == "error"
            assert result.reply["content"]["ename"] == "TaskInterrupted"
            tracebacks = result.of_type("error")
            assert tracebacks and tracebacks[0]["content"]["traceback"] == [
                "penguin: task interrupted — the next %%penguin cell continues the session"
            ]
            deadline = time.monotonic() + 10
            while _sleep_processes(marker) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _sleep_processes(marker) == []
            data = _final_bundle(result)[TRANSCRIPT_MIME]
            assert data["status"] == "aborted"
            assert any(m["payload"].get("type") == "abort" for m in data["messages"])

            follow = kernel.execute("%%penguin --approve allow-all\nContinue", timeout=90)
        finally:
            kernel.close()
        assert follow.reply["content"]["status"] == "ok", follow.stderr
        assert len(server.requests) == 2
        sent = typed_messages(server.requests[1])
        assert ("tool", "[interrupted: tool aborted by user]") in sent
        assert sent[-1] == ("user", "Continue")


def test_no_model_configured_says_the_three_ways_on_in_a_few_lines(tmp_path, notebook_dir):
    """Before (issue 39): one ~900-character paragraph naming the config path twice."""
    kernel = KernelHarness(str(tmp_path), kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "a.ipynb")}))
    try:
        kernel.execute("%load_ext penguin_jupyter")
        result = kernel.execute("%%penguin\nhello", timeout=60)
    finally:
        kernel.close()
    assert result.reply["content"]["status"] == "ok"
    text = result.stderr.strip()
    lines = text.splitlines()
    assert lines[0] == "penguin: no model yet, so nothing was run. Any one of these is enough:"
    assert len(lines) == 4 and len(text) < 450
    assert "export OPENAI_API_KEY=" in lines[1] and ".env" in lines[1]
    assert "%penguin demo" in lines[2]
    assert text.count(".project_config.toml") == 1
    assert not result.of_type("error")


def test_stop_button_aborts_the_task_and_kills_the_command(tmp_path, notebook_dir):
    marker = "sleep 30.5"
    script = [{"tool_calls": [{"name": "exec_command", "id": "call_s", "arguments": {"cmd": marker}}]}]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            stopped: list[str] = []

            def on_message(msg, result):
                # Click once the command runs and the header's Stop button has reached us (it
                # may arrive after the command started).
                stop_ids = result.buttons("Stop")
                if not stopped and stop_ids and _sleep_processes(marker):
                    stopped.append(stop_ids[0])
                    kernel.click(stop_ids[0])

            result = kernel.execute("%%penguin --approve allow-all\nSleep", on_message=on_message, timeout=90)
        finally:
            kernel.close()
        assert stopped
        assert result.reply["content"]["status"] == "ok", result.stderr
        deadline = time.monotonic() + 10
        while _sleep_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _sleep_processes(marker) == []
        data = _final_bundle(result)[TRANSCRIPT_MIME]
        assert data["status"] == "aborted"
        output = next(
            m["payload"] for m in data["messages"] if m["payload"].get("type") == "tool_call_output"
        )
        assert output["stop_reason"] == "aborted"
        # Stop is not a kernel interrupt: the cell ends without the interrupt's error line
        assert TaskInterrupted()._render_traceback_() == [INTERRUPTED_LINE]
        assert INTERRUPTED_LINE not in result.stderr, result.stderr


def test_line_commands_new_and_resume(tmp_path, notebook_dir):
    script = [{"text": "first answer"}, {"text": "second answer"}, {"text": "third answer"}]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            first = kernel.execute("%%penguin\nfirst question")
            sid = _final_bundle(first)[TRANSCRIPT_MIME]["session"]["session_id"]
            status = kernel.execute("%penguin status").stdout
            trace = kernel.execute("%penguin trace").stdout.strip()
            sessions = kernel.execute("%penguin sessions").stdout
            approve = kernel.execute("%penguin approve read-only").stdout
            usage = kernel.execute("%penguin usage").stdout
            models = kernel.execute("%penguin models").stdout
            config = kernel.execute("%penguin config").stdout
            help_text = kernel.execute("%penguin").stdout
            bad = kernel.execute("%penguin approve sometimes")
            kernel.execute("%penguin new")
            second = kernel.execute("%%penguin\nsecond question")
            kernel.execute(f"%penguin resume {sid}")
            third = kernel.execute("%%penguin\nthird question")
        finally:
            kernel.close()
        assert f"session: {sid}" in status and f"workspace: {notebook_dir}" in status
        assert Path(trace).is_file() and sid in trace
        assert sessions.splitlines()[0].startswith(sid)
        assert approve.strip() == "penguin: approval mode is now read-only"
        assert usage.startswith("session: total ")
        assert models.strip() == f"openai/scripted-model (default)  {server.url}"
        assert f"models and credentials: {os.environ['PENGUIN_HOME']}/default_project/" in config
        assert help_text.startswith("%penguin commands:") and "resume ID" in help_text
        assert bad.stderr.strip() == (
            "penguin: unknown approval mode 'sometimes' (choose from ask, read-only, auto, allow-all, deny-all)"
        )
        second_sid = _final_bundle(second)[TRANSCRIPT_MIME]["session"]["session_id"]
        assert second_sid != sid
        third_data = _final_bundle(third)[TRANSCRIPT_MIME]
        assert third_data["session"]["session_id"] == sid
        assert third_data["session"]["approval_mode"] == "read-only"
        assert typed_messages(server.requests[1])[-1] == ("user", "second question")
        assert ("user", "first question") not in typed_messages(server.requests[1])
        resumed = typed_messages(server.requests[2])
        assert ("user", "first question") in resumed and ("assistant", "first answer") in resumed
        assert ("user", "second question") not in resumed


def test_streaming_respects_the_update_budget_and_sends_final_text(tmp_path, notebook_dir):
    paragraphs = [f"Paragraph {i:02d}: " + ("lorem ipsum dolor " * 16).strip() + "." for i in range(24)]
    text = "\n\n".join(paragraphs)
    script = [{"text": text, "chunk": 24, "delay_ms": 4}]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            result = kernel.execute("%%penguin\nWrite a lot", timeout=120)
        finally:
            kernel.close()
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert server.requests
        captured, loose = captured_text(result.messages)
        assert loose == "", "streamed text must go into the live view's Output, not the cell"
        assert "".join(captured.values()) == text, "the text streams once, in order, into the live Outputs"
        streams = [m for m in result.of_type("stream") if m["content"]["name"] == "stdout"]
        assert len(streams) >= 3, "the text streams in several appends"
        assert sum(len(m["content"]["text"]) for m in streams) == len(text), "no text is sent twice"
        times = [m["header"]["date"].timestamp() for m in streams if hasattr(m["header"]["date"], "timestamp")]
        worst = max(sum(1 for u in times if t <= u < t + 1.0) for t in times)
        assert worst <= 11, f"the text got {worst} appends within one second (10 a second at most)"


def test_ask_without_stdin_denies_and_says_so(tmp_path, notebook_dir):
    script = [
        {
            "tool_calls": [
                {"name": "exec_command", "id": "call_1", "arguments": {"cmd": "printf hi > hello.txt"}}
            ]
        },
        {"text": "Could not write it."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            result = kernel.execute("%%penguin\nCreate hello.txt", allow_stdin=False, timeout=120)
        finally:
            kernel.close()
        assert result.reply["content"]["status"] == "ok"
        assert not result.buttons("Approve")
        assert not (notebook_dir / "hello.txt").exists()
        assert ("tool", "Tool call denied by user.") in request_messages(server.requests[1])
        assert result.stderr.strip() == NO_STDIN_NOTE
        assert _final_bundle(result)[TRANSCRIPT_MIME]["status"] == "completed"


def test_interrupt_while_waiting_for_approval(tmp_path, notebook_dir):
    script = [
        {
            "tool_calls": [
                {"name": "exec_command", "id": "call_w", "arguments": {"cmd": "printf x > never.txt"}}
            ]
        },
        {"text": "Continuing."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            shown: list[str] = []

            def on_message(msg, result):
                if not shown and result.buttons("Approve"):
                    shown.extend(result.buttons("Approve"))
                    kernel.interrupt()

            result = kernel.execute("%%penguin\nWrite never.txt", on_message=on_message, timeout=60)
            follow = kernel.execute("%%penguin\nContinue", timeout=60)
        finally:
            kernel.close()
        assert shown
        assert result.reply["content"]["ename"] == "TaskInterrupted"
        disabled = [
            m
            for m in result.of_type("comm_msg")
            if m["content"]["comm_id"] == shown[0]
            and m["content"]["data"].get("state", {}).get("disabled") is True
        ]
        assert disabled, "the pending Approve button was not disabled"
        assert not (notebook_dir / "never.txt").exists()
        assert follow.reply["content"]["status"] == "ok"
        sent = typed_messages(server.requests[1])
        # The approval was pending while the model's response was still open, so the turn is
        # carried over as a [turn_aborted] transcript (docs/engine.md "Carry-over after an interrupt" case B).
        carried = sent[-1][1]
        assert carried.startswith("[turn_aborted]\n  [user_input]Write never.txt[/user_input]\n")
        assert (
            '[tool_call name="exec_command" id="call_w"]{"cmd":"printf x > never.txt"}[/tool_call]' in carried
        )
        assert carried.endswith("[/turn_aborted]Continue") or carried.endswith("[/turn_aborted]\n\nContinue")


def test_model_option_and_bad_workspace(tmp_path, notebook_dir):
    from penguin_jupyter.state import add_model

    script = [{"text": "from the second model"}]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        add_model(
            Path(os.environ["PENGUIN_HOME"]),
            "default_project",
            provider="openai",
            model_id="other",
            base_url=server.url,
            api_key="sk-other-secret",
            client_type="openai-chat",
        )
        try:
            missing = kernel.execute(f"%%penguin --workspace {tmp_path / 'nope'}\nhello")
            unknown = kernel.execute("%%penguin --model openai/unknown-model\nhello")
            chosen = kernel.execute("%%penguin --model openai/other\nhello")
        finally:
            kernel.close()
        assert missing.stderr.strip() == f"penguin: --workspace directory does not exist: {tmp_path / 'nope'}"
        lines = unknown.stderr.strip().splitlines()
        assert (
            len(lines) == 1
            and "Model (provider=openai, model_id=unknown-model) is not configured" in lines[0]
        )
        assert not unknown.of_type("error")
        data = _final_bundle(chosen)[TRANSCRIPT_MIME]
        assert (data["session"]["provider"], data["session"]["model_id"]) == ("openai", "other")
        assert server.requests[-1]["model"] == "other"
        assert "sk-other-secret" not in json.dumps(_final_bundle(chosen))


def test_read_only_mode_and_always_allow(tmp_path, notebook_dir):
    (notebook_dir / "notes.txt").write_text("alpha\n")
    script = [
        {"tool_calls": [{"name": "read_file", "id": "call_r", "arguments": {"file_path": "notes.txt"}}]},
        {
            "tool_calls": [
                {"name": "exec_command", "id": "call_e1", "arguments": {"cmd": "printf 1 > one.txt"}}
            ]
        },
        {"text": "wrote one"},
        {
            "tool_calls": [
                {"name": "exec_command", "id": "call_e2", "arguments": {"cmd": "printf 2 > two.txt"}}
            ]
        },
        {"text": "wrote two"},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            on_message, clicked = _clicker(kernel, "Always allow exec_command")
            first = kernel.execute(
                "%%penguin --approve read-only\nRead notes, write one", on_message=on_message
            )
            second = kernel.execute("%%penguin\nWrite two")
        finally:
            kernel.close()
        assert first.reply["content"]["status"] == "ok" and second.reply["content"]["status"] == "ok"
        assert len(clicked) == 1, "only exec_command (rw) should ask; read_file (r) is auto-approved"
        assert (notebook_dir / "one.txt").read_text() == "1"
        assert (notebook_dir / "two.txt").read_text() == "2"
        assert not second.buttons("Approve"), "the tool was always-allowed for this session"
        decisions = [
            m["payload"]["decision"]
            for m in _final_bundle(first)[TRANSCRIPT_MIME]["messages"]
            if m["payload"].get("type") == "approval_decision"
        ]
        assert decisions == ["allow", "allow"]


def test_older_kernels_ask_on_stdin(tmp_path, notebook_dir):
    script = [
        {
            "tool_calls": [
                {"name": "exec_command", "id": "call_1", "arguments": {"cmd": "printf hi > hello.txt"}}
            ]
        },
        {"text": "Created it."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            kernel.execute("import ipykernel; ipykernel.__version__ = '7.3.0'  # pretend an older kernel")
            result = kernel.execute("%%penguin\nCreate hello.txt", on_input=lambda prompt: "y", timeout=120)
        finally:
            kernel.close()
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert result.prompts == [
            'Approve exec_command {"cmd": "printf hi > hello.txt"}? [y]es / [n]o / [a]lways: '
        ]
        assert not result.buttons("Approve")
        assert (notebook_dir / "hello.txt").read_text() == "hi"
        assert STDIN_NOTE in result.stderr


def test_penguin_compact_line_command(tmp_path, notebook_dir):
    script = [{"text": "first answer"}, {"text": "[summary]\nThe user asked one question.\n[/summary]"}]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            kernel.execute("%%penguin\nfirst question")
            compact = kernel.execute("%penguin compact")
        finally:
            kernel.close()
        assert compact.reply["content"]["status"] == "ok", compact.stderr
        assert compact.stdout.strip() == "penguin: compaction completed (summarize)"
        assert len(server.requests) == 2


def test_secrets_are_redacted_live_and_in_the_transcript(tmp_path, notebook_dir):
    script = [
        {
            "text": f"Your key is {API_KEY}.",
            "tool_calls": [{"name": "exec_command", "id": "call_k", "arguments": {"cmd": f"echo {API_KEY}"}}],
        },
        {"text": "Echoed it."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            bad = kernel.execute("%%penguin --approve sometimes\nEcho my key")
            result = kernel.execute("%%penguin --approve allow-all\nEcho my key", timeout=120)
        finally:
            kernel.close()
        assert bad.stderr.strip() == (
            "penguin: unknown approval mode 'sometimes' (choose from ask, read-only, auto, allow-all, deny-all)"
        )
        assert not bad.of_type("comm_open", "display_data")
        assert len(server.requests) == 2, "the bad-option cell must not reach the model"
        assert result.reply["content"]["status"] == "ok", result.stderr
        live = json.dumps([m["content"] for m in result.of_type("comm_open", "comm_msg", "stream")], default=str)
        assert "Your key is [redacted:openai api_key]." in "".join(captured_text(result.messages)[0].values())
        assert API_KEY not in live
        bundle = _final_bundle(result)
        assert API_KEY not in json.dumps(bundle)
        assert "[redacted:openai api_key]" in bundle["text/html"]


def test_model_line_command_switches_once_and_resume_keeps_its_model(tmp_path, notebook_dir):
    from penguin_jupyter.state import add_model

    script = [{"text": "a1"}, {"text": "b1"}, {"text": "b2"}, {"text": "a2"}, {"text": "a3"}]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        add_model(
            Path(os.environ["PENGUIN_HOME"]),
            "default_project",
            provider="openai",
            model_id="other",
            base_url=server.url,
            api_key="sk-other-secret",
            client_type="openai-chat",
        )
        try:
            first = kernel.execute("%%penguin\nq1")
            first_sid = _final_bundle(first)[TRANSCRIPT_MIME]["session"]["session_id"]
            kernel.execute("%penguin model openai/other")
            second = kernel.execute("%%penguin\nq2")
            third = kernel.execute("%%penguin\nq3")
            kernel.execute(f"%penguin resume {first_sid}")
            fourth = kernel.execute("%%penguin\nq4")
            fifth = kernel.execute("%%penguin\nq5")
        finally:
            kernel.close()
        sessions = [_final_bundle(r)[TRANSCRIPT_MIME]["session"] for r in (second, third, fourth, fifth)]
        assert sessions[0]["model_id"] == "other" and sessions[0]["session_id"] != first_sid
        assert sessions[1]["session_id"] == sessions[0]["session_id"]
        assert [s["session_id"] for s in sessions[2:]] == [first_sid, first_sid]
        assert [s["model_id"] for s in sessions[2:]] == ["scripted-model", "scripted-model"]
        assert [r["model"] for r in server.requests] == [
            "scripted-model",
            "other",
            "other",
            "scripted-model",
            "scripted-model",
        ]


def test_subagent_messages_nest_in_their_own_card(tmp_path, notebook_dir):
    script = [
        {"tool_calls": [{"name": "run_subagent", "id": "call_sub", "arguments": {"prompt": "Say hello"}}]},
        {"text": "hello from the child"},
        {"text": "The child said hello."},
    ]
    with ScriptedModelServer(script) as server:
        kernel = _start(tmp_path, notebook_dir, server)
        try:
            result = kernel.execute("%%penguin --approve allow-all\nDelegate", timeout=120)
        finally:
            kernel.close()
        assert result.reply["content"]["status"] == "ok", result.stderr
        assert len(server.requests) == 3
        titles = [
            title
            for m in result.of_type("comm_open", "comm_msg")
            for title in (m["content"]["data"].get("state", {}).get("titles") or [])
        ]
        assert any(t.startswith("Subagent ") and t.endswith("— openai/scripted-model") for t in titles), (
            titles
        )
        data = _final_bundle(result)[TRANSCRIPT_MIME]
        assert any(m.get("origin") for m in data["messages"]), "child messages are kept, tagged by origin"
