"""Cost and budgets in a real kernel (issue 41): `%%penguin --budget` stops a Task before the
request that could cross it (the scripted server counts what was sent), the live header and the
saved transcript show what the Task cost, `%penguin usage` names today's spend after a kernel
restart, and the administrator's daily cap is shared by two kernels of the same user."""

from __future__ import annotations

import html
import os
from pathlib import Path

import pytest

from penguin_jupyter.state import update_project_config
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model

pytestmark = pytest.mark.kernel
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
PRICE = {"input": 10.0, "cached": 1.0, "output": 10.0}
USAGE = {"prompt_tokens": 5000, "completion_tokens": 100}  # $0.051 a request at PRICE


def call(cmd: str, call_id: str) -> dict:  # type: ignore[type-arg]
    return {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": cmd}, "id": call_id}], "usage": USAGE}


def configure(server: ScriptedModelServer) -> Path:
    root = Path(os.environ["PENGUIN_HOME"])
    configure_model(root, server, price=PRICE)

    def cap(cfg) -> None:  # type: ignore[no-untyped-def]
        cfg.models[0].max_tokens = 100

    update_project_config(root, "default_project", cap)
    return root


def start(tmp_path: Path, extra_env: dict[str, str] | None = None) -> KernelHarness:
    notebook_dir = tmp_path / "nb"
    notebook_dir.mkdir(exist_ok=True)
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb"), **(extra_env or {})})
    harness = KernelHarness(str(notebook_dir), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def widget_text(result) -> str:  # type: ignore[no-untyped-def]
    """Every HTML widget value the kernel published (the live header among them)."""
    values = []
    for msg in result.messages:
        state = (msg["content"].get("data") or {}).get("state") or {}
        if isinstance(state.get("value"), str):
            values.append(state["value"])
    return "\n".join(values)


def test_budget_stops_the_cell_and_the_header_and_transcript_show_the_cost(tmp_path: Path) -> None:
    script = [call("echo a", "call_a"), call("echo b", "call_b"), {"text": "after the stop", "usage": USAGE}]
    with ScriptedModelServer(script) as server:
        configure(server)
        kernel = start(tmp_path)
        try:
            result = kernel.execute("%%penguin --approve allow-all --budget 0.12\nRun two commands", timeout=120)
            usage = kernel.execute("%penguin usage", timeout=60)
            after = kernel.execute("%%penguin --approve allow-all\ngo on", timeout=120)
        finally:
            kernel.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert len([c for c in server.calls]) == 3  # 2 in the stopped cell, 1 after
    assert "cost: $0.051 this Task" in widget_text(result)  # the live header, after request 1
    bundle = result.final_bundles()[-1]
    data = bundle[TRANSCRIPT_MIME]
    assert data["usage"]["cost"]["task_usd"] == pytest.approx(0.102)
    assert "cost: $0.102 this Task · $0.102 session" in bundle["text/html"]
    assert "[stopped before a model request: this cell's budget of $0.12" in html.unescape(bundle["text/html"])
    assert "cost: $0.102 this Task" in bundle["text/plain"]
    assert "last Task cost: $0.102 this Task" in usage.stdout
    assert "today (" in usage.stdout and "$0.102 over 2 requests" in usage.stdout
    assert after.reply["content"]["status"] == "ok"


def test_bad_budget_values_are_one_line_each(tmp_path: Path) -> None:
    with ScriptedModelServer([]) as server:
        configure(server)
        kernel = start(tmp_path)
        try:
            outputs = [kernel.execute(f"%%penguin --budget {value}\nhi", timeout=60) for value in ("-1", "abc", "1e400")]
            line = kernel.execute("%penguin budget abc", timeout=60)
            good = kernel.execute("%penguin budget $2.50", timeout=60)
        finally:
            kernel.close()
    assert server.calls == []
    for out in [*outputs, line]:
        text = out.stderr + out.stdout
        assert "budget needs a positive number of USD" in text
        assert "Traceback" not in text and len(text.strip().splitlines()) == 1
    assert "at most $2.50" in good.stdout


def test_the_administrators_daily_cap_is_shared_by_two_kernels_and_survives_a_restart(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("max_usd_per_day = 0.08\n")
    env = {"PENGUIN_POLICY": str(policy)}
    script = [{"text": "first kernel", "usage": USAGE}, {"text": "never sent", "usage": USAGE}]
    with ScriptedModelServer(script) as server:
        configure(server)
        first = start(tmp_path, env)
        try:
            spent = first.execute("%%penguin\nhi", timeout=120)
        finally:
            first.close()  # the kernel is gone; today's spend stays in the ledger
        second = start(tmp_path, env)
        try:
            usage = second.execute("%penguin usage", timeout=60)
            refused = second.execute("%%penguin\nhi again", timeout=120)
        finally:
            second.close()
    assert spent.reply["content"]["status"] == "ok"
    assert len(server.calls) == 1
    assert "$0.051 over 1 requests" in usage.stdout
    shown = html.unescape(refused.final_bundles()[-1]["text/html"])
    assert "the administrator's daily cap of $0.08" in shown
    assert "spent today by all your kernels" in shown
