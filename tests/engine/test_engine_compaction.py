"""Engine scenarios I (compaction) of tests/SCENARIOS.md: triggers, summarize (boundary and
mid-task), retries and attempt stamping, unusable summaries, the committed rule, discard,
manual compaction, summary streaming, aborts, and the deferred Trace rotation."""

from __future__ import annotations

import asyncio

from penguin_jupyter.engine import (
    SUMMARY_RETRY_GUIDANCE,
    CompactionSettings,
    ContextEngine,
    EngineState,
    effective_context_threshold,
)
from penguin_jupyter.interfaces import AbortSignal, LLMOutcome
from penguin_jupyter.omni import (
    assistant_text,
    partial_text,
    session_meta,
    thinking,
    tool_call,
    tool_call_output,
    tool_list_ready,
    user_text,
)
from tests.support.fakes import (
    FakeEnv,
    LLMFactory,
    MemoryTrace,
    ScriptedLLM,
    allow,
    collect,
    deny,
    reply,
    settings,
    texts,
    types,
    usage,
)

REPAIR = "[tool error] the compaction request expects a summary, not tool calls"
TIMEOUT = LLMOutcome("timeout", "idle timeout")


def meta():
    return session_meta(
        session_id="sess_lazy",
        provider="p",
        model_id="m",
        model_context_window=200000,
        system_prompt="sys",
        agent_state="/a",
        workspace="/w",
    )


def events(msgs, kind):
    return [m.payload for m in msgs if m.type == "event_msg" and m.payload.type == kind]


def between(msgs, first="compaction_begin", last="compaction_end"):
    kinds = types(msgs)
    return msgs[kinds.index(first) + 1 : kinds.index(last)]


def engine_for(llm, *factory_llms, **kwargs):
    factory = LLMFactory(*factory_llms)
    kwargs.setdefault("compaction", settings())
    kwargs.setdefault("backoff_base_ms", 1)
    engine = ContextEngine(llm, FakeEnv(), create_llm=factory, **kwargs)
    return engine, factory


def tool_turn(call_id="c1", total=150):
    return [tool_call("exec_command", {"cmd": "x"}, call_id), usage(total)]


def payload_view(msgs):
    out = []
    for m in msgs:
        p = m.payload
        out.append(p.output if p.type == "tool_call_output" else p.text)
    return out


# --- 67 boundary summarize -------------------------------------------------------------------


async def test_67a_boundary_summarize_end_to_end():
    llm1 = ScriptedLLM(
        [assistant_text("answer one"), usage(150, 150)],
        [assistant_text("[summary]the distilled summary[/summary]"), usage(160, 310)],
    )
    llm2 = ScriptedLLM([assistant_text("answer two"), usage(40, 350)])
    trace = MemoryTrace()
    engine, factory = engine_for(llm1, llm2, trace=trace, session_meta=meta())
    out = await collect(engine.run([user_text("task one")]))
    begins, endings = events(out, "compaction_begin"), events(out, "compaction_end")
    assert [(b.reason, b.mode, b.context, b.turns) for b in begins] == [("context", "summarize", 150, 1)]
    assert [(e.status, e.attempt) for e in endings] == [("completed", 1)]
    assert "COMPACT NOW" not in texts(out)
    inside = between(out)
    assert types(inside) == ["text", "token_usage"]
    assert inside[0].payload.text == "[summary]the distilled summary[/summary]"
    assert inside[1].payload.request.total == 160
    assert [t.total for t in factory.tokens] == [310]
    assert engine.llm is llm2
    await collect(engine.run([user_text("task two")]))
    assert texts(llm2.calls[0]) == [
        "[context_summary]\nthe distilled summary\n[/context_summary]",
        "task two",
    ]
    old, new = trace.files
    assert types(old).count("compaction_begin") == 1 and types(old).count("compaction_end") == 1
    assert "COMPACT NOW" in texts(old)
    assert types(new)[0] == "session_meta"
    assert texts(new)[:2] == ["[context_summary]\nthe distilled summary\n[/context_summary]", "task two"]


