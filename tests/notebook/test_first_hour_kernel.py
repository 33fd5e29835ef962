"""The first hour, in a real kernel (issue 39): a provider's key alone runs a `%%penguin` cell
on that provider's default model, and a failure waiting cannot fix ends the cell at once, naming
its cause. The model is the scripted server (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` point the
provider's default endpoint at it)."""

from __future__ import annotations

import socket

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env

pytestmark = pytest.mark.kernel
MIME = "application/vnd.penguin.transcript+json"


def _kernel(tmp_path, extra: dict[str, str]) -> KernelHarness:
    notebook_dir = tmp_path / "notebooks"
    notebook_dir.mkdir(exist_ok=True)
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb"), **extra})
    harness = KernelHarness(str(tmp_path), env)
    assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return harness


def test_a_key_in_the_folders_env_runs_the_cell_on_the_providers_default_model(tmp_path):
    """Before: "No model is configured" with a key at hand."""
    key = "sk-ant-test-key-0123456789"
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / ".env").write_text(f"ANTHROPIC_API_KEY={key}\n")
    with ScriptedModelServer(["Hello from the default model."], api_key=key) as server:
        kernel = _kernel(tmp_path, {"ANTHROPIC_BASE_URL": server.root_url})
        try:
            models = kernel.execute("%penguin models")
            result = kernel.execute("%%penguin\nSay hello.", timeout=120)
        finally:
            kernel.close()
        assert [call.protocol for call in server.calls] == ["anthropic-messages"]
        assert server.requests[0]["model"] == "claude-sonnet-5"
    assert "anthropic/claude-sonnet-5  (ANTHROPIC_API_KEY)  ← in use: ANTHROPIC_API_KEY is set in .env" in models.stdout
    assert models.stdout.index("openai/gpt-5.5") < models.stdout.index("anthropic/claude-sonnet-5")
    assert (
        "penguin: no model is configured, so ANTHROPIC_API_KEY from .env selects anthropic/claude-sonnet-5"
        in result.notes
    )
    assert result.stderr == ""
    bundle = result.final_bundles()[-1][MIME]
    assert bundle["status"] == "completed"
    assert (bundle["session"]["provider"], bundle["session"]["model_id"]) == ("anthropic", "claude-sonnet-5")
    assert key not in str(result.messages)


def _closed_local_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_local_endpoint_ends_the_cell_at_the_first_attempt_naming_it(tmp_path):
    """Before: five retries over a minute, each "Request timeout: Connection error."."""
    port = _closed_local_port()
    kernel = _kernel(tmp_path, {"OPENAI_API_KEY": "sk-test-key-0123456789", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"})
    try:
        result = kernel.execute("%%penguin\nhello", timeout=120)
    finally:
        kernel.close()
    bundle = result.final_bundles()[-1]
    events = [m["payload"] for m in bundle[MIME]["messages"] if m["payload"]["type"] == "request_end"]
    assert len(events) == 1 and "retry_in_ms" not in events[0]
    cause = f"connection refused by 127.0.0.1:{port} (Connection refused); is the model server running?"
    assert events[0]["error_message"] == cause
    assert f"Request failed: {cause}" in bundle["text/html"]
    assert "Request timeout" not in bundle["text/html"]
