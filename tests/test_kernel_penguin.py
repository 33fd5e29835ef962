"""Kernel-level tests of `%%penguin`: a real ipykernel, real comm messages for button clicks."""

from __future__ import annotations

import json

import pytest

from tests.support_kernel import FAKE_SESSION_CODE, KernelHarness, kernel_env

pytestmark = pytest.mark.kernel


@pytest.fixture
def kernel(tmp_path):
    harness = KernelHarness(str(tmp_path), kernel_env())
    try:
        yield harness
    finally:
        harness.close()


def _click_when_shown(description: str):
    clicked: list[str] = []

    def on_message(msg, result):
        if msg["msg_type"] == "comm_open" and not clicked:
            ids = result.buttons(description)
            if ids:
                clicked.append(ids[0])
                kernel_ref[0].click(ids[0])

    kernel_ref: list[KernelHarness] = []
    return on_message, clicked, kernel_ref


def test_fake_session_approve_click_runs_the_tool(kernel):
    assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    assert kernel.execute(FAKE_SESSION_CODE).reply["content"]["status"] == "ok"
    on_message, clicked, ref = _click_when_shown("Approve")
    ref.append(kernel)
    result = kernel.execute("%%penguin\nsay hi", on_message=on_message, timeout=60)
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert clicked, "no Approve button was shown"
    check = kernel.execute("print(_state.session.decisions, _state.session.inputs)")
    assert check.stdout.strip() == "['allow'] [['say hi']]"
    bundles = result.final_bundles()
    assert bundles, "the live view was not replaced by the static bundle"
    raw = json.dumps(bundles[-1])
    assert "sk-fake-secret-123" not in raw
    assert "[redacted]" in raw
    assert result.of_type("update_display_data"), "final bundle must be a display update"


def test_fake_session_deny_click(kernel):
    kernel.execute("%load_ext penguin_jupyter")
    kernel.execute(FAKE_SESSION_CODE)
    on_message, clicked, ref = _click_when_shown("Deny")
    ref.append(kernel)
    result = kernel.execute("%%penguin --approve ask\nsay hi", on_message=on_message, timeout=60)
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert clicked
    assert kernel.execute("print(_state.session.decisions)").stdout.strip() == "['deny']"


def test_bad_option_is_one_line_and_runs_nothing(kernel):
    kernel.execute("%load_ext penguin_jupyter")
    kernel.execute(FAKE_SESSION_CODE)
    result = kernel.execute("%%penguin --approve sometimes\nsay hi")
    assert result.reply["content"]["status"] == "ok"
    assert result.stderr.strip().splitlines() == [
        "penguin: unknown approval mode 'sometimes' (choose from ask, read-only, allow-all, deny-all)"
    ]
    assert kernel.execute("print(_state.session.inputs)").stdout.strip() == "[]"