async def test_67b_deferred_trace_rotation_with_tool_list():
    llm1 = ScriptedLLM(
        [assistant_text("answer one"), usage(150)], [assistant_text("[summary]s[/summary]"), usage(160)]
    )
    llm2 = ScriptedLLM([assistant_text("answer two"), usage(40)])
    trace = MemoryTrace()
    tools = tool_list_ready([{"name": "exec_command", "description": "run"}])
    engine, _ = engine_for(llm1, llm2, trace=trace, session_meta=meta(), tool_list=tools)
    await collect(engine.run([user_text("task 1")]))
    assert len(trace.files) == 1
    await collect(engine.run([user_text("task 2")]))
    assert len(trace.files) == 2
    new = trace.files[1]
    assert types(new)[:4] == ["session_meta", "tool_list_ready", "text", "text"]
    assert texts(new)[:2] == ["[context_summary]\ns\n[/context_summary]", "task 2"]


# --- 68 mid-task summarize -----------------------------------------------------------------------


async def test_68_mid_task_summarize_single_and_three_outputs():
    for ids in (["c1"], ["c1", "c2", "c3"]):
        llm1 = ScriptedLLM(
            [*(tool_call("exec_command", {"cmd": i}, i) for i in ids), usage(150)],
            [assistant_text("[summary]continue: finish step 2[/summary]"), usage(160)],
        )
        llm2 = ScriptedLLM([assistant_text("task done"), usage(30)])
        trace = MemoryTrace()
        engine, _ = engine_for(llm1, llm2, trace=trace, session_meta=meta())
        out = await collect(engine.run([user_text("go")], approve=allow))
        request = llm1.calls[1]
        assert types(request) == [*(["tool_call_output"] * len(ids)), "text"]
        assert [m.payload.tool_call_id for m in request[:-1]] == ids
        assert request[-1].payload.text == "COMPACT NOW"
        assert all(m.payload.role == "user" for m in request)
        assert texts(llm2.calls[0]) == ["[context_summary]\ncontinue: finish step 2\n[/context_summary]"]
        assert len(llm2.calls[0]) == 1
        assert "task done" in texts(out)
        assert [t for t in types(out) if t.startswith("compaction")] == ["compaction_begin", "compaction_end"]
        assert types(trace.files[1])[0] == "session_meta"
        assert texts(trace.files[1])[0].startswith("[context_summary]")


# --- 69 failed summarize ----------------------------------------------------------------------


async def test_69_failed_summarize_keeps_context_and_is_made_up_later():
    llm1 = ScriptedLLM(
        tool_turn(),
        reply(outcome=LLMOutcome("auth", "auth error")),
        [assistant_text("finished on old context"), usage(190)],
        [assistant_text("[summary]second try[/summary]"), usage(200)],
    )
    trace = MemoryTrace()
    engine, factory = engine_for(llm1, ScriptedLLM(), trace=trace, session_meta=meta())
    out = await collect(engine.run([user_text("go")], approve=allow))
    tail = [t for t in types(out) if t in ("compaction_begin", "compaction_end", "abort")]
    assert tail == ["compaction_begin", "compaction_end", "abort"]
    end = events(out, "compaction_end")[0]
    assert (end.status, end.attempt, end.error_message) == ("failed", 1, "auth error")
    assert events(out, "abort")[0].reason == "compaction failed"
    assert factory.tokens == []
    out2 = await collect(engine.run([user_text("continue")]))
    assert types(llm1.calls[2]) == ["tool_call_output", "text"]
    assert events(out2, "compaction_end")[0].status == "completed"
    assert len(factory.tokens) == 1
    assert len(llm1.calls) == 4
    assert len(trace.files) == 1
    assert [t for t in types(trace.files[0]) if t.startswith("compaction")] == [
        "compaction_begin",
        "compaction_end",
    ] * 2


# --- 70 retry budget --------------------------------------------------------------------------


