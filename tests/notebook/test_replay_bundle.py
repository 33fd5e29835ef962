"""The checks a saved transcript bundle passes before a replay shows it (transcript/replay_bundle.py).

What `make_bundle` writes for a completed Task (tool lists by name, subagent messages, usage)
validates and comes back as the same messages; everything else is refused with one line: another
version or status, unknown keys, a session header that is not short strings, usage that is not
token counts, a message no model accepts, a partial, too many messages, too deep an origin, too
large a bundle, an approval decision's reason that is not a short string. A decision's reason
(why no click was needed) survives the replay as plain text: escaped, one line, invisible
characters shown, nothing fetched.
"""

from __future__ import annotations

import pytest

from penguin_jupyter.notebook.runtime.saved_transcript import rebuilt_transcript
from penguin_jupyter.notebook.transcript import replay_bundle
from penguin_jupyter.notebook.transcript.replay_bundle import ReplayRefused, validate_replay_bundle
from penguin_jupyter.notebook.transcript.transcript_bundle import TRANSCRIPT_MIME, make_bundle
from penguin_jupyter.omni import (
    approval_decision,
    assistant_text,
    empty_token_counts,
    to_dict,
    token_usage,
    tool_call,
    tool_call_output,
    tool_list_ready,
    user_text,
    with_origin,
)
from penguin_jupyter.redaction import Redactor
from tests.support.no_fetch import audit

pytestmark = pytest.mark.security

RULE_REASON = "allowed by rule 1 (ls*) in /home/u/.penguin/data/default_project/approval_rules.toml"


def _bundle(reasons: dict[str, str] | None = None) -> dict:
    messages = [
        user_text("go"),
        tool_list_ready([{"name": "exec_command", "description": "run", "parameters": {"type": "object"}}]),
        tool_call("exec_command", {"cmd": "ls"}, "c1"),
        approval_decision("allow", "c1"),
        tool_call_output("a\nb", "c1"),
        with_origin(assistant_text("child says hi"), "session-child"),
        assistant_text("done"),
    ]
    usage = token_usage(empty_token_counts(), empty_token_counts())
    return make_bundle(
        messages,
        session_info={"session_id": "s-1", "provider": "p"},
        status="completed",
        usage=usage,
        decision_reasons=reasons,
    )


def test_what_make_bundle_writes_validates_and_comes_back_as_the_same_messages():
    bundle = _bundle({"c1": RULE_REASON})
    checked = validate_replay_bundle(bundle)
    assert checked.decision_reasons == {"c1": RULE_REASON}
    again = make_bundle(
        checked.messages,
        session_info=checked.session,
        status="completed",
        usage=checked.usage,
        decision_reasons=checked.decision_reasons,
    )
    assert again == bundle
    assert [to_dict(m) for m in checked.messages][-2]["origin"] == ["session-child"]


@pytest.mark.parametrize(
    ("spoil", "reason"),
    [
        (lambda b: [b], "not a JSON object"),
        (lambda b: {**b, "version": 0}, "version is 0"),
        (lambda b: {**b, "version": True}, "version is True"),
        (lambda b: {**b, "status": "failed"}, "did not complete"),
        (lambda b: {**b, "extra": 1}, "unknown keys: extra"),
        (lambda b: {**b, "session": {"session_id": ["x"]}}, "session session_id is not a short string"),
        (lambda b: {**b, "session": {"cookie": "x"}}, "unknown key 'cookie'"),
        (lambda b: {**b, "session": {"workspace": "w" * 5000}}, "not a short string"),
        (lambda b: {**b, "usage": {"session": {}}}, "usage is not"),
        (lambda b: {**b, "usage": {"session": {"total": "many"}, "request": {}}}, "usage is invalid"),
        (
            lambda b: {**b, "usage": {**b["usage"], "cost": {"task_usd": "free", "session_usd": 1}}},
            "cost is not",
        ),
        (lambda b: {**b, "usage": {**b["usage"], "price": 1}}, "usage is not"),
        (lambda b: {**b, "messages": "x"}, "messages are not a list"),
        (
            lambda b: {**b, "messages": [{"type": "model_msg", "payload": {"type": "text"}}]},
            "message 0 of the transcript is invalid",
        ),
        (
            lambda b: {**b, "messages": [to_dict(with_origin(user_text("x"), "h")) | {"origin": ["h"] * 17}]},
            "nested deeper",
        ),
        (lambda b: _with_saved_reason(b, ["allowed"]), "reason that is not a short text"),
        (lambda b: _with_saved_reason(b, "x" * 5000), "reason that is not a short text"),
    ],
)
def test_anything_else_is_refused_with_one_line(spoil, reason):
    with pytest.raises(ReplayRefused) as refused:
        validate_replay_bundle(spoil(_bundle()))
    text = str(refused.value)
    assert reason in text and "\n" not in text


