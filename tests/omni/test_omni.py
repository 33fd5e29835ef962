"""OmniMessage protocol (docs/protocol.md): wire round-trips, byte-exact docs/protocol.md "Examples" shapes, builders,
guards, PartialAggregator, markers (scenario 95) and from_json rejection of garbage."""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest
from pydantic import ValidationError

from penguin_jupyter import omni
from penguin_jupyter.omni import (
    STOP_REASONS,
    OmniMessage,
    PartialAggregator,
    abort,
    add_token_counts,
    approval_decision,
    assistant_text,
    compaction_begin,
    compaction_end,
    empty_token_counts,
    from_dict,
    from_json,
    goal_finished,
    image_url,
    inline_data,
    inline_thinking,
    is_complete_model_message,
    is_event,
    is_event_message,
    is_model_message,
    is_partial_payload,
    is_session_meta,
    markers,
    mcp_connect_begin,
    mcp_connect_end,
    partial_text,
    partial_thinking,
    partial_tool_call,
    partial_tool_call_output,
    request_begin,
    request_end,
    session_meta,
    subagent_event,
    text_message,
    thinking,
    to_dict,
    to_json,
    token_usage,
    tool_call,
    tool_call_output,
    tool_list_ready,
    user_text,
    with_origin,
)

TS = "2026-07-18T03:10:22.531Z"
ISO_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
DATA_URL = "data:image/png;base64,AAAA"


def at(msg: OmniMessage, timestamp: str = TS) -> OmniMessage:
    return msg.model_copy(update={"timestamp": timestamp})


def meta(**overrides) -> OmniMessage:
    fields = {
        "session_id": "session-01",
        "provider": "openai",
        "model_id": "gpt-x",
        "model_context_window": 128000,
        "system_prompt": "You are penguin.",
        "agent_state": "/data/agents/default_agent",
        "workspace": "/ws",
    }
    return session_meta(**{**fields, **overrides})


