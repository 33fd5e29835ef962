"""EventTranslator on hand-built agenthub UniEvents: scenarios 85, 86, 88, 89, 90 and the docs/model.md "Tool-call ids"
id rules as the translator applies them."""

from __future__ import annotations

from penguin_jupyter.llm import EventTranslator, ToolCallIdAllocator, usage_to_token_counts
from penguin_jupyter.omni import TokenCounts
from tests.support.llm import (
    complete_call,
    event,
    kinds,
    partial_call,
    payloads,
    text,
    thought,
    translate,
    usage,
)

# --- 85. text stream translation ------------------------------------------------------------


def test_text_stream_partials_complete_text_and_usage():
    t = EventTranslator()
    events = [
        event(),
        event(text("Hel")),
        event(text("lo")),
        event(finish="stop", usage=usage(0, 12, 0, 4)),
    ]
    out = translate(events, t)
    assert payloads(out) == [
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "start",
            "text": "",
            "stop_reason": "completed",
        },
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "delta",
            "text": "Hel",
            "stop_reason": "completed",
        },
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "delta",
            "text": "lo",
            "stop_reason": "completed",
        },
        {
            "type": "partial_text",
            "role": "assistant",
            "event_type": "stop",
            "text": "",
            "stop_reason": "completed",
        },
        {"type": "text", "role": "assistant", "text": "Hello", "stop_reason": "completed"},
    ]
    assert t.request_tokens == TokenCounts(cache_read=0, cache_write=12, output=4, total=16)


def test_item_less_event_mid_segment_changes_nothing():
    plain = translate([event(text("Hel")), event(text("lo")), event(finish="stop")])
    interrupted = translate([event(text("Hel")), event(), event(text("lo")), event(finish="stop")])
    assert payloads(plain) == payloads(interrupted)


def test_unknown_item_types_are_ignored():
    out = translate([event({"type": "image_url", "image_url": "http://x"}, text("a")), event(finish="stop")])
    assert kinds(out) == ["partial_text:start", "partial_text:delta", "partial_text:stop", "text"]


def test_length_finish_closes_as_failed():
    out = translate([event(text("cut")), event(finish="length")])
    assert [p["stop_reason"] for p in payloads(out)] == ["completed", "completed", "failed", "failed"]


def test_thinking_then_text_order_and_boundary_close():
    out = translate([event(thought("hm")), event(text("ok")), event(finish="stop")])
    assert kinds(out) == [
        "partial_thinking:start",
        "partial_thinking:delta",
        "partial_thinking:stop",
        "thinking",
        "partial_text:start",
        "partial_text:delta",
        "partial_text:stop",
        "text",
    ]
    assert payloads(out)[3] == {
        "type": "thinking",
        "role": "assistant",
        "thinking": "hm",
        "stop_reason": "completed",
    }


# --- 86. tool-call translation ---------------------------------------------------------------


def test_partials_then_authoritative_complete_tool_call():
    out = translate(
        [
            event(partial_call("call_1", "exec_command", "")),
            event(partial_call("call_1", "", '{"cmd":"ls')),
            event(partial_call("call_1", "", ' -la"}')),
            event(complete_call("call_1", "exec_command", {"cmd": "ls -la"})),
            event(finish="tool_call"),
        ]
    )
    assert payloads(out) == [
        {
            "type": "partial_tool_call",
            "role": "assistant",
            "event_type": "start",
            "name": "exec_command",
            "arguments": "",
            "tool_call_id": "call_1",
            "stop_reason": "completed",
        },
        {
            "type": "partial_tool_call",
            "role": "assistant",
            "event_type": "delta",
            "name": "",
            "arguments": '{"cmd":"ls',
            "tool_call_id": "call_1",
            "stop_reason": "completed",
        },
        {
            "type": "partial_tool_call",
            "role": "assistant",
            "event_type": "delta",
            "name": "",
            "arguments": ' -la"}',
            "tool_call_id": "call_1",
            "stop_reason": "completed",
        },
        {
            "type": "partial_tool_call",
            "role": "assistant",
            "event_type": "stop",
            "name": "",
            "arguments": "",
            "tool_call_id": "call_1",
            "stop_reason": "completed",
        },
        {
            "type": "tool_call",
            "role": "assistant",
            "name": "exec_command",
            "arguments": '{"cmd":"ls -la"}',
            "tool_call_id": "call_1",
            "stop_reason": "completed",
        },
    ]