async def test_70a_compaction_exhaustion_converges_to_failed():
    llm = ScriptedLLM([assistant_text("a"), usage(150)], reply(outcome=TIMEOUT), reply(outcome=TIMEOUT))
    engine, _ = engine_for(llm, ScriptedLLM(), compaction_max_reconnects=1)
    out = await collect(engine.run([user_text("go")]))
    end = events(out, "compaction_end")[0]
    assert (end.status, end.attempt, end.error_message) == ("failed", 2, "idle timeout")
    assert texts(llm.calls[2]) == ["COMPACT NOW"]
    assert "abort" not in types(out)  # a boundary failure ends the run quietly


async def test_70b_shared_budget_recovers_on_a_later_attempt():
    failed = LLMOutcome("failed", "500 upstream")
    llm = ScriptedLLM(
        [assistant_text("a"), usage(150)],
        *[reply(outcome=failed) for _ in range(4)],
        [assistant_text("[summary]ok[/summary]"), usage(160)],
    )
    engine, _ = engine_for(llm, ScriptedLLM(), max_reconnects=4)
    out = await collect(engine.run([user_text("go")]))
    end = events(out, "compaction_end")[0]
    assert (end.status, end.attempt) == ("completed", 5)
    assert len(llm.calls) == 6


async def test_70c_explicit_compaction_cap_and_attempt_stamping():
    llm = ScriptedLLM([assistant_text("a"), usage(150)], *[reply(outcome=TIMEOUT) for _ in range(6)])
    trace = MemoryTrace()
    engine, _ = engine_for(llm, ScriptedLLM(), max_reconnects=8, compaction_max_reconnects=2, trace=trace)
    out = await collect(engine.run([user_text("go")]))
    assert len(llm.calls) == 4
    assert events(out, "compaction_end")[0].status == "failed"
    recorded = events(trace.records, "request_end")
    assert [e.retry_in_ms for e in recorded] == [None, 1, 2, None]
    assert [e.attempt for e in recorded] == [None, 1, 2, 3]
    assert events(out, "request_end") == recorded[:1]  # compaction request events are Trace-only


# --- 71 unusable summaries --------------------------------------------------------------------


async def test_71a_empty_responses_retry_then_fail_with_context_kept():
    llm = ScriptedLLM(
        [assistant_text("a"), usage(150)],
        *[[thinking("pondering")] for _ in range(5)],
        [assistant_text("two"), usage(50)],
    )
    trace = MemoryTrace()
    engine, factory = engine_for(llm, ScriptedLLM(), compaction_max_reconnects=4, trace=trace)
    out = await collect(engine.run([user_text("task one")]))
    assert [t for t in types(out) if t.startswith("compaction")] == ["compaction_begin", "compaction_end"]
    end = events(out, "compaction_end")[0]
    assert (end.status, end.attempt, end.error_message) == (
        "failed",
        5,
        "the response contained no usable summary",
    )
    assert "token_usage" not in types(between(out))
    assert len(llm.calls) == 6
    assert texts(llm.calls[1]) == ["COMPACT NOW"]
    for k in range(2, 6):
        assert texts(llm.calls[k]) == [SUMMARY_RETRY_GUIDANCE, "COMPACT NOW"]
    assert all(e.retry_in_ms is None for e in events(trace.records, "request_end"))
    assert factory.tokens == [] and len(trace.files) == 1
    await collect(engine.run([user_text("task two")]))
    assert texts(llm.calls[6]) == ["task two"]


