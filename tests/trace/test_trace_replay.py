"""Scenarios 80 and 81: replaying a Trace into history, carry-over, counters and closures."""

from __future__ import annotations

from penguin_jupyter import omni
from penguin_jupyter.trace import PROCESS_EXIT_PLACEHOLDER, resume_trace


def meta():
    return omni.session_meta(
        session_id="s",
        provider="p",
        model_id="m",
        model_context_window=1000,
        system_prompt="sp",
        agent_state="/a",
        workspace="/w",
    )


def usage(r: int, s: int):
    return omni.token_usage({"total": s}, {"total": r})


def texts(msgs):
    out = []
    for m in msgs:
        p = m.payload
        out.append(
            getattr(p, "text", None) or getattr(p, "output", None) or getattr(p, "thinking", None) or p.type
        )
    return out


def types(msgs):
    return [m.payload.type for m in msgs]


U, A = omni.user_text, omni.assistant_text
BEGIN, END = omni.request_begin, omni.request_end


def test_committed_rounds_enter_history_trailing_inputs_carry_over():
    state = resume_trace(
        [meta(), U("hello"), BEGIN(), A("hi"), END("completed"), usage(10, 10), U("tail input")]
    )
    assert texts(state.history) == ["hello", "hi"]
    assert texts(state.carry_over) == ["tail input"]
    assert state.session_turns == 1
    assert state.session_tokens.total == 10
    assert state.last_request_total == 10
    assert not state.context_closed
    assert state.meta is not None and state.meta.payload.session_id == "s"


def test_uncommitted_round_input_is_recarried_into_the_retry():
    state = resume_trace([meta(), U("A"), BEGIN(), END("timeout"), BEGIN(), A("ok"), END("completed")])
    assert texts(state.history) == ["A", "ok"]
    assert state.carry_over == []


def test_structured_outputs_pair_committed_calls_when_a_later_round_fails():
    call = omni.tool_call("exec_command", {"cmd": "ls"}, "tc1")
    records = [
        meta(),
        U("run it"),
        BEGIN(),
        call,
        END("completed"),
        omni.tool_call_output("result-1", "tc1"),
        BEGIN(),
        A("partial"),
        END("aborted"),
    ]
    state = resume_trace(records)
    assert types(state.history) == ["text", "tool_call"]
    assert texts(state.carry_over) == ["result-1"]


def test_begin_without_end_is_uncommitted():
    state = resume_trace([meta(), U("A"), BEGIN(), A("half")])
    assert state.history == []
    assert texts(state.carry_over) == ["A"]
    assert texts(state.render_messages) == ["A", "half"]


def test_placeholder_backfills_committed_calls_without_output():
    records = [
        meta(),
        U("go"),
        BEGIN(),
        omni.tool_call("t", "{}", "tc1"),
        omni.tool_call("t", "{}", "tc2"),
        END("completed"),
        omni.tool_call_output("done-1", "tc1"),
    ]
    state = resume_trace(records)
    assert texts(state.carry_over) == ["done-1", PROCESS_EXIT_PLACEHOLDER]
    placeholder = state.carry_over[1].payload
    assert placeholder.tool_call_id == "tc2" and placeholder.stop_reason == "aborted"
    assert "interrupted" in placeholder.output


def test_output_inside_request_span_goes_to_the_next_round():
    records = [
        meta(),
        U("go"),
        BEGIN(),
        omni.tool_call("t", "{}", "tc1"),
        END("completed"),
        BEGIN(),
        omni.tool_call_output("early", "tc1"),
    ]
    state = resume_trace(records)
    assert texts(state.carry_over) == ["early"]


def test_orphan_outputs_are_dropped_and_placeholder_goes_into_history():
    records = [
        meta(),
        U("go"),
        BEGIN(),
        omni.tool_call("t", "{}", "tc1"),
        END("completed"),
        omni.tool_call_output("orphan", "nobody"),
        U("next"),
        BEGIN(),
        A("done"),
        END("completed"),
    ]
    state = resume_trace(records)
    assert texts(state.history) == ["go", "tool_call", PROCESS_EXIT_PLACEHOLDER, "next", "done"]
    assert state.carry_over == []


