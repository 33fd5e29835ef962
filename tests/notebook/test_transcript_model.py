"""build_blocks and the card helpers: grouping by tool_call_id and origin, events, diffs."""

from __future__ import annotations

from penguin_jupyter.notebook.transcript.transcript_model import (
    EventBlock,
    SubagentGroup,
    TextBlock,
    ThinkingBlock,
    ToolCard,
    build_blocks,
    diff_preview,
    iter_tool_cards,
    tool_card_summary,
    tool_description,
)
from penguin_jupyter.omni import (
    abort,
    approval_decision,
    assistant_text,
    compaction_begin,
    compaction_end,
    partial_text,
    partial_tool_call,
    request_end,
    to_dict,
    tool_call,
    tool_call_output,
    user_text,
)
from tests.support.transcript import LONG_OUTPUT, child, sample_messages


def kinds(blocks):
    return [(b.kind, getattr(b, "event", None) or getattr(b, "tool_call_id", None)) for b in blocks]


def test_sample_task_groups_in_stream_order():
    blocks = build_blocks(sample_messages())
    assert kinds(blocks) == [
        ("event", "mcp_connect"),
        ("event", "retry"),
        ("thinking", None),
        ("text", None),
        ("tool", "c1"),
        ("tool", "c2"),
        ("tool", "c3"),
        ("subagent", None),
        ("event", "compaction"),
        ("event", "max_turns"),
        ("event", "abort"),
    ]
    assert isinstance(blocks[2], ThinkingBlock) and blocks[2].thinking == "I should list the files first."
    assert isinstance(blocks[3], TextBlock) and blocks[3].text == "Let me **look** at the files. <b>raw</b>"


def test_outputs_join_their_call_by_id_not_arrival_order():
    blocks = build_blocks(sample_messages())
    c1, c2 = blocks[4], blocks[5]
    assert isinstance(c1, ToolCard) and isinstance(c2, ToolCard)
    assert (c1.name, c1.decision, c1.output, c1.output_stop_reason) == (
        "exec_command",
        "allow",
        LONG_OUTPUT,
        "completed",
    )
    assert (c2.name, c2.decision, c2.output, c2.output_stop_reason) == (
        "edit_file",
        "deny",
        "Denied by user.",
        "aborted",
    )


def test_three_parallel_calls_with_shuffled_outputs():
    messages = [
        tool_call("read_file", {"file_path": "a"}, "t1"),
        tool_call("read_file", {"file_path": "b"}, "t2"),
        tool_call("read_file", {"file_path": "c"}, "t3"),
        tool_call_output("C", "t3"),
        approval_decision("allow", "t2"),
        tool_call_output("A", "t1"),
        tool_call_output("B", "t2"),
    ]
    cards = build_blocks(messages)
    assert [(c.tool_call_id, c.detail, c.output, c.decision) for c in cards] == [
        ("t1", "a", "A", None),
        ("t2", "b", "B", "allow"),
        ("t3", "c", "C", None),
    ]


def test_output_before_its_call_keeps_one_card_at_first_sight():
    cards = build_blocks(
        [
            tool_call_output("early", "x1"),
            assistant_text("hi"),
            tool_call("read_file", {"file_path": "f"}, "x1"),
        ]
    )
    assert [b.kind for b in cards] == ["tool", "text"]
    assert (cards[0].has_call, cards[0].name, cards[0].output) == (True, "read_file", "early")


def test_orphan_output_is_a_card_without_call():
    (card,) = build_blocks([tool_call_output("lost", "zz")])
    assert (card.has_call, card.tool_call_id, card.output) == (False, "zz", "lost")


def test_subagent_messages_nest_by_origin_with_their_own_ids():
    blocks = build_blocks(sample_messages())
    group = blocks[7]
    assert isinstance(group, SubagentGroup)
    assert (group.session_id, group.provider, group.model_id) == ("child-1", "anthropic", "claude-test")
    assert [b.kind for b in group.blocks] == ["text", "tool", "text"]
    assert (group.blocks[0].role, group.blocks[0].sender) == ("user", "parent_agent")
    # The child's c1 is its own card: the parent's c1 keeps its output.
    assert group.blocks[1].output == "7" and blocks[4].output == LONG_OUTPUT
    assert [c.tool_call_id for c in iter_tool_cards(blocks)] == ["c1", "c2", "c3", "c1"]


def test_two_hop_origin_nests_twice():
    messages = [
        child(assistant_text("outer"), "s1"),
        child(tool_call("read_file", {"file_path": "deep"}, "d1"), "s1", "s2"),
        child(tool_call_output("deep out", "d1"), "s1", "s2"),
        assistant_text("main"),
    ]
    blocks = build_blocks(messages)
    assert [b.kind for b in blocks] == ["subagent", "text"]
    outer = blocks[0]
    assert outer.session_id == "s1" and [b.kind for b in outer.blocks] == ["text", "subagent"]
    inner = outer.blocks[1]
    assert inner.session_id == "s2" and inner.blocks[0].output == "deep out"


