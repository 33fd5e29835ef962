"""Engine seams beyond the scenarios: best-effort Trace writes, the resume state
(`initial_state` / `snapshot()`), option validation and the awaitable `compact()`."""

from __future__ import annotations

import pytest

from penguin_jupyter.engine import ContextEngine, EngineState
from penguin_jupyter.omni import TokenCounts, assistant_text, session_meta, tool_call_output, user_text
from tests.support.fakes import (
    FakeEnv,
    LLMFactory,
    MemoryTrace,
    ScriptedLLM,
    collect,
    settings,
    texts,
    types,
    usage,
)


class BrokenTrace:
    def write(self, msg):
        raise OSError("disk full")

    def rotate(self):
        raise OSError("cannot rotate")


async def test_trace_failures_are_logged_and_never_end_the_run(caplog):
    llm = ScriptedLLM([assistant_text("fine"), usage(3)])
    engine = ContextEngine(
        llm, FakeEnv(), trace=BrokenTrace(), initial_state=EngineState(pending_trace_rotation=True)
    )
    out = await collect(engine.run([user_text("go")]))
    assert "fine" in texts(out)
    assert "[trace] rotate failed: cannot rotate" in caplog.messages
    assert "[trace] write failed: disk full" in caplog.messages


async def test_initial_state_resumes_carry_over_summary_and_rotation():
    meta = session_meta(
        session_id="s",
        provider="p",
        model_id="m",
        model_context_window="unknown",
        system_prompt="sys",
        agent_state="/a",
        workspace="/w",
    )
    summary = user_text("[context_summary]\nold gist\n[/context_summary]")
    carried = tool_call_output("[interrupted: process exited before the tool finished]", "c1", "aborted")
    state = EngineState(
        carry_over=[carried],
        pending_summary=summary,
        session_turns=0,
        from_compaction=True,
        session_tokens=TokenCounts(total=500),
        last_request_total=0,
        pending_trace_rotation=True,
    )
    llm = ScriptedLLM([assistant_text("resumed"), usage(50, 550)])
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(), trace=trace, session_meta=meta, initial_state=state)
    assert engine.compactability() == "unsupported"
    await collect(engine.run([user_text("continue")]))
    assert llm.calls[0] == [summary, carried, llm.calls[0][2]]
    assert texts(llm.calls[0]) == ["[context_summary]\nold gist\n[/context_summary]", "continue"]
    # rotation happened lazily at the first write: session_meta heads the file
    assert types(trace.files[0])[:3] == ["session_meta", "text", "text"]
    snap = engine.snapshot()
    assert (snap.session_turns, snap.last_request_total, snap.session_tokens.total) == (1, 50, 550)
    assert snap.carry_over == [] and snap.pending_summary is None and snap.pending_trace_rotation is False


async def test_compact_is_both_awaitable_and_iterable():
    llm1 = ScriptedLLM([assistant_text("a"), usage(10)], [assistant_text("[summary]g[/summary]"), usage(11)])
    engine = ContextEngine(
        llm1,
        FakeEnv(),
        compaction=settings(max_context_length=1000),
        create_llm=LLMFactory(ScriptedLLM([assistant_text("b"), usage(3)])),
    )
    await collect(engine.run([user_text("go")]))
    kinds = [m.payload.type async for m in engine.compact()]
    assert kinds == ["compaction_begin", "text", "token_usage", "compaction_end"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_reconnects": -1}, "max_reconnects must be a non-negative integer, got -1"),
        ({"backoff_base_ms": "fast"}, "backoff_base_ms must be a non-negative integer, got 'fast'"),
        ({"max_turns": 1.5}, "max_turns must be an integer, got 1.5"),
    ],
)
def test_bad_options_get_one_line_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        ContextEngine(ScriptedLLM(), FakeEnv(), **kwargs)
    assert str(info.value) == message


async def test_llm_contract_violations_become_failed_outcomes():
    class RaisingLLM:
        def __init__(self):
            self.calls = 0

        async def stream_generate(self, parameters):
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("socket exploded")
            yield assistant_text("recovered")
            # no outcome at all: a second violation

    llm = RaisingLLM()
    out = await collect(
        ContextEngine(llm, FakeEnv(), max_reconnects=1, backoff_base_ms=0).run([user_text("go")])
    )
    ends = [m.payload for m in out if m.type == "event_msg" and m.payload.type == "request_end"]
    assert [(e.status, e.error_message) for e in ends] == [
        ("failed", "LLM stream raised: socket exploded"),
        ("failed", "LLM stream ended without an outcome"),
    ]
    assert out[-1].payload.reason == "llm request failed after 1 retries: LLM stream ended without an outcome"


async def test_concurrent_run_is_refused():
    llm = ScriptedLLM([assistant_text("a"), usage(3)])
    engine = ContextEngine(llm, FakeEnv())
    first = engine.run([user_text("one")])
    await first.__anext__()
    with pytest.raises(RuntimeError, match="a run is already in progress"):
        await collect(engine.run([user_text("two")]))
    await first.aclose()
    assert engine.task_running is False