async def test_71b_tool_calling_responses_get_repairs():
    llm = ScriptedLLM(
        [assistant_text("a"), usage(150)],
        *[[tool_call("exec_command", {"cmd": "x"}, f"c{k}")] for k in range(1, 6)],
        [assistant_text("b"), usage(50)],
        [assistant_text("c"), usage(50)],
    )
    trace = MemoryTrace()
    engine, _ = engine_for(llm, ScriptedLLM(), compaction_max_reconnects=4, trace=trace)
    out = await collect(engine.run([user_text("task one")], approve=allow))
    end = events(out, "compaction_end")[0]
    assert (end.status, end.attempt, end.error_message) == (
        "failed",
        5,
        "the response called tools instead of writing a summary",
    )
    assert "approval_decision" not in types(out) and "tool_call_output" not in types(out)
    for k in range(2, 6):
        sent = llm.calls[k]
        assert types(sent) == ["tool_call_output", "text", "text"]
        assert (sent[0].payload.tool_call_id, sent[0].payload.output, sent[0].payload.stop_reason) == (
            f"c{k - 1}",
            REPAIR,
            "failed",
        )
        assert texts(sent) == [SUMMARY_RETRY_GUIDANCE, "COMPACT NOW"]
    repairs = [m.payload.tool_call_id for m in trace.records if m.payload.type == "tool_call_output"]
    assert repairs == ["c1", "c2", "c3", "c4", "c5"]
    await collect(engine.run([user_text("next")]))
    assert payload_view(llm.calls[6]) == [REPAIR, "next"] and llm.calls[6][0].payload.tool_call_id == "c5"
    await collect(engine.run([user_text("later")]))
    assert payload_view(llm.calls[7]) == ["later"]


# --- 73 mid-task committed rule -----------------------------------------------------------------


async def test_73a_committed_rejection_absorbs_outputs():
    llm = ScriptedLLM(
        tool_turn("ct"),
        *[[thinking("hmm")] for _ in range(3)],
        [assistant_text("fresh"), usage(10)],
    )
    engine, _ = engine_for(llm, ScriptedLLM(), compaction_max_reconnects=2)
    out = await collect(engine.run([user_text("go")], approve=allow))
    assert [m.payload.tool_call_id for m in llm.calls[1][:1]] == ["ct"]
    assert payload_view(llm.calls[1]) == ["tool ran", "COMPACT NOW"]
    for k in (2, 3):
        assert payload_view(llm.calls[k]) == [SUMMARY_RETRY_GUIDANCE, "COMPACT NOW"]
    assert events(out, "abort")[0].reason == "compaction failed"
    await collect(engine.run([user_text("carry on")]))
    assert payload_view(llm.calls[4]) == ["carry on"]


async def test_73b_trailing_tool_calling_rejection_stashes_repair():
    llm = ScriptedLLM(
        tool_turn("ct"),
        [thinking("hmm")],
        [tool_call("exec_command", {"cmd": "y"}, "c5")],
        [assistant_text("fresh"), usage(10)],
    )
    engine, _ = engine_for(llm, ScriptedLLM(), compaction_max_reconnects=1)
    out = await collect(engine.run([user_text("go")], approve=allow))
    assert events(out, "abort")[0].reason == "compaction failed"
    await collect(engine.run([user_text("carry on")]))
    assert payload_view(llm.calls[3]) == [REPAIR, "carry on"]
    assert llm.calls[3][0].payload.tool_call_id == "c5"


async def test_73c_all_transport_failures_absorb_nothing():
    llm = ScriptedLLM(
        tool_turn("ct"), reply(outcome=TIMEOUT), reply(outcome=TIMEOUT), [assistant_text("x"), usage(5)]
    )
    engine, _ = engine_for(llm, ScriptedLLM(), compaction_max_reconnects=1)
    out = await collect(engine.run([user_text("go")], approve=allow))
    assert events(out, "abort")[0].reason == "compaction failed"
    assert payload_view(llm.calls[2]) == ["tool ran", "COMPACT NOW"]  # transport retry resends unchanged
    await collect(engine.run([user_text("carry on")]))
    assert payload_view(llm.calls[3]) == ["tool ran", "carry on"]
    assert llm.calls[3][0].payload.tool_call_id == "ct"