def test_buffer_used_at_finish_without_complete_item():
    out = translate(
        [event(partial_call("c", "f", '{"x":')), event(partial_call("c", "", "1}")), event(finish="stop")]
    )
    assert payloads(out)[-1] == {
        "type": "tool_call",
        "role": "assistant",
        "name": "f",
        "arguments": '{"x":1}',
        "tool_call_id": "c",
        "stop_reason": "completed",
    }


def test_empty_id_fragments_and_complete_items_never_make_a_call():
    out = translate(
        [
            event(partial_call("", "f", '{"a":1}')),
            event(complete_call("", "f", {"a": 1})),
            event(finish="stop"),
        ]
    )
    assert out == []


def test_id_less_deltas_attach_to_the_active_call():
    out = translate(
        [
            event(partial_call("c1", "f", "")),
            event(partial_call("", "", '{"a"')),
            event(partial_call("", "", ":2}")),
            event(finish="tool_call"),
        ]
    )
    assert [(p["event_type"], p["arguments"], p["tool_call_id"]) for p in payloads(out)[:3]] == [
        ("start", "", "c1"),
        ("delta", '{"a"', "c1"),
        ("delta", ":2}", "c1"),
    ]
    assert payloads(out)[-1]["arguments"] == '{"a":2}'


def test_complete_item_mid_stream_is_emitted_before_the_next_start():
    out = translate(
        [
            event(partial_call("a", "f", '{"n":1}')),
            event(complete_call("a", "f", {"n": 1})),
            event(partial_call("b", "g", '{"n":2}')),
            event(complete_call("b", "g", {"n": 2})),
            event(finish="tool_call"),
        ]
    )
    assert [(k, p["tool_call_id"]) for k, p in zip(kinds(out), payloads(out), strict=True)] == [
        ("partial_tool_call:start", "a"),
        ("partial_tool_call:delta", "a"),
        ("partial_tool_call:stop", "a"),
        ("tool_call", "a"),
        ("partial_tool_call:start", "b"),
        ("partial_tool_call:delta", "b"),
        ("partial_tool_call:stop", "b"),
        ("tool_call", "b"),
    ]


def test_delta_and_stop_partials_carry_no_name():
    out = translate([event(partial_call("c", "f", "{}")), event(finish="stop")])
    names = [(p["event_type"], p["name"]) for p in payloads(out) if p["type"] == "partial_tool_call"]
    assert names == [("start", "f"), ("delta", ""), ("stop", "")]


def test_text_then_tool_call_closes_text_first():
    out = translate(
        [event(text("let me look")), event(complete_call("c", "f", {})), event(finish="tool_call")]
    )
    assert kinds(out) == [
        "partial_text:start",
        "partial_text:delta",
        "partial_text:stop",
        "text",
        "tool_call",
    ]
    assert payloads(out)[-1]["arguments"] == "{}"


def test_complete_item_without_arguments_serializes_empty_object():
    out = translate([event(complete_call("c", "f", None)), event(finish="tool_call")])
    assert payloads(out)[-1]["arguments"] == "{}"


# --- docs/model.md "Tool-call ids" ids in the translator ----------------------------------------------------------------


