"""The static `edit_cell` card shows the diff of the old and new cell source, taken from the
tool's output (what `edit_cell` told the model), in `build_blocks` and the `text/html` fallback;
bundles whose output holds no diff (denied, failed, no change) render as before."""

from __future__ import annotations

import re

import pytest

from penguin_jupyter.notebook.transcript.cell_sources import set_cell_source_lookup
from penguin_jupyter.notebook.transcript.transcript_bundle import make_bundle, transcript_mimebundle
from penguin_jupyter.notebook.transcript.transcript_html import render_html
from penguin_jupyter.notebook.transcript.transcript_model import (
    build_blocks,
    edit_cell_result,
    iter_tool_cards,
    split_edit_cell_output,
)
from penguin_jupyter.omni import approval_decision, to_dict, tool_call, tool_call_output
from penguin_jupyter.redaction import Redactor

OLD = "import pandas as pd\nvalue = 1\nprint(value)"
NEW = "import pandas as pd\nvalue = 2\nprint(value)"
ARGS = {"cell_id": "value-cell", "source": NEW, "description": "Bump"}


def _messages(output: str, *, decision: str = "allow", stop: str = "completed") -> list[dict]:
    return [
        to_dict(tool_call("edit_cell", ARGS, "e1")),
        to_dict(approval_decision(decision, "e1")),  # type: ignore[arg-type]
        to_dict(tool_call_output(output, "e1", stop)),  # type: ignore[arg-type]
    ]


def _card(messages: list[dict]):
    (card,) = iter_tool_cards(build_blocks(messages))
    return card


def _html(messages: list[dict]) -> str:
    bundle = make_bundle(messages, session_info={"session_id": "s"}, status="completed", usage=None)
    return render_html(bundle)


@pytest.fixture(autouse=True)
def _no_lookup():
    set_cell_source_lookup(None)
    yield
    set_cell_source_lookup(None)


def test_the_edit_cell_output_is_split_into_summary_and_diff():
    output = edit_cell_result("value-cell", 3, OLD, NEW)
    summary, diff = split_edit_cell_output(output) or ("", "")
    assert summary == "Replaced the source of cell value-cell (index 3)."
    assert diff.splitlines()[:2] == ["--- before", "+++ after"]
    assert "-value = 1" in diff.splitlines() and "+value = 2" in diff.splitlines()
    assert split_edit_cell_output(edit_cell_result("value-cell", 3, OLD, OLD)) is None  # (no change)
    assert split_edit_cell_output("Tool call denied by user.") is None
    assert split_edit_cell_output("Some tool said\n--- before\n+++ after\n@@ -1 +1 @@") is None


def test_an_applied_edit_card_has_the_diff_and_the_summary_as_output():
    card = _card(_messages(edit_cell_result("value-cell", 3, OLD, NEW)))
    assert card.diff is not None and card.diff.startswith("--- before\n+++ after\n@@")
    assert "-value = 1\n+value = 2" in card.diff
    assert card.output == "Replaced the source of cell value-cell (index 3)."


def test_the_output_may_come_before_the_call():
    messages = _messages(edit_cell_result("value-cell", 3, OLD, NEW))
    card = _card([messages[2], messages[0], messages[1]])
    assert card.diff is not None and "+value = 2" in card.diff and card.output.startswith("Replaced")


def test_the_html_fallback_shows_the_diff_once():
    html = _html(_messages(edit_cell_result("value-cell", 3, OLD, NEW)))
    assert '<pre class="pg-diff">' in html
    assert '<span class="pg-diff-del">-value = 1</span>' in html
    assert '<span class="pg-diff-add">+value = 2</span>' in html
    assert html.count("+value = 2") == 1  # not repeated in the output block
    assert "Replaced the source of cell value-cell (index 3).</pre>" in html


@pytest.mark.parametrize(
    ("output", "decision", "stop"),
    [
        ("Tool call denied by user.", "deny", "completed"),
        ("Replaced the source of cell value-cell (index 3). (no change)", "allow", "completed"),
        ("edit_cell failed: no notebook frontend is connected", "allow", "failed"),
    ],
)
def test_without_a_diff_in_the_output_the_card_renders_as_before(output, decision, stop):
    card = _card(_messages(output, decision=decision, stop=stop))
    assert card.diff is None and card.output == output
    html = _html(_messages(output, decision=decision, stop=stop))
    assert "pg-diff" not in html.split("</style>", 1)[1]
    assert "value = 2" in html  # the header's detail and the arguments show the new source


def test_a_failed_output_that_looks_like_a_diff_stays_output():
    output = edit_cell_result("value-cell", 3, OLD, NEW)
    card = _card(_messages(output, stop="failed"))
    assert card.diff is None and card.output == output


def test_static_cards_do_not_read_the_kernels_cell_sources():
    """The live card's preview diffs against the kernel's last known source; a saved transcript
    must render the same everywhere, so a call without output shows no invented diff."""
    set_cell_source_lookup(lambda cell_id: "something else entirely")
    card = _card([to_dict(tool_call("edit_cell", ARGS, "e1"))])
    assert card.diff is None and card.detail.startswith("import pandas as pd")


def test_secrets_in_the_old_source_are_redacted_in_the_diff():
    secret = "sk-live-0123456789abcdef"
    old = f'API_KEY = "{secret}"\nvalue = 1'
    bundle = make_bundle(
        _messages(edit_cell_result("value-cell", 3, old, NEW)),
        session_info={"session_id": "s"},
        status="completed",
        usage=None,
    )
    shown = transcript_mimebundle(bundle, redactor=Redactor([("API_KEY", secret)]))
    assert secret not in str(shown)
    assert re.search(
        r'<span class="pg-diff-del">-API_KEY = (&quot;|")\[redacted:API_KEY\]', shown["text/html"]
    )