async def test_73d_abort_after_committed_rejection_merges_stash():
    signal = AbortSignal()
    llm = ScriptedLLM(
        tool_turn("ct"),
        [tool_call("exec_command", {"cmd": "y"}, "c1")],
        [assistant_text("x"), usage(5)],
    )
    engine, _ = engine_for(llm, ScriptedLLM(), backoff_base_ms=60000)
    asyncio.get_running_loop().call_later(0.3, signal.abort, "user")  # during the backoff
    out = await collect(engine.run([user_text("go")], approve=allow, signal=signal))
    end = events(out, "compaction_end")[0]
    assert (end.status, end.attempt) == ("aborted", 1)
    assert types(out)[-2:] == ["compaction_end", "abort"]
    assert events(out, "abort")[0].reason == "aborted during compaction"
    await collect(engine.run([user_text("next")]))
    assert payload_view(llm.calls[2]) == [REPAIR, "next"]
    assert llm.calls[2][0].payload.tool_call_id == "c1"


# --- 74 thresholds and discard ----------------------------------------------------------------


async def test_74a_session_turns_threshold_equality():
    llm1 = ScriptedLLM(
        tool_turn(total=10),
        [assistant_text("final"), usage(20)],
        [assistant_text("[summary]turns summary[/summary]"), usage(25)],
    )
    llm2 = ScriptedLLM([assistant_text("next"), usage(5)])
    engine, _ = engine_for(llm1, llm2, compaction=settings(max_context_length=0, max_session_turns=2))
    out = await collect(engine.run([user_text("task one")], approve=allow))
    begins = events(out, "compaction_begin")
    assert [(b.reason, b.turns) for b in begins] == [("turns", 2)]
    out2 = await collect(engine.run([user_text("task two")]))
    assert texts(llm2.calls[0]) == ["[context_summary]\nturns summary\n[/context_summary]", "task two"]
    assert events(out2, "compaction_begin") == []


async def test_74b_context_equal_to_threshold_triggers():
    llm = ScriptedLLM([assistant_text("a"), usage(100)], [assistant_text("[summary]s[/summary]"), usage(101)])
    engine, _ = engine_for(llm, ScriptedLLM())
    out = await collect(engine.run([user_text("go")]))
    assert [b.context for b in events(out, "compaction_begin")] == [100]
    llm_below = ScriptedLLM([assistant_text("a"), usage(99)])
    engine2, _ = engine_for(llm_below, ScriptedLLM())
    assert events(await collect(engine2.run([user_text("go")])), "compaction_begin") == []


async def test_74c_discard_defers_mid_task_then_swaps_at_task_end():
    llm1 = ScriptedLLM(tool_turn(), [assistant_text("final"), usage(160)])
    llm2 = ScriptedLLM([assistant_text("fresh"), usage(10)])
    trace = MemoryTrace()
    engine, factory = engine_for(
        llm1, llm2, compaction=settings(mode="discard"), trace=trace, session_meta=meta()
    )
    out = await collect(engine.run([user_text("go")], approve=allow))
    comp = [(m.payload.type, m.payload.mode) for m in out if m.payload.type.startswith("compaction")]
    assert comp == [("compaction_begin", "discard"), ("compaction_end", "discard")]
    assert types(out)[-2:] == ["compaction_begin", "compaction_end"]
    assert events(out, "compaction_end")[0].status == "completed"
    assert len(llm1.calls) == 2 and len(factory.tokens) == 1
    await collect(engine.run([user_text("next task")]))
    assert payload_view(llm2.calls[0]) == ["next task"]
    assert types(trace.files[1])[0] == "session_meta"
    assert texts(trace.files[1])[0] == "next task"


async def test_74d_no_create_llm_means_no_compaction():
    llm = ScriptedLLM([assistant_text("a"), usage(150)])
    engine = ContextEngine(llm, FakeEnv(), compaction=settings())
    out = await collect(engine.run([user_text("go")]))
    assert not [t for t in types(out) if t.startswith("compaction")]
    assert await engine.compact() == []
    assert engine.compactability() == "unsupported"


# --- 76 manual compaction and compactability ------------------------------------------------------