def test_name_as_id_provider_gets_suffixes_within_and_across_requests():
    ids = ToolCallIdAllocator()
    first = translate(
        [
            event(complete_call("get_time", "get_time", {})),
            event(complete_call("get_time", "get_time", {})),
            event(finish="tool_call"),
        ],
        EventTranslator(ids),
    )
    assert [p["tool_call_id"] for p in payloads(first)] == ["get_time", "get_time#2"]
    second = translate(
        [event(complete_call("get_time", "get_time", {})), event(finish="stop")], EventTranslator(ids)
    )
    assert [p["tool_call_id"] for p in payloads(second)] == ["get_time#3"]


def test_partials_and_complete_share_the_allocated_id():
    ids = ToolCallIdAllocator()
    ids.mark_used("t")
    out = translate(
        [event(partial_call("t", "t", "{}")), event(complete_call("t", "t", {})), event(finish="tool_call")],
        EventTranslator(ids),
    )
    assert {p["tool_call_id"] for p in payloads(out)} == {"t#2"}


# --- 88. usage accounting ----------------------------------------------------------------------


def test_usage_mapping_and_nulls():
    assert usage_to_token_counts(usage(5, 10, 3, 7)) == TokenCounts(
        cache_read=5, cache_write=10, output=10, total=25
    )
    assert usage_to_token_counts(usage(None, None, None, None)) == TokenCounts()


def test_last_usage_snapshot_wins_within_a_request():
    t = EventTranslator()
    translate(
        [
            event(text("a"), usage=usage(0, 16, 18, 488)),
            event(text("b"), usage=usage(0, 16, 20, 488)),
            event(finish="stop", usage=usage(0, 16, 20, 488)),
        ],
        t,
    )
    assert t.request_tokens == TokenCounts(cache_read=0, cache_write=16, output=508, total=524)


# --- 89. interrupted closure -------------------------------------------------------------------


def test_open_text_closed_with_timeout():
    t = EventTranslator()
    out = [m for e in (event(text("Par")), event(text("tial"))) for m in t.push_event(e)]
    out += list(t.finish_interrupted("timeout"))
    assert [(k, p["stop_reason"]) for k, p in zip(kinds(out), payloads(out), strict=True)] == [
        ("partial_text:start", "completed"),
        ("partial_text:delta", "completed"),
        ("partial_text:delta", "completed"),
        ("partial_text:stop", "timeout"),
        ("text", "timeout"),
    ]
    assert payloads(out)[-1]["text"] == "Partial"


def test_open_thinking_closed_with_aborted():
    t = EventTranslator()
    out = list(t.push_event(event(thought("hmm")))) + list(t.finish_interrupted("aborted"))
    assert [(k, p["stop_reason"]) for k, p in zip(kinds(out), payloads(out), strict=True)][-2:] == [
        ("partial_thinking:stop", "aborted"),
        ("thinking", "aborted"),
    ]


def test_partials_only_tool_call_closed_with_aborted():
    t = EventTranslator()
    out = list(t.push_event(event(partial_call("c", "exec_command", '{"cmd":"ls'))))
    out += list(t.finish_interrupted("aborted"))
    assert payloads(out)[-2:] == [
        {
            "type": "partial_tool_call",
            "role": "assistant",
            "event_type": "stop",
            "name": "",
            "arguments": "",
            "tool_call_id": "c",
            "stop_reason": "aborted",
        },
        {
            "type": "tool_call",
            "role": "assistant",
            "name": "exec_command",
            "arguments": '{"cmd":"ls',
            "tool_call_id": "c",
            "stop_reason": "aborted",
        },
    ]


def test_eagerly_emitted_tool_call_is_not_repeated_on_interrupt():
    t = EventTranslator()
    out = list(t.push_event(event(complete_call("c", "f", {"a": 1}))))
    assert payloads(out)[-1]["stop_reason"] == "completed"
    assert list(t.finish_interrupted("timeout")) == []


# --- 90. fidelity segmentation -----------------------------------------------------------------


def _completes(out):
    return [p for p in payloads(out) if p["type"] in ("text", "thinking", "tool_call")]


