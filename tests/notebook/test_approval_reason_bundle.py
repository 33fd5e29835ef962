"""Why a decision needed no click survives into the saved transcript: `static_transcript` puts
the reason into that `approval_decision` of the bundle, the Python card model and the
labextension's TypeScript model (compiled with the repo's tsc, run in node) both read it, and
the no-fetch HTML shows it (escaped)."""

from __future__ import annotations

from penguin_jupyter.notebook.transcript.transcript_bundle import static_transcript
from penguin_jupyter.notebook.transcript.transcript_model import build_blocks
from penguin_jupyter.omni import approval_decision, assistant_text, tool_call
from tests.browser.test_labextension_model import node_model, py_blocks, run_ts  # noqa: F401 (fixture)

TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
WHY = "allowed by rule 3 (git status*) in /home/u/.penguin/data/default_project/approval_rules.toml"


def _bundle() -> dict:
    messages = [
        tool_call("exec_command", {"cmd": "git status"}, "c1"),
        approval_decision("allow", "c1"),
        tool_call("exec_command", {"cmd": "git status; touch x"}, "c2"),
        approval_decision("deny", "c2"),
        assistant_text("Done."),
    ]
    return static_transcript(
        messages, session_info={"session_id": "s"}, status="completed", decision_reasons={"c1": WHY, "c9": "x"}
    )


def test_the_saved_card_says_why_and_a_clicked_one_says_nothing() -> None:
    shown = _bundle()
    messages = shown[TRANSCRIPT_MIME]["messages"]
    cards = [block for block in build_blocks(messages) if getattr(block, "kind", "") == "tool"]
    assert [(card.decision, card.decision_reason) for card in cards] == [("allow", WHY), ("deny", None)]
    assert f"approval: allow — {WHY}" in shown["text/html"]


def test_the_labextension_model_reads_the_reason_like_python(node_model) -> None:  # noqa: F811
    messages = _bundle()[TRANSCRIPT_MIME]["messages"]
    result = run_ts(node_model, {"messages": messages, "bundle": _bundle()[TRANSCRIPT_MIME], "diffs": []})
    assert result["blocks"] == py_blocks(messages)
    assert [b.get("decision_reason") for b in result["blocks"] if b.get("kind") == "tool"] == [WHY, None]


def test_a_saved_reason_a_stranger_wrote_shows_its_invisible_characters_in_both_models(node_model) -> None:  # noqa: F811
    """A saved notebook is rendered from its own JSON before any replay: a reason with a bidi
    override reads as what it is in the Python and the TypeScript card model alike."""
    messages = [
        {**m, "payload": {**m["payload"], "reason": "allowed by rule 1\u202e (cat *)"}}
        if m["payload"]["type"] == "approval_decision" and m["payload"]["tool_call_id"] == "c1"
        else m
        for m in _bundle()[TRANSCRIPT_MIME]["messages"]
    ]
    result = run_ts(node_model, {"messages": messages, "bundle": {"messages": messages}, "diffs": []})
    assert result["blocks"] == py_blocks(messages)
    reasons = [b.get("decision_reason") for b in result["blocks"] if b.get("kind") == "tool"]
    assert reasons == ["allowed by rule 1⟨U+202E⟩ (cat *)", None]