# --- closed contexts and compaction spans (81) -----------------------------------------------


def _summarize_closure(summary_text: str):
    return [
        meta(),
        U("hello"),
        BEGIN(),
        A("hi"),
        END("completed"),
        usage(10, 10),
        omni.compaction_begin("context", "summarize", 10, 1),
        U("COMPACT NOW"),
        BEGIN(),
        A(summary_text),
        usage(12, 20),
        END("completed"),
        omni.compaction_end("context", "summarize", "completed", attempt=1),
    ]


def test_closed_context_summarize():
    state = resume_trace(_summarize_closure("[summary]the gist[/summary]"))
    assert state.context_closed
    assert state.history == [] and state.render_messages == [] and state.carry_over == []
    assert state.pending_summary is not None
    assert state.pending_summary.payload.text == "[context_summary]\nthe gist\n[/context_summary]"
    assert state.session_turns == 0
    assert state.session_tokens.total == 20
    assert state.last_request_total == 0


def test_closed_context_legacy_summary_form():
    state = resume_trace(_summarize_closure("<summary>the old-form gist</summary>"))
    assert state.pending_summary.payload.text == "[context_summary]\nthe old-form gist\n[/context_summary]"


def test_closed_context_discard():
    records = [
        meta(),
        U("hello"),
        BEGIN(),
        A("hi"),
        END("completed"),
        omni.compaction_begin("turns", "discard", 0, 1),
        omni.compaction_end("turns", "discard", "completed"),
    ]
    state = resume_trace(records)
    assert state.context_closed and state.pending_summary is None and state.history == []


def test_failed_compaction_round_is_dropped_by_the_generic_rule():
    records = [
        meta(),
        U("hello"),
        BEGIN(),
        A("hi"),
        END("completed"),
        omni.compaction_begin("context", "summarize", 10, 1),
        U("COMPACT NOW"),
        BEGIN(),
        END("failed", error_message="boom"),
        omni.compaction_end("context", "summarize", "failed", attempt=1, error_message="boom"),
        U("continue"),
        BEGIN(),
        A("sure"),
        END("completed"),
    ]
    state = resume_trace(records)
    assert texts(state.history) == ["hello", "hi", "continue", "sure"]
    assert state.session_turns == 2
    assert state.dangling_compaction is None


def test_textless_closure_is_void_and_replays_turn_by_turn():
    records = [
        meta(),
        U("hello"),
        BEGIN(),
        A("hi"),
        END("completed"),
        omni.compaction_begin("context", "summarize", 10, 1),
        U("COMPACT NOW"),
        BEGIN(),
        omni.thinking("hmm"),
        END("completed"),
        omni.compaction_end("context", "summarize", "completed", attempt=1),
    ]
    state = resume_trace(records)
    assert not state.context_closed
    assert types(state.history) == ["text", "text", "text", "thinking"]
    assert state.session_turns == 1


def _mid_task_compaction(with_end: bool):
    records = [
        meta(),
        U("task"),
        BEGIN(),
        omni.tool_call("t", "{}", "c0"),
        END("completed"),
        omni.tool_call_output("out0", "c0"),
        omni.compaction_begin("context", "summarize", 100, 1),
        U("COMPACT NOW"),
        BEGIN(),
        omni.tool_call("t", "{}", "c1"),
        END("completed"),
        omni.tool_call_output(
            "[tool error] the compaction request expects a summary, not tool calls", "c1", "failed"
        ),
        U("retry guidance"),
        BEGIN(),
        omni.thinking("..."),
        END("completed"),
    ]
    if with_end:
        records.append(omni.compaction_end("context", "summarize", "failed", attempt=2))
    return records


def test_absorbed_mid_task_compaction_leaves_nothing_to_resend():
    state = resume_trace(_mid_task_compaction(with_end=True))
    assert types(state.history) == [
        "text",
        "tool_call",
        "tool_call_output",
        "text",
        "tool_call",
        "tool_call_output",
        "text",
        "thinking",
    ]
    assert state.carry_over == []
    assert state.session_turns == 1