def big_settings():
    return settings(max_context_length=100000)


async def test_76a_manual_compaction_reuses_the_flow():
    llm1 = ScriptedLLM(
        [assistant_text("small"), usage(10)], [assistant_text("[summary]manual gist[/summary]"), usage(12)]
    )
    llm2 = ScriptedLLM([assistant_text("after"), usage(5)])
    engine, _ = engine_for(llm1, llm2, compaction=big_settings())
    await collect(engine.run([user_text("task")]))
    out = [m async for m in engine.compact()]
    assert [(b.reason, b.mode) for b in events(out, "compaction_begin")] == [("manual", "summarize")]
    assert events(out, "compaction_end")[0].status == "completed"
    assert texts(llm1.calls[1]) == ["COMPACT NOW"]
    await collect(engine.run([user_text("prompt")]))
    assert texts(llm2.calls[0]) == ["[context_summary]\nmanual gist\n[/context_summary]", "prompt"]


async def test_76b_manual_compaction_that_commits_nothing_restores_carry_over():
    llm1 = ScriptedLLM(
        [assistant_text("small"), usage(10)],
        reply(outcome=TIMEOUT),
        reply(outcome=TIMEOUT),
        [assistant_text("answer"), usage(11)],
    )
    engine, _ = engine_for(llm1, ScriptedLLM(), compaction=big_settings(), compaction_max_reconnects=1)
    await collect(engine.run([user_text("task")]))
    pending = user_text("pending question")
    aborted = AbortSignal()
    aborted.abort()
    await collect(engine.run([pending], signal=aborted))
    out = await engine.compact()
    assert events(out, "compaction_end")[0].status == "failed"
    assert texts(llm1.calls[1]) == ["pending question", "COMPACT NOW"]
    assert texts(llm1.calls[2]) == ["pending question", "COMPACT NOW"]
    await collect(engine.run([user_text("run3")]))
    assert llm1.calls[3][0] is pending
    assert texts(llm1.calls[3]) == ["pending question", "run3"]


async def test_76c_committed_manual_compaction_consumes_carry_over():
    llm1 = ScriptedLLM(
        [assistant_text("small"), usage(10)],
        *[[thinking("empty")] for _ in range(4)],
        [tool_call("exec_command", {"cmd": "x"}, "c9")],
        [assistant_text("answer"), usage(11)],
    )
    engine, _ = engine_for(llm1, ScriptedLLM(), compaction=big_settings(), compaction_max_reconnects=4)
    await collect(engine.run([user_text("task")]))
    aborted = AbortSignal()
    aborted.abort()
    await collect(engine.run([user_text("pending question")], signal=aborted))
    out = await engine.compact()
    assert events(out, "compaction_end")[0].status == "failed"
    assert texts(llm1.calls[1]) == ["pending question", "COMPACT NOW"]
    for k in range(2, 6):
        assert texts(llm1.calls[k]) == [SUMMARY_RETRY_GUIDANCE, "COMPACT NOW"]
    await collect(engine.run([user_text("run3")]))
    assert payload_view(llm1.calls[6]) == [REPAIR, "run3"]
    assert llm1.calls[6][0].payload.tool_call_id == "c9"


async def test_76d_compactability_states():
    llm1 = ScriptedLLM(
        [assistant_text("small"), usage(10)], [assistant_text("[summary]g[/summary]"), usage(12)]
    )
    llm2 = ScriptedLLM([assistant_text("after"), usage(5)])
    engine, _ = engine_for(llm1, llm2, compaction=big_settings())
    assert engine.compactability() == "empty"
    assert await engine.compact() == []
    await collect(engine.run([user_text("task")]))
    assert engine.compactability() == "ok"
    await engine.compact()
    assert engine.compactability() == "just_compacted"
    await collect(engine.run([user_text("again")]))
    assert engine.compactability() == "ok"
    resumed, _ = engine_for(
        ScriptedLLM(), compaction=big_settings(), initial_state=EngineState(session_turns=4)
    )
    assert resumed.compactability() == "ok"
    closed, _ = engine_for(
        ScriptedLLM(),
        compaction=big_settings(),
        initial_state=EngineState(session_turns=0, from_compaction=True),
    )
    assert closed.compactability() == "just_compacted"