def every_message() -> list[OmniMessage]:
    """At least one message of every payload type, with optional fields both set and unset."""
    usage = {"cache_read": 1, "cache_write": 2, "output": 3, "total": 6}
    return [
        meta(),
        meta(model_context_window="unknown", source="subagent"),
        meta(source="schedule"),
        user_text("Create hello.txt"),
        user_text("[background_task_done]\n…", sender="harness"),
        user_text("from parent", sender="parent_agent"),
        assistant_text("Done — 🐧 ok", fidelity={"signature": "abc", "phase": None}),
        text_message("assistant", "cut", "aborted"),
        image_url("https://example.com/a.png"),
        image_url(DATA_URL),
        inline_data("user", "QUJD", "application/pdf"),
        inline_data("assistant", "QUJD", "audio/wav", fidelity={"id": 1}),
        thinking("hmm"),
        thinking("", fidelity={"encrypted": "xyz"}),
        inline_thinking("QUJD", "application/octet-stream", fidelity={"k": [1, None]}),
        tool_call("exec_command", {"cmd": "printf hi > hello.txt"}, "call_0"),
        tool_call("read_file", '{"file_path":"a"}', "call_1", "malformed", fidelity={"x": 1}),
        tool_call_output("[no output]", "call_0"),
        tool_call_output("image/png, 4 B", "call_2", "failed", images=[DATA_URL]),
        partial_text("start"),
        partial_text("delta", "Hel"),
        partial_text("stop", "", "aborted"),
        partial_thinking("delta", "th"),
        partial_tool_call("start", "exec_command", "", "c1"),
        partial_tool_call("delta", "", '{"cmd":', "c1"),
        partial_tool_call_output("delta", "out", "c1"),
        partial_tool_call_output("delta", "", "c1", images=[DATA_URL]),
        request_begin(),
        request_end("completed"),
        request_end("timeout", "terminated: other side closed (UND_ERR_SOCKET)", 1, 2000),
        approval_decision("allow", "call_0"),
        approval_decision("forbidden", "call_1"),
        token_usage(usage, usage),
        abort(),
        abort("aborted by user"),
        compaction_begin("context", "summarize", 1234, 7),
        compaction_end("manual", "discard", "completed"),
        compaction_end("turns", "summarize", "failed", attempt=2, error_message="boom"),
        subagent_event("session-child"),
        tool_list_ready(
            [{"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}}]
        ),
        tool_list_ready([{"name": "bare", "description": "No schema."}]),
        mcp_connect_begin(["fs", "web"]),
        mcp_connect_end(
            "failed",
            [
                {"server": "fs", "transport": "stdio", "status": "completed", "duration_ms": 12, "tools": 3},
                {
                    "server": "web",
                    "transport": "http",
                    "status": "failed",
                    "duration_ms": 40,
                    "error": "refused",
                },
            ],
        ),
        goal_finished("done", 3, 1000),
        with_origin(with_origin(partial_text("delta", "child"), "inner"), "outer"),
    ]


# --- wire round-trips ------------------------------------------------------------------------------


@pytest.mark.parametrize("msg", every_message(), ids=lambda m: m.kind)
def test_every_payload_round_trips(msg):
    line = to_json(msg)
    assert "\n" not in line
    assert from_json(line) == msg
    assert from_json(line.encode("utf-8")) == msg
    assert to_json(from_json(line)) == line
    assert from_dict(to_dict(msg)) == msg


def test_every_payload_type_is_covered():
    covered = {m.kind for m in every_message()}
    expected = set(omni.models.PAYLOAD_TYPES) | {"session_meta"}
    assert covered == expected


def test_json_is_compact_utf8_and_omits_absent_fields():
    line = to_json(at(assistant_text("Done — 🐧")))
    assert line == (
        '{"timestamp":"2026-07-18T03:10:22.531Z","type":"model_msg","payload":'
        '{"type":"text","role":"assistant","text":"Done — 🐧","stop_reason":"completed"}}'
    )
    assert "null" not in to_json(request_end("completed"))
    assert "origin" not in to_json(user_text("x"))


def test_session_meta_shape_and_source_rules():
    line = to_json(at(meta(model_context_window="unknown")))
    assert line == (
        '{"timestamp":"2026-07-18T03:10:22.531Z","type":"session_meta","payload":{"session_id":"session-01",'
        '"provider":"openai","model_id":"gpt-x","model_context_window":"unknown","system_prompt":"You are penguin.",'
        '"agent_state":"/data/agents/default_agent","workspace":"/ws"}}'
    )
    assert to_json(at(meta(source="subagent"))).endswith(',"workspace":"/ws","source":"subagent"}}')
    assert "source" not in to_json(meta(source="manual"))
    legacy = json.loads(to_json(meta()))
    legacy["payload"]["thinking_level"] = "high"
    legacy["payload"]["tools"] = [{"name": "x"}]
    legacy["payload"]["source"] = "web"
    restored = from_dict(legacy)
    assert restored == meta().model_copy(update={"timestamp": legacy["timestamp"]})
    assert is_session_meta(restored)


# --- byte-exact docs/protocol.md "Examples" ------------------------------------------------------------------------------------

SECTION_1_7 = [
    (
        user_text("Create hello.txt"),
        '{"timestamp":"…","type":"model_msg","payload":{"type":"text","role":"user","text":"Create hello.txt","stop_reason":"completed"}}',
    ),
    (
        user_text("[background_task_done]\n…", sender="harness"),
        '{"timestamp":"…","type":"model_msg","payload":{"type":"text","role":"user","text":"[background_task_done]\\n…","stop_reason":"completed","sender":"harness"}}',
    ),
    (
        tool_call("exec_command", {"cmd": "printf hi > hello.txt"}, "call_0"),
        '{"timestamp":"…","type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"exec_command","arguments":"{\\"cmd\\":\\"printf hi > hello.txt\\"}","tool_call_id":"call_0","stop_reason":"completed"}}',
    ),
    (
        approval_decision("allow", "call_0"),
        '{"timestamp":"…","type":"event_msg","payload":{"type":"approval_decision","decision":"allow","tool_call_id":"call_0"}}',
    ),
    (
        tool_call_output("[no output]", "call_0"),
        '{"timestamp":"…","type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"[no output]","tool_call_id":"call_0","stop_reason":"completed"}}',
    ),
    (
        token_usage(
            {"cache_read": 0, "cache_write": 12, "output": 5, "total": 17},
            {"cache_read": 0, "cache_write": 12, "output": 5, "total": 17},
        ),
        '{"timestamp":"…","type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":0,"cache_write":12,"output":5,"total":17},"request":{"cache_read":0,"cache_write":12,"output":5,"total":17}}}',
    ),
    (
        request_end("timeout", "…", 1, 2000),
        '{"timestamp":"…","type":"event_msg","payload":{"type":"request_end","status":"timeout","error_message":"…","attempt":1,"retry_in_ms":2000}}',
    ),
    (
        abort("aborted by user"),
        '{"timestamp":"…","type":"event_msg","payload":{"type":"abort","reason":"aborted by user"}}',
    ),
]


@pytest.mark.parametrize(("msg", "expected"), SECTION_1_7, ids=[m.kind for m, _ in SECTION_1_7])
def test_section_1_7_examples_byte_for_byte(msg, expected):
    assert to_json(at(msg, "…")) == expected
    assert from_json(expected) == at(msg, "…")


def test_abort_reason_is_serialized_as_null_when_absent():
    assert (
        to_json(at(abort()))
        == '{"timestamp":"2026-07-18T03:10:22.531Z","type":"event_msg","payload":{"type":"abort","reason":null}}'
    )
    assert from_json(to_json(abort())).payload.reason is None


def test_origin_is_last_and_never_empty():
    msg = with_origin(at(partial_text("delta", "x")), "child-1")
    assert to_json(msg).endswith(',"origin":["child-1"]}')
    raw = json.loads(to_json(at(user_text("x"))))
    raw["origin"] = []
    assert from_dict(raw).origin is None
    assert "origin" not in to_json(from_dict(raw))


# --- builders ---------------------------------------------------------------------------------------------


def test_builders_stamp_iso_millisecond_utc_timestamps():
    msg = user_text("hi")
    assert ISO_MS_Z.match(msg.timestamp)
    parsed = datetime.fromisoformat(msg.timestamp.replace("Z", "+00:00"))
    assert parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}Z" == msg.timestamp
    assert from_json(to_json(msg)).timestamp == msg.timestamp
    assert (msg.type, msg.payload.type, msg.payload.role) == ("model_msg", "text", "user")


def test_builders_default_stop_reason_completed_everywhere():
    for msg in every_message():
        stop_reason = getattr(msg.payload, "stop_reason", "completed")
        assert stop_reason in STOP_REASONS
    assert tool_call_output("x", "c").payload.stop_reason == "completed"
    assert tool_call_output("x", "c", None).payload.stop_reason == "completed"
    assert partial_text("stop").payload.stop_reason == "completed"
    assert STOP_REASONS == ("completed", "failed", "aborted", "timeout", "malformed", "auth")


def test_event_builders():
    assert approval_decision("allow", "call_1").payload.model_dump() == {
        "type": "approval_decision",
        "decision": "allow",
        "tool_call_id": "call_1",
    }
    assert to_dict(abort("stop"))["payload"] == {"type": "abort", "reason": "stop"}
    assert abort().payload.reason is None
    assert is_event(request_begin(), "request_begin")
    assert not is_event(request_begin(), "request_end")
    assert to_dict(subagent_event("s-1"))["payload"] == {"type": "subagent", "session_id": "s-1"}


def test_tool_call_arguments_dict_is_compact_and_string_is_verbatim():
    assert tool_call("exec_command", {"cmd": "ls -la"}, "c").payload.arguments == '{"cmd":"ls -la"}'
    assert tool_call("x", {"q": "naïve — ok"}, "c").payload.arguments == '{"q":"naïve — ok"}'
    assert tool_call("x", '{ "raw" : 1 }', "c").payload.arguments == '{ "raw" : 1 }'


def test_tool_call_output_images_kept_and_omitted_when_empty():
    msg = tool_call_output("image/png, 4 B", "call_img", images=[DATA_URL])
    assert to_dict(msg)["payload"] == {
        "type": "tool_call_output",
        "role": "user",
        "output": "image/png, 4 B",
        "images": [DATA_URL],
        "tool_call_id": "call_img",
        "stop_reason": "completed",
    }
    assert from_json(to_json(msg)).payload.images == [DATA_URL]
    assert "images" not in to_dict(tool_call_output("x", "c"))["payload"]
    assert "images" not in to_dict(tool_call_output("x", "c", images=[]))["payload"]


def test_image_only_partial_output_delta_has_empty_output():
    payload = to_dict(partial_tool_call_output("delta", "", "call_img", images=[DATA_URL]))["payload"]
    assert payload == {
        "type": "partial_tool_call_output",
        "role": "user",
        "event_type": "delta",
        "output": "",
        "images": [DATA_URL],
        "tool_call_id": "call_img",
        "stop_reason": "completed",
    }
    assert "images" not in to_dict(partial_tool_call_output("delta", "", "c"))["payload"]
    assert "images" not in to_dict(partial_tool_call_output("delta", "", "c", images=[]))["payload"]


def test_partial_shapes_follow_section_1_5():
    assert to_dict(partial_tool_call("start", "exec_command", "", "c1"))["payload"] == {
        "type": "partial_tool_call",
        "role": "assistant",
        "event_type": "start",
        "name": "exec_command",
        "arguments": "",
        "tool_call_id": "c1",
        "stop_reason": "completed",
    }
    assert to_dict(partial_thinking("stop", "", "aborted"))["payload"] == {
        "type": "partial_thinking",
        "role": "assistant",
        "event_type": "stop",
        "thinking": "",
        "stop_reason": "aborted",
    }


def test_empty_fidelity_is_absent_and_fidelity_round_trips_exactly():
    assert "fidelity" not in to_dict(assistant_text("x", fidelity={}))["payload"]
    assert "fidelity" not in to_dict(thinking("x", fidelity={}))["payload"]
    fidelity = {"signature": "s1", "nested": {"none": None, "list": [1, "two", None]}, "ü": "—"}
    msg = thinking("", fidelity=fidelity)
    assert from_json(to_json(msg)).payload.fidelity == fidelity
    assert '"fidelity":{"signature":"s1","nested":{"none":null,"list":[1,"two",null]},"ü":"—"}' in to_json(
        msg
    )


def test_user_sender_user_is_absent():
    assert "sender" not in to_dict(user_text("x", sender="user"))["payload"]
    assert to_dict(user_text("x", sender="server"))["payload"]["sender"] == "server"


def test_token_counts_add_fieldwise():
    a = {"cache_read": 1, "cache_write": 2, "output": 3, "total": 6}
    b = {"cache_read": 10, "cache_write": 20, "output": 30, "total": 60}
    total = add_token_counts(token_usage(a, a).payload.session, token_usage(b, b).payload.session)
    assert total.model_dump() == {"cache_read": 11, "cache_write": 22, "output": 33, "total": 66}
    assert empty_token_counts().model_dump() == {"cache_read": 0, "cache_write": 0, "output": 0, "total": 0}


def test_with_origin_prepends_and_does_not_mutate():
    base = partial_text("delta", "x")
    once = with_origin(base, "inner")
    twice = with_origin(once, "outer")
    assert base.origin is None
    assert once.origin == ["inner"]
    assert twice.origin == ["outer", "inner"]
    assert twice.payload == base.payload and twice.timestamp == base.timestamp


def test_messages_are_frozen():
    msg = user_text("x")
    with pytest.raises(ValidationError, match="frozen"):
        msg.timestamp = "later"  # type: ignore[misc]
    assert msg.model_copy(update={"timestamp": "later"}).timestamp == "later"


# --- guards ---------------------------------------------------------------------------------------------


def test_guards_classify_every_kind():
    complete = [
        user_text("q"),
        assistant_text("a"),
        thinking("t"),
        tool_call("x", "{}", "c"),
        tool_call_output("o", "c"),
    ]
    complete += [
        image_url(DATA_URL),
        inline_data("user", "QQ==", "image/png"),
        inline_thinking("QQ==", "x/y"),
    ]
    partials = [partial_text("delta", "x"), partial_thinking("start"), partial_tool_call("stop", "", "", "c")]
    partials += [partial_tool_call_output("delta", "o", "c")]
    events = [request_begin(), approval_decision("deny", "c"), abort(), token_usage({}, {})]
    for msg in complete:
        assert is_complete_model_message(msg) and is_model_message(msg)
        assert not is_partial_payload(msg) and not is_event_message(msg) and not is_session_meta(msg)
    for msg in partials:
        assert is_partial_payload(msg) and is_model_message(msg)
        assert not is_complete_model_message(msg) and not is_event_message(msg)
    for msg in events:
        assert is_event_message(msg)
        assert (
            not is_model_message(msg) and not is_complete_model_message(msg) and not is_partial_payload(msg)
        )
    assert is_session_meta(meta()) and not is_model_message(meta()) and not is_complete_model_message(meta())
    assert meta().kind == "session_meta" and abort().kind == "abort"


# --- PartialAggregator (scenario 95a) ---------------------------------------------------------------------


def aggregate_all(messages: list[OmniMessage]) -> list[OmniMessage]:
    aggregator = PartialAggregator()
    out = [done for msg in messages for done in aggregator.push(msg)]
    return out + aggregator.flush()


def test_aggregator_folds_text():
    out = aggregate_all(
        [
            partial_text("start", "Hel"),
            partial_text("delta", "lo "),
            partial_text("delta", "world"),
            partial_text("stop"),
        ]
    )
    assert len(out) == 1
    assert is_complete_model_message(out[0])
    assert (out[0].payload.type, out[0].payload.role, out[0].payload.text) == (
        "text",
        "assistant",
        "Hello world",
    )
    assert out[0].payload.stop_reason == "completed"


def test_aggregator_folds_tool_call_arguments_keeping_id():
    out = aggregate_all(
        [
            partial_tool_call("start", "exec_command", "", "c1"),
            partial_tool_call("delta", "exec_command", '{"cmd":"ls', "c1"),
            partial_tool_call("delta", "", ' -la"}', "c1"),
            partial_tool_call("stop", "", "", "c1"),
        ]
    )
    assert len(out) == 1
    payload = out[0].payload
    assert (payload.type, payload.name, payload.tool_call_id, payload.arguments) == (
        "tool_call",
        "exec_command",
        "c1",
        '{"cmd":"ls -la"}',
    )


def test_aggregator_folds_output_images():
    out = aggregate_all(
        [
            partial_tool_call_output("start", "", "c9"),
            partial_tool_call_output("delta", "image/png, 4 B", "c9"),
            partial_tool_call_output("delta", "", "c9", images=[DATA_URL]),
            partial_tool_call_output("stop", "", "c9"),
        ]
    )
    assert len(out) == 1
    assert (out[0].payload.type, out[0].payload.output, out[0].payload.images) == (
        "tool_call_output",
        "image/png, 4 B",
        [DATA_URL],
    )


def test_aggregator_passes_complete_and_event_messages_through_in_order():
    messages = [user_text("q"), tool_call("x", "{}", "c2"), approval_decision("allow", "c2"), meta()]
    out = aggregate_all(messages)
    assert out == messages
    assert [m.type for m in out] == ["model_msg", "model_msg", "event_msg", "session_meta"]


def test_aggregator_flush_emits_open_fragments_in_opening_order():
    aggregator = PartialAggregator()
    assert aggregator.push(partial_text("start", "abc")) == []
    assert aggregator.push(partial_thinking("delta", "lenient")) == []  # no start: opened leniently
    assert aggregator.push(partial_text("delta", "def")) == []
    flushed = aggregator.flush()
    assert [(m.payload.type, getattr(m.payload, "text", None) or m.payload.thinking) for m in flushed] == [
        ("text", "abcdef"),
        ("thinking", "lenient"),
    ]
    assert aggregator.flush() == []


def test_aggregator_start_finalizes_an_open_fragment_and_stop_reason_is_kept():
    out = aggregate_all(
        [
            partial_text("start", "first"),
            partial_text("start", "second"),
            partial_text("stop", "", "aborted"),
        ]
    )
    assert [(m.payload.text, m.payload.stop_reason) for m in out] == [
        ("first", "completed"),
        ("second", "aborted"),
    ]


def test_aggregator_keys_fragments_by_tool_call_id_and_origin():
    out = aggregate_all(
        [
            partial_tool_call_output("start", "", "a"),
            partial_tool_call_output("start", "", "b"),
            partial_tool_call_output("delta", "A1", "a"),
            partial_tool_call_output("delta", "B1", "b"),
            with_origin(partial_text("start", "child "), "kid"),
            partial_text("start", "parent"),
            with_origin(partial_text("stop", "text"), "kid"),
            partial_tool_call_output("stop", "", "b", "failed"),
            partial_tool_call_output("stop", "", "a"),
            partial_text("stop"),
        ]
    )
    assert [(m.kind, m.origin) for m in out] == [
        ("text", ["kid"]),
        ("tool_call_output", None),
        ("tool_call_output", None),
        ("text", None),
    ]
    assert out[0].payload.text == "child text"
    assert (out[1].payload.tool_call_id, out[1].payload.output, out[1].payload.stop_reason) == (
        "b",
        "B1",
        "failed",
    )
    assert (out[2].payload.tool_call_id, out[2].payload.output) == ("a", "A1")
    assert out[3].payload.text == "parent"


@pytest.mark.parametrize(
    ("complete", "partial_of"),
    [
        (assistant_text("Hello, 世界 — done"), lambda ev, s: partial_text(ev, s)),
        (thinking("step one\nstep two"), lambda ev, s: partial_thinking(ev, s)),
        (
            tool_call("write_file", {"file_path": "a.md", "content": "# hi\n"}, "call_7"),
            lambda ev, s: partial_tool_call(ev, "write_file" if ev == "start" else "", s, "call_7"),
        ),
        (tool_call_output("line 1\nline 2\n[exit code: 1]", "call_7", "failed"), None),
    ],
)
def test_concatenated_deltas_equal_the_complete_message(complete, partial_of):
    """docs/protocol.md "Streaming partials": the concatenation of a segment's deltas is the complete message's body."""
    payload = complete.payload
    body = getattr(payload, "text", None) or getattr(payload, "thinking", None)
    body = body or getattr(payload, "arguments", None) or payload.output
    pieces = [body[i : i + 5] for i in range(0, len(body), 5)]
    if partial_of is None:
        stream = [partial_tool_call_output("start", "", "call_7")]
        stream += [partial_tool_call_output("delta", p, "call_7") for p in pieces]
        stream += [partial_tool_call_output("stop", "", "call_7", payload.stop_reason)]
    else:
        stream = (
            [partial_of("start", "")] + [partial_of("delta", p) for p in pieces] + [partial_of("stop", "")]
        )
    (rebuilt,) = aggregate_all(stream)
    assert rebuilt.payload == payload


# --- markers (scenario 95b and docs/protocol.md "Markers") --------------------------------------------------------------------


def test_turn_blocks_round_trip_through_unwrap():
    lines = [markers.transcribe_user_input("go"), markers.transcribe_tool_call("read_file", "t1", "{}")]
    aborted = markers.build_turn_aborted_block(lines)
    assert aborted.startswith("[turn_aborted]\n")
    assert '  [tool_call name="read_file" id="t1"]{}[/tool_call]' in aborted
    assert (
        aborted
        == '[turn_aborted]\n  [user_input]go[/user_input]\n  [tool_call name="read_file" id="t1"]{}[/tool_call]\n[/turn_aborted]'
    )
    assert markers.unwrap_synthetic_block(aborted) == "\n".join(lines)
    assert (
        markers.unwrap_synthetic_block(markers.build_turn_retried_block(["  [text]x[/text]"]))
        == "  [text]x[/text]"
    )
    assert (
        markers.unwrap_synthetic_block("<turn_aborted>\n  <text>x</text>\n</turn_aborted>")
        == "  <text>x</text>"
    )
    assert markers.unwrap_synthetic_block("[turn_aborted]\nx\n[/turn_retried]") is None
    assert markers.unwrap_synthetic_block("[turn_aborted]\nx\n</turn_aborted>") is None
    assert markers.unwrap_synthetic_block("just a message") is None
    assert markers.unwrap_synthetic_block("before\n[turn_aborted]\nx\n[/turn_aborted]") is None
    assert markers.unwrap_synthetic_block("[turn_retried]\nx\n[/turn_retried]\n  \n") == "x"


def test_empty_turn_block_and_transcript_lines():
    assert markers.build_turn_aborted_block([]) == "[turn_aborted]\n[/turn_aborted]"
    assert markers.unwrap_synthetic_block("[turn_aborted]\n[/turn_aborted]") == ""
    assert markers.transcribe_thinking("t") == "  [thinking]t[/thinking]"
    assert markers.transcribe_text("a [b] <c>") == "  [text]a [b] <c>[/text]"
    assert (
        markers.transcribe_tool_call_output("call_0", "aborted", "partial")
        == '  [tool_call_output id="call_0" status="aborted"]partial[/tool_call_output]'
    )


def test_user_steering_wraps_and_parses():
    assert markers.user_steering_text("switch branch") == "[user_steering]\nswitch branch\n[/user_steering]"
    assert markers.parse_user_steering_text(markers.user_steering_text("switch branch")) == "switch branch"
    assert markers.parse_user_steering_text(markers.user_steering_text("line1\nline2")) == "line1\nline2"
    assert markers.parse_user_steering_text("[user_steering]\nok\n[/user_steering]\n") == "ok"
    assert markers.parse_user_steering_text("fix the bug") is None
    assert markers.parse_user_steering_text("what does [user_steering] mean?") is None
    assert markers.parse_user_steering_text("hi\n[user_steering]\nx\n[/user_steering]") is None
    assert markers.parse_user_steering_text("<user_steering>\nx\n</user_steering>") is None
    assert markers.parse_user_steering_text("") is None


def test_marker_block_summary_and_strip():
    assert markers.marker_block("demo", "body") == "[demo]\nbody\n[/demo]"
    assert markers.build_context_summary_text("the gist") == "[context_summary]\nthe gist\n[/context_summary]"
    assert markers.strip_marker_blocks("a[demo]x[/demo]b", "demo") == "ab"
    assert markers.strip_marker_blocks("a<demo>x</demo>b", "demo") == "ab"
    assert markers.strip_marker_blocks("a[/demo]b[demo]c", "demo") == "abc"
    assert markers.strip_marker_blocks("check the [config] section", "demo") == "check the [config] section"
    assert markers.starts_with_marker("[context_summary]\nx", "context_summary")
    assert markers.starts_with_marker("<context_summary>\nx", "context_summary")
    assert not markers.starts_with_marker("hi [context_summary]", "context_summary")


@pytest.mark.parametrize(
    ("raw", "summary"),
    [
        ("preamble [summary]new form[/summary] postscript", "new form"),
        ("preamble <summary>old form</summary> postscript", "old form"),
        ("  tagless output used verbatim  ", "tagless output used verbatim"),
        ("[summary]a[/summary] <summary>b</summary>", "a"),
        ("[summary]\n[/summary]\nThe actual summary body.", "The actual summary body."),
        ("[summary]\n[summary][/summary]\nBody after a doubled open tag.", "Body after a doubled open tag."),
        ("[summary]\n[summary]\nBody inside.[/summary]", "Body inside."),
        ("[summary][/summary]<summary>legacy body</summary>", "legacy body"),
        ("[summary][/summary]", ""),
        ("[summary]\n[/summary]", ""),
    ],
)
def test_extract_summary_ladder(raw, summary):
    assert markers.extract_summary(raw) == summary


def test_attachment_lines():
    assert markers.attached_image_line("/ws/a.png") == "[attached image: /ws/a.png]"
    assert markers.attached_image_line("https://x.y/a.png") == "[attached image: https://x.y/a.png]"
    assert markers.attached_file_line("/ws/data.csv") == "[attached file: /ws/data.csv]"


# --- from_json rejects garbage with one-line ValueErrors -------------------------------------------------


def _with(payload_update: dict | None = None, **envelope) -> str:
    data = json.loads(to_json(at(user_text("x"))))
    data.update(envelope)
    if payload_update is not None:
        data["payload"] = {**data["payload"], **payload_update}
    return json.dumps(data)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("", "not JSON: "),
        ("{not json", "not JSON: "),
        (b"\xff\xfe", "not JSON: "),
        ("[1,2]", "OmniMessage must be a JSON object, got list"),
        ("42", "OmniMessage must be a JSON object, got int"),
        ("null", "OmniMessage must be a JSON object, got NoneType"),
        ('{"type":"model_msg"}', "message payload must be a JSON object"),
        (_with(type="weird_msg"), "unknown message type 'weird_msg'"),
        (_with({"type": "hologram"}), "unknown model_msg payload type 'hologram'"),
        (_with(type="event_msg"), "unknown event_msg payload type 'text'"),
        (_with(type="session_meta"), "session_meta payload must not carry a type (got 'text')"),
        (_with({"role": "robot"}), "invalid text message: payload.text.role: "),
        (_with({"stop_reason": "exploded"}), "invalid text message: payload.text.stop_reason: "),
        (_with({"text": None}), "invalid text message: payload.text.text: "),
        (_with(timestamp=None), "invalid text message: timestamp: "),
    ],
)
def test_from_json_rejects_garbage_and_unknown_types(line, message):
    with pytest.raises(ValueError) as info:
        from_json(line)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_from_json_ignores_unknown_extra_keys():
    line = _with({"extra_field": 1}, extra_envelope="x")
    assert from_json(line) == at(user_text("x"))
