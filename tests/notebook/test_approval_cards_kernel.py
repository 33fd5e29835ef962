"""The approval card shows everything that will run, in a real kernel (widget state on iopub).

A scripted model asks for an `exec_command` whose `cmd` is 20 lines, the first holding a bidi
override and line 5 the part that matters, and then a `run_python` whose code hides a zero-width
space. What the widget frontend receives while the Approve button waits — every HTML value and
Accordion title of the cell's widgets — holds the whole command (line 5 in the visible head, the
rest behind a "8 more lines" title), the override and the zero-width space as `⟨U+202E⟩` /
`⟨U+200B⟩`, and never the raw characters. On 838a3dd the card showed the first line only (raw).
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import pytest

from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.live_text import widget_states
from tests.support.session import configure_model

pytestmark = [pytest.mark.kernel, pytest.mark.security]

LINES = ["echo \u202eevil\u202c start", "echo two", "echo three", "echo four", "echo LINE-FIVE-SENDS-DATA"]
LINES += [f"echo line {n}" for n in range(6, 20)] + ["echo LINE-TWENTY"]
COMMAND = "\n".join(LINES)
CODE = "total = 1\u200b + 1\nprint(total)"


def _clicker(harness: KernelHarness):
    clicked: list[str] = []

    def on_message(msg, result):
        for comm_id in result.buttons("Approve"):
            if comm_id not in clicked:
                clicked.append(comm_id)
                harness.click(comm_id)

    return on_message, clicked


def _shown_while_asking(messages, nth: int) -> str:
    """Every HTML value and Accordion title the frontend shows just before the `nth` approval
    is decided (the card's row becomes "Approval: approved"): the card as the user saw it."""
    decisions = [
        index
        for index, msg in enumerate(messages)
        if msg["msg_type"] == "comm_open"
        and "Approval: " in str(msg["content"].get("data", {}).get("state", {}).get("value", ""))
    ]
    states = widget_states(messages[: decisions[nth]])
    values = [s.get("value") for s in states.values() if isinstance(s.get("value"), str)]
    titles = [t for s in states.values() for t in s.get("titles") or [] if isinstance(t, str)]
    return html.unescape("\n".join(values + titles))


def test_the_card_shows_the_whole_command_and_invisible_characters_made_visible(tmp_path):
    script = [
        {"tool_calls": [{"name": "exec_command", "id": "call_cmd", "arguments": {"cmd": COMMAND}}]},
        {"tool_calls": [{"name": "run_python", "id": "call_py", "arguments": {"code": CODE}}]},
        {"text": "Done."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        env = kernel_env({"JPY_SESSION_NAME": str(tmp_path / "cards.ipynb")})
        harness = KernelHarness(str(tmp_path), env)
        try:
            assert harness.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            on_message, clicked = _clicker(harness)
            result = harness.execute("%%penguin --approve ask\nRun it", on_message=on_message, timeout=180)
        finally:
            harness.close()
    assert result.reply["content"]["status"] == "ok"
    assert len(clicked) == 2, "the cell did not ask twice"
    command_card, code_card = (_shown_while_asking(result.messages, nth) for nth in (0, 1))
    assert "echo LINE-FIVE-SENDS-DATA" in command_card  # line 5, in the visible head
    assert "echo LINE-TWENTY" in command_card  # the rest is there, behind its title
    assert "8 more lines" in command_card
    assert "⟨U+202E⟩evil⟨U+202C⟩" in command_card
    assert "\u202e" not in command_card and "\u202c" not in command_card
    assert "total = 1⟨U+200B⟩ + 1" in code_card and "print(total)" in code_card
    assert "\u200b" not in code_card