async def test_76e_manual_discard_drops_paired_outputs_from_carry_over():
    llm1 = ScriptedLLM(tool_turn(total=10), [assistant_text("x"), usage(5)])
    llm2 = ScriptedLLM([assistant_text("fresh"), usage(5)])
    signal = AbortSignal()

    async def approve_then_abort(call):
        return "allow"

    engine, _ = engine_for(
        llm1, llm2, compaction=settings(mode="discard", max_context_length=100000), max_turns=1
    )
    await collect(engine.run([user_text("go")], approve=approve_then_abort, signal=signal))
    assert types(engine.snapshot().carry_over) == ["tool_call_output"]
    out = await engine.compact()
    assert [(m.payload.type, m.payload.reason) for m in out] == [
        ("compaction_begin", "manual"),
        ("compaction_end", "manual"),
    ]
    await collect(engine.run([user_text("new")]))
    assert payload_view(llm2.calls[0]) == ["new"]


# --- 77 summary streaming ---------------------------------------------------------------------


async def test_77a_partials_streamed_complete_text_trace_only():
    llm = ScriptedLLM(
        [assistant_text("a"), usage(150)],
        [
            partial_text("start"),
            partial_text("delta", "[summary]the "),
            partial_text("delta", "plan[/summary]"),
            partial_text("stop"),
            assistant_text("[summary]the plan[/summary]"),
            usage(160),
        ],
    )
    trace = MemoryTrace()
    engine, _ = engine_for(llm, ScriptedLLM(), trace=trace)
    out = await collect(engine.run([user_text("go")]))
    inside = between(out)
    assert [m.payload.text for m in inside if m.payload.type == "partial_text"] == [
        "",
        "[summary]the ",
        "plan[/summary]",
        "",
    ]
    assert "text" not in types(inside)
    assert "[summary]the plan[/summary]" in texts(trace.records)
    assert not [t for t in types(trace.records) if t.startswith("partial_")]


async def test_77b_complete_text_streamed_when_no_partials():
    llm = ScriptedLLM(
        [assistant_text("a"), usage(150)], [assistant_text("[summary]only text[/summary]"), usage(160)]
    )
    engine, _ = engine_for(llm, ScriptedLLM())
    out = await collect(engine.run([user_text("go")]))
    assert [m.payload.text for m in between(out) if m.payload.type == "text"] == [
        "[summary]only text[/summary]"
    ]


# --- 78 aborts and denied/failed tools riding the compaction request ------------------------------


async def test_78a_user_abort_during_compaction_keeps_context_and_carries_outputs():
    signal = AbortSignal()
    llm = ScriptedLLM(
        tool_turn("t1"), [assistant_text("[summary]never[/summary]")], [assistant_text("x"), usage(3)]
    )
    engine, factory = engine_for(llm, ScriptedLLM())
    out = []
    async for msg in engine.run([user_text("go")], approve=allow, signal=signal):
        out.append(msg)
        if msg.payload.type == "compaction_begin":
            signal.abort("user")
    assert types(out)[-2:] == ["compaction_end", "abort"]
    assert events(out, "compaction_end")[0].status == "aborted"
    assert factory.tokens == []
    await collect(engine.run([user_text("next")]))
    assert len(llm.calls) >= 2 and payload_view(llm.calls[1]) == ["tool ran", "next"]


async def test_78b_denied_tool_output_rides_the_compaction_request():
    llm = ScriptedLLM(tool_turn(), [assistant_text("[summary]s[/summary]"), usage(160)])
    engine, _ = engine_for(llm, ScriptedLLM([assistant_text("x"), usage(3)]))
    await collect(engine.run([user_text("go")], approve=deny))
    sent = llm.calls[1]
    assert types(sent) == ["tool_call_output", "text"]
    assert (sent[0].payload.output, sent[0].payload.stop_reason) == ("Tool call denied by user.", "aborted")


