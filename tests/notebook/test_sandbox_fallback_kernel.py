"""Where no sandbox can start (here: `PENGUIN_BWRAP=none`, what a machine without bubblewrap or
user namespaces looks like to the harness), in real kernels: `--approve auto` acts as ask — the
command gets a card — and one line says why at the first auto cell, not again; with the
administrator's `sandbox = "required"` a command is refused with one line and no card, even
under `--approve allow-all`. Nothing runs unsandboxed silently."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model

pytestmark = pytest.mark.kernel

TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
NO_SANDBOX = "penguin: no sandbox here (turned off (PENGUIN_BWRAP=none)): --approve auto acts as ask (every command asks)"


def _deny_all_cards(harness: KernelHarness, clicked: list[str]):  # type: ignore[no-untyped-def]
    def on_message(msg, result):  # type: ignore[no-untyped-def]
        if msg["msg_type"] == "comm_open":
            for comm_id in result.buttons("Deny"):
                if comm_id not in clicked:
                    clicked.append(comm_id)
                    harness.click(comm_id)

    return on_message


def _kernel(workspace: Path, extra: dict[str, str]) -> KernelHarness:
    env = kernel_env({"JPY_SESSION_NAME": str(workspace / "a.ipynb"), "PENGUIN_BWRAP": "none", **extra})
    harness = KernelHarness(str(workspace), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def _lines(result) -> str:  # type: ignore[no-untyped-def]
    return result.stdout + result.stderr + result.notes


def test_auto_acts_as_ask_with_one_line_where_no_sandbox_starts(tmp_path):
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "c1", "arguments": {"cmd": "touch first"}}]},
        {"text": "Asked."},
        {"tool_calls": [{"name": "exec_command", "id": "c2", "arguments": {"cmd": "touch second"}}]},
        {"text": "Asked again."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        harness = _kernel(tmp_path, {})
        try:
            clicked: list[str] = []
            first = harness.execute("%%penguin --approve auto\nTouch.", on_message=_deny_all_cards(harness, clicked), timeout=180)
            second = harness.execute("%%penguin --approve auto\nAgain.", on_message=_deny_all_cards(harness, clicked), timeout=180)
            config = harness.execute("%penguin config").stdout
        finally:
            harness.close()
    assert len(clicked) == 2, "each command must ask: auto acts as ask without a sandbox"
    assert not (tmp_path / "first").exists() and not (tmp_path / "second").exists()
    assert _lines(first).count(NO_SANDBOX) == 1 and NO_SANDBOX not in _lines(second)
    assert "sandbox: cannot start here (turned off (PENGUIN_BWRAP=none)); --approve auto acts as ask" in config


def test_a_required_sandbox_refuses_commands_with_one_line_when_it_cannot_start(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text('sandbox = "required"\n')
    workspace = tmp_path / "nb"
    workspace.mkdir()
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "c1", "arguments": {"cmd": "touch ran"}}]},
        {"text": "Refused."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        harness = _kernel(workspace, {"PENGUIN_POLICY": str(policy)})
        try:
            clicked: list[str] = []
            result = harness.execute(
                "%%penguin --approve allow-all\nTouch.", on_message=_deny_all_cards(harness, clicked), timeout=180
            )
        finally:
            harness.close()
    assert clicked == [] and not (workspace / "ran").exists()
    line = (
        f"penguin: the administrator's policy ({policy}) requires the sandbox, which cannot start here "
        "(turned off (PENGUIN_BWRAP=none)): commands are refused"
    )
    assert _lines(result).count(line) == 1
    bundle = result.final_bundles()[-1][TRANSCRIPT_MIME]
    decision = next(m["payload"] for m in bundle["messages"] if m["payload"].get("type") == "approval_decision")
    assert decision["decision"] == "deny" and "the sandbox is required and cannot start here" in decision["reason"]