def test_signature_as_empty_thinking_delta_signs_the_block():
    out = translate(
        [event(thought("let me think")), event(thought("", {"signature": "sig-abc"})), event(text("x"))]
    )
    assert _completes(out)[0] == {
        "type": "thinking",
        "role": "assistant",
        "thinking": "let me think",
        "stop_reason": "completed",
        "fidelity": {"signature": "sig-abc"},
    }


def test_redacted_then_visible_thinking_are_two_blocks():
    out = translate(
        [
            event(thought("_REDACTED_THINKING", {"signature": "sig-red"})),
            event(thought("visible")),
            event(thought("", {"signature": "sig-vis"})),
            event(text("x")),
        ]
    )
    blocks = [(p["thinking"], p["fidelity"]) for p in _completes(out) if p["type"] == "thinking"]
    assert blocks == [("_REDACTED_THINKING", {"signature": "sig-red"}), ("visible", {"signature": "sig-vis"})]


def test_equal_reasoning_field_fidelity_is_one_block():
    f = {"reasoning_field": "reasoning_content"}
    out = translate(
        [
            event(thought("step 1, ", f)),
            event(thought("step 2, ", f)),
            event(thought("done", f)),
            event(text("x")),
        ]
    )
    blocks = [(p["thinking"], p["fidelity"]) for p in _completes(out) if p["type"] == "thinking"]
    assert blocks == [("step 1, step 2, done", f)]
    assert kinds(out).count("partial_thinking:start") == 1


def test_two_encrypted_empty_thinkings_are_two_messages():
    out = translate(
        [
            event(thought("", {"id": "rs_1", "encrypted_content": "e1"})),
            event(thought("", {"id": "rs_2", "encrypted_content": "e2"})),
            event(text("x")),
        ]
    )
    blocks = [(p["thinking"], p["fidelity"]["id"]) for p in _completes(out) if p["type"] == "thinking"]
    assert blocks == [("", "rs_1"), ("", "rs_2")]
    assert "partial_thinking:start" not in kinds(out)


def test_text_phases_split_segments():
    out = translate(
        [
            event(text("", {"phase": "planning"})),
            event(text("plan...")),
            event(text("", {"phase": "answer"})),
            event(text("final")),
            event(finish="stop"),
        ]
    )
    assert [(p["text"], p.get("fidelity")) for p in _completes(out)] == [
        ("plan...", {"phase": "planning"}),
        ("final", {"phase": "answer"}),
    ]


def test_signature_closes_text_and_next_text_has_no_fidelity():
    out = translate(
        [event(text("part one", {"signature": "sigA"})), event(text("part two")), event(finish="stop")]
    )
    assert [(p["text"], p.get("fidelity")) for p in _completes(out)] == [
        ("part one", {"signature": "sigA"}),
        ("part two", None),
    ]


def test_phase_marker_text_and_signature_merge_into_one_text():
    out = translate(
        [
            event(text("", {"phase": "answer"})),
            event(text("final")),
            event(text("", {"signature": "sigB"})),
            event(finish="stop"),
        ]
    )
    assert [(p["text"], p.get("fidelity")) for p in _completes(out)] == [
        ("final", {"phase": "answer", "signature": "sigB"})
    ]


def test_empty_text_with_only_a_signature_still_yields_a_complete_text():
    out = translate([event(text("", {"signature": "s"})), event(finish="stop")])
    assert payloads(out) == [
        {
            "type": "text",
            "role": "assistant",
            "text": "",
            "stop_reason": "completed",
            "fidelity": {"signature": "s"},
        }
    ]


def test_tool_call_fidelity_is_preserved():
    out = translate(
        [event(complete_call("c", "f", {}, {"thought_signature": "ts"})), event(finish="tool_call")]
    )
    assert payloads(out)[-1]["fidelity"] == {"thought_signature": "ts"}