async def test_78c_failing_tool_output_rides_the_compaction_request():
    async def boom(request):
        yield tool_call_output("[tool error] boom", request.tool_call.payload.tool_call_id, "failed")

    llm = ScriptedLLM(tool_turn(), [assistant_text("[summary]s[/summary]"), usage(160)])
    engine = ContextEngine(
        llm,
        FakeEnv(handler=boom),
        compaction=settings(),
        create_llm=LLMFactory(ScriptedLLM([assistant_text("x"), usage(3)])),
    )
    await collect(engine.run([user_text("go")], approve=allow))
    sent = llm.calls[1]
    assert (sent[0].payload.output, sent[0].payload.stop_reason) == ("[tool error] boom", "failed")


async def test_abort_during_compaction_backoff():
    signal = AbortSignal()
    llm = ScriptedLLM(
        [assistant_text("a"), usage(150)], reply(outcome=TIMEOUT), [assistant_text("x"), usage(3)]
    )
    engine, _ = engine_for(llm, ScriptedLLM(), backoff_base_ms=60000)
    asyncio.get_running_loop().call_later(0.2, signal.abort, "user")
    out = await collect(engine.run([user_text("go")], signal=signal))
    end = events(out, "compaction_end")[0]
    assert (end.status, end.attempt) == ("aborted", 1)
    assert "abort" not in types(out)  # aborted at a task boundary: silent


# --- settings helpers ---------------------------------------------------------------------------


def test_effective_threshold_and_settings_defaults():
    assert effective_context_threshold(256000, 32768) == 30720
    assert effective_context_threshold(256000, None) == 125952
    assert effective_context_threshold(256000, "unknown") == 125952
    assert effective_context_threshold(256000, 1000) == 125952
    assert effective_context_threshold(100, 32768) == 100
    assert effective_context_threshold(-1, 32768) == -1
    default = CompactionSettings()
    assert (default.max_context_length, default.max_session_turns, default.mode) == (256000, -1, "summarize")
    assert default.prompt.endswith("\n\n[summary]put the summary text here...[/summary]")
    assert CompactionSettings(mode="bogus").mode == "summarize"


async def test_67b_deferred_rotation_with_the_real_trace_writer(tmp_path):
    from penguin_jupyter.trace import TraceWriter, read_trace

    llm1 = ScriptedLLM(
        [assistant_text("answer one"), usage(150)],
        [assistant_text("[summary]lazy gist[/summary]"), usage(160)],
    )
    llm2 = ScriptedLLM([assistant_text("answer two"), usage(40)])
    writer = TraceWriter(tmp_path / "2026-01-01" / "sess_lazy_001.jsonl")
    writer.write(meta())  # the session records its meta first
    engine, _ = engine_for(llm1, llm2, trace=writer, session_meta=meta())
    await collect(engine.run([user_text("task 1")]))
    assert sorted(p.name for p in (tmp_path / "2026-01-01").iterdir()) == ["sess_lazy_001.jsonl"]
    await collect(engine.run([user_text("task 2")]))
    assert sorted(p.name for p in (tmp_path / "2026-01-01").iterdir()) == [
        "sess_lazy_001.jsonl",
        "sess_lazy_002.jsonl",
    ]
    old = read_trace(tmp_path / "2026-01-01" / "sess_lazy_001.jsonl")
    new = read_trace(tmp_path / "2026-01-01" / "sess_lazy_002.jsonl")
    assert "COMPACT NOW" in texts(old) and "compaction_end" in types(old)
    assert types(new)[:3] == ["session_meta", "text", "text"]
    assert texts(new)[:3] == ["[context_summary]\nlazy gist\n[/context_summary]", "task 2", "answer two"]
    assert not [t for t in types(old + new) if t.startswith("partial_")]