def test_a_saved_cost_is_replayed_with_the_transcript():
    """A priced Task's bundle carries what it cost (usage.cost); Restart & Run All replays it
    and shows the same cost line (it was refused as "usage is not token counts" before)."""
    usage = {**to_dict(token_usage(empty_token_counts(), empty_token_counts()))["payload"]}
    usage.pop("type")
    usage["cost"] = {"task_usd": 0.102, "session_usd": 0.25, "unpriced_requests": 0}
    bundle = make_bundle(
        [user_text("go"), assistant_text("done")], session_info={}, status="completed", usage=usage
    )
    checked = validate_replay_bundle(bundle)
    assert checked.usage is not None and checked.usage["cost"]["task_usd"] == 0.102
    assert "cost: $0.102 this Task · $0.25 session" in rebuilt_transcript(bundle, Redactor({}))["text/html"]


def test_the_size_limits_refuse_a_bundle_too_large_or_too_long(monkeypatch):
    monkeypatch.setattr(replay_bundle, "MAX_REPLAY_MESSAGES", 3)
    with pytest.raises(ReplayRefused, match="more than 3 messages"):
        validate_replay_bundle(_bundle())
    monkeypatch.setattr(replay_bundle, "MAX_REPLAY_CHARS", 1000)
    with pytest.raises(ReplayRefused, match="larger than"):
        validate_replay_bundle(_bundle())


def _with_saved_reason(bundle: dict, reason: object) -> dict:
    """`bundle` with its approval decision's `reason` set to `reason`, as a forger would."""
    messages = [
        {**m, "payload": {**m["payload"], "reason": reason}}
        if m["payload"]["type"] == "approval_decision"
        else m
        for m in bundle["messages"]
    ]
    return {**bundle, "messages": messages}


def test_saved_images_are_measured_before_they_are_put_back():
    """Issue 36 (9): 500 references to one 40 KB image make 20 MB once put back — refused by
    the size limit, measured without building it (tracemalloc peak far below the 20 MB); within
    the limits the images come back; a bundle nested too deeply is a one-line refusal too."""
    import tracemalloc

    from penguin_jupyter.notebook.transcript.saved_images import SAVED_IMAGE_REF

    image = "data:image/png;base64," + "A" * 40_000
    bundle = make_bundle(
        [
            tool_call("run_python", {"code": "plot()"}, "p"),
            tool_call_output("[no output]", "p", images=[image]),
        ],
        session_info=None,
        status="completed",
    )
    bundle["messages"][-1]["payload"]["images"] = [f"{SAVED_IMAGE_REF}0"] * 500
    tracemalloc.start()
    with pytest.raises(ReplayRefused, match=r"^the transcript with its images is larger than 16 MB$"):
        validate_replay_bundle(bundle, [image])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2_000_000, f"measuring the images took {peak} bytes"
    bundle["messages"][-1]["payload"]["images"] = [f"{SAVED_IMAGE_REF}0"] * 3
    assert validate_replay_bundle(bundle, [image]).messages[-1].payload.images == [image] * 3
    deep: object = []
    for _ in range(100_000):
        deep = [deep]
    nested = {**bundle, "messages": [*bundle["messages"][:-1], {**bundle["messages"][-1], "extra": deep}]}
    with pytest.raises(ReplayRefused, match=r"^the transcript is nested too deeply$"):
        validate_replay_bundle(nested, [image])


def test_a_decision_reason_survives_the_replay_as_the_card_showed_it():
    shown = rebuilt_transcript(_bundle({"c1": RULE_REASON}), Redactor([]))
    assert f"approval: allow — {RULE_REASON}" in shown["text/html"]
    decisions = [
        m["payload"]
        for m in shown[TRANSCRIPT_MIME]["messages"]
        if m["payload"]["type"] == "approval_decision"
    ]
    assert decisions == [
        {"type": "approval_decision", "decision": "allow", "tool_call_id": "c1", "reason": RULE_REASON}
    ]


def test_a_forged_reason_is_shown_as_one_line_of_text_and_fetches_nothing():
    forged = "allowed by rule 1 <img src=http://127.0.0.2:9/x>\n<script>alert(1)</script>\u202edaer"
    shown = rebuilt_transcript(_with_saved_reason(_bundle(), forged), Redactor([]))
    markup = shown["text/html"]
    assert audit(markup).loads == [] and "<img" not in markup and "<script" not in markup
    assert "&lt;img src=http://127.0.0.2:9/x&gt; &lt;script&gt;" in markup  # one line, escaped
    assert "⟨U+202E⟩daer" in markup
    (decision,) = [
        m["payload"]
        for m in shown[TRANSCRIPT_MIME]["messages"]
        if m["payload"]["type"] == "approval_decision"
    ]
    assert (
        decision["reason"]
        == "allowed by rule 1 <img src=http://127.0.0.2:9/x> <script>alert(1)</script>⟨U+202E⟩daer"
    )