def test_abandoned_compaction_with_unanswered_repair_carries_it():
    records = _mid_task_compaction(with_end=True)[:12]  # stop after the repair output
    records.append(omni.compaction_end("context", "summarize", "failed", attempt=1))
    state = resume_trace(records)
    assert types(state.carry_over) == ["tool_call_output"]
    assert state.carry_over[0].payload.tool_call_id == "c1"


def test_dangling_compaction_is_reported_and_prompt_not_carried():
    records = [
        meta(),
        U("hello"),
        BEGIN(),
        A("hi"),
        END("completed"),
        omni.compaction_begin("context", "summarize", 10, 1),
        U("COMPACT NOW"),
        BEGIN(),
        A("[summary]half"),
    ]
    state = resume_trace(records)
    assert state.dangling_compaction is not None
    assert (state.dangling_compaction.reason, state.dangling_compaction.mode) == ("context", "summarize")
    assert "COMPACT NOW" not in texts(state.carry_over)
    assert texts(state.history) == ["hello", "hi"]


def test_abort_events_are_kept_in_render_view():
    records = [meta(), U("hello"), BEGIN(), A("hi there"), END("completed"), omni.abort("aborted by user")]
    state = resume_trace(records)
    assert types(state.render_messages) == ["text", "text", "abort"]


# --- engine-written traces round-trip (83b) ---------------------------------------------------


async def test_engine_written_two_turn_trace_replays(tmp_path):
    from penguin_jupyter.engine import ContextEngine
    from penguin_jupyter.trace import TraceWriter, read_trace
    from tests.support.fakes import FakeEnv, ScriptedLLM, allow, collect

    llm = ScriptedLLM(
        [omni.tool_call("exec_command", {"cmd": "ls"}, "c1"), usage(10, 10)],
        [A("done"), usage(20, 30)],
    )
    writer = TraceWriter(tmp_path / "s_001.jsonl")
    writer.write(meta())
    engine = ContextEngine(llm, FakeEnv(), trace=writer)
    await collect(engine.run([U("go")], approve=allow))
    records = read_trace(writer.path)
    requests = [
        m.payload.type
        for m in records
        if getattr(m.payload, "type", None) in ("request_begin", "request_end")
    ]
    assert requests == ["request_begin", "request_end", "request_begin", "request_end"]
    state = resume_trace(records)
    assert types(state.history) == ["text", "tool_call", "tool_call_output", "text"]
    assert state.session_turns == 2
    assert state.carry_over == []
    assert state.session_tokens.total == 30


async def test_engine_aborted_mid_stream_replays_raw_input(tmp_path):
    from penguin_jupyter.engine import ContextEngine
    from penguin_jupyter.interfaces import AbortSignal, LLMOutcome
    from penguin_jupyter.trace import TraceWriter, read_trace
    from tests.support.fakes import FakeEnv, ScriptedLLM, collect, reply

    signal = AbortSignal()
    llm = ScriptedLLM(
        reply(omni.assistant_text("half", stop_reason="aborted"), signal.abort, outcome=LLMOutcome("aborted"))
    )
    writer = TraceWriter(tmp_path / "s_001.jsonl")
    writer.write(meta())
    engine = ContextEngine(llm, FakeEnv(), trace=writer)
    out = await collect(engine.run([U("go")], signal=signal))
    assert out[-1].payload.type == "abort"
    state = resume_trace(read_trace(writer.path))
    assert state.history == []
    assert texts(state.carry_over) == ["go"]
    assert "[turn_aborted]" not in writer.path.read_text()


def test_closed_dangling_span_keeps_prompt_out_of_carry_over():
    records = [
        meta(),
        *[U("hello"), BEGIN(), A("hi"), END("completed")],
        omni.compaction_begin("context", "summarize", 10, 1),
        U("COMPACT NOW"),
        BEGIN(),
        A("[summary]half"),
        omni.compaction_end("context", "summarize", "failed"),  # appended by a resume
    ]
    state = resume_trace(records)
    assert state.dangling_compaction is None
    assert state.carry_over == []
    assert texts(state.history) == ["hello", "hi"]