def test_partials_and_silent_events_are_skipped():
    blocks = build_blocks(
        [
            partial_text("start", ""),
            partial_text("delta", "x"),
            partial_tool_call("start", "read_file", "", "t"),
            request_end("completed"),
        ]
    )
    assert blocks == []


def test_wire_dicts_and_messages_give_the_same_blocks():
    messages = sample_messages()
    assert build_blocks([to_dict(m) for m in messages]) == build_blocks(messages)


def test_event_texts():
    blocks = build_blocks(
        [
            request_end("timeout", error_message="idle timeout", attempt=2, retry_in_ms=4000),
            request_end("auth", error_message="bad key"),
            compaction_begin("manual", "discard", 500, 3),
            compaction_end("manual", "discard", "failed", error_message="boom"),
            abort(None),
            assistant_text("[reached max turns (5); stopping]", stop_reason="failed"),
        ]
    )
    assert all(isinstance(b, EventBlock) for b in blocks)
    assert [(b.event, b.text) for b in blocks] == [
        ("retry", "Request failed: idle timeout — retry 2 in 4.0 s"),
        ("request_error", "Credentials refused: bad key"),
        ("compaction", "Compaction (manual, discard) at 500 context tokens, 3 turns — failed: boom"),
        ("abort", "Aborted"),
        ("max_turns", "[reached max turns (5); stopping]"),
    ]
    assert blocks[-1].details == {"max_turns": 5}


def test_user_text_is_a_user_block():
    (block,) = build_blocks([user_text("hello")])
    assert (block.role, block.text, block.sender) == ("user", "hello", None)


def test_tool_card_summary_and_description():
    exec_call = tool_call("exec_command", {"description": "List", "cmd": "ls -la", "workdir": "/tmp"}, "c1")
    assert tool_card_summary(exec_call) == ("exec_command", "$ ls -la (in /tmp)")
    assert tool_card_summary(to_dict(exec_call)["payload"]) == ("exec_command", "$ ls -la (in /tmp)")
    assert tool_card_summary(tool_call("read_file", {"file_path": "/a/b.txt"}, "c2")) == (
        "read_file",
        "/a/b.txt",
    )
    assert tool_card_summary(tool_call("input_command", {"process_id": "proc-1", "chars": "y"}, "c3")) == (
        "input_command",
        "proc-1: y",
    )
    assert tool_card_summary(tool_call("custom", {"a": 1, "description": "d"}, "c4")) == ("custom", '{"a":1}')
    # a notebook tool's header names its cell (it read `run_cell {"cell_id":"a49…"}`)
    assert tool_card_summary(tool_call("run_cell", {"cell_id": "a49", "description": "d"}, "c6")) == (
        "run_cell",
        "cell a49",
    )
    assert tool_card_summary(tool_call("delete_cell", {"cell_id": "b7"}, "c7")) == ("delete_cell", "cell b7")
    assert tool_card_summary(tool_call("broken", "{not json", "c5")) == ("broken", "{not json")
    assert tool_description('{"description":"  Say hi  "}') == "Say hi"
    assert tool_description("{}") is None


def test_diff_preview_edit_and_write():
    edit = {"file_path": "src.ts", "old_string": "const b = 2;", "new_string": "const b = 20;"}
    assert (
        diff_preview("edit_file", edit)
        == "--- a/src.ts\n+++ b/src.ts\n@@ -1 +1 @@\n-const b = 2;\n+const b = 20;"
    )
    assert diff_preview("write_file", '{"file_path":"n.txt","content":"one\\ntwo\\n"}') == (
        "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two"
    )
    assert diff_preview("edit_file", {**edit, "replace_all": True}).endswith(
        "\n(replace_all: every occurrence)"
    )
    assert diff_preview("exec_command", {"cmd": "ls"}) is None
    assert diff_preview("edit_file", "not json") is None
    assert diff_preview("edit_file", {"file_path": "x"}) is None


def test_static_html_cards_show_the_whole_cell_source_folded_after_12_lines_and_visible_controls():
    from penguin_jupyter.notebook.transcript.transcript_bundle import make_bundle, read_bundle
    from penguin_jupyter.notebook.transcript.transcript_html import render_html
    from penguin_jupyter.omni import tool_call as make_call

    source = "\n".join(["## Summary of results", "", "fine", "", "![c](http://h.example/x?d=1)"] + [f"l{n}" for n in range(6, 21)])
    calls = [
        make_call("insert_cell", {"cell_type": "markdown", "source": source}, "c1"),
        make_call("run_python", {"code": "ok = 1  # \u202e }"}, "c2"),
    ]
    markup = render_html(read_bundle(make_bundle(calls, session_info=None, status="completed")))
    head, _, rest = markup.partition("<summary>… 8 more lines</summary>")
    assert "![c](http://h.example/x?d=1)" in head  # line 5, visible without a click
    assert "l20" in rest and "l20" not in head
    assert "ok = 1  # ⟨U+202E⟩ }" in markup and "\u202e" not in markup
