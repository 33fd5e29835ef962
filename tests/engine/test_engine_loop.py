"""Engine scenarios A (basic loop, approval, concurrency) and B (max_turns, pre-request abort,
carry-over) of tests/SCENARIOS.md."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from penguin_jupyter.engine import ContextEngine
from penguin_jupyter.interfaces import AbortSignal, LLMOutcome
from penguin_jupyter.omni import (
    assistant_text,
    partial_text,
    session_meta,
    thinking,
    tool_call,
    tool_call_output,
    user_text,
    with_origin,
)
from tests.support.engine import real_environments
from tests.support.fakes import (
    FakeEnv,
    MemoryTrace,
    Pause,
    ScriptedLLM,
    allow,
    collect,
    deny,
    forbid,
    reply,
    texts,
    types,
    usage,
)


@pytest.fixture
def real_env():
    with real_environments() as make:
        yield make


def scenario1_llm(cmd: str = "printf 'Hello, Penguin' > hello.txt") -> ScriptedLLM:
    return ScriptedLLM(
        [
            partial_text("start"),
            partial_text("delta", "I will create the file."),
            partial_text("stop"),
            assistant_text("I will create the file."),
            tool_call("exec_command", {"cmd": cmd}, "call_1"),
            usage(12, 12),
        ],
        [assistant_text("Done. Created hello.txt with the greeting."), usage(20, 32)],
    )


def payloads(msgs, kind):
    return [m.payload for m in msgs if getattr(m.payload, "type", None) == kind]


# --- A1 / A2 ----------------------------------------------------------------------------------


async def test_a1_approved_call_executes_and_trace_is_clean(real_env, tmp_path: Path):
    llm, trace = scenario1_llm(), MemoryTrace()
    engine = ContextEngine(llm, real_env(tmp_path), trace=trace)
    out = await collect(engine.run([user_text("Create hello.txt saying Hello, Penguin")], approve=allow))
    assert len(llm.calls) == 2
    assert "tool_call_output" in types(llm.calls[1])
    assert (tmp_path / "hello.txt").read_text() == "Hello, Penguin"
    assert "approval_decision" in types(out) and "tool_call_output" in types(out)
    assert any("Done" in t for t in texts([m for m in out if m.payload.type == "text"]))
    recorded = types(trace.records)
    assert "tool_call" in recorded and "tool_call_output" in recorded
    assert not [t for t in recorded if t.startswith("partial_")]
    assert recorded[0] == "text"  # the prompt is recorded, not echoed
    assert "text" not in types(out[:1])


async def test_a2a_denial_feeds_synthetic_aborted_output(real_env, tmp_path: Path):
    llm = scenario1_llm()
    out = await collect(ContextEngine(llm, real_env(tmp_path)).run([user_text("go")], approve=deny))
    assert not (tmp_path / "hello.txt").exists()
    assert [p.decision for p in payloads(out, "approval_decision")] == ["deny"]
    denied = payloads(out, "tool_call_output")
    assert [(p.output, p.stop_reason) for p in denied] == [("Tool call denied by user.", "aborted")]
    fed = [m.payload for m in llm.calls[1] if m.payload.type == "tool_call_output"]
    assert [(p.output, p.stop_reason, p.tool_call_id) for p in fed] == [
        ("Tool call denied by user.", "aborted", "call_1")
    ]


async def test_a2b_forbidden_reads_denied_by_policy(real_env, tmp_path: Path):
    llm = scenario1_llm()
    out = await collect(ContextEngine(llm, real_env(tmp_path)).run([user_text("go")], approve=forbid))
    assert [p.decision for p in payloads(out, "approval_decision")] == ["forbidden"]
    fed = [m.payload for m in llm.calls[1] if m.payload.type == "tool_call_output"]
    assert [(p.output, p.stop_reason) for p in fed] == [("Tool call denied by policy.", "aborted")]


async def test_no_approve_denies_everything_and_throwing_approve_denies(real_env, tmp_path: Path, caplog):
    llm = scenario1_llm()
    out = await collect(ContextEngine(llm, real_env(tmp_path)).run([user_text("go")]))
    assert [p.decision for p in payloads(out, "approval_decision")] == ["deny"]

    async def broken(_call):
        raise RuntimeError("approval UI crashed")

    llm2 = scenario1_llm()
    out2 = await collect(ContextEngine(llm2, real_env(tmp_path)).run([user_text("go")], approve=broken))
    assert [p.decision for p in payloads(out2, "approval_decision")] == ["deny"]
    assert payloads(out2, "tool_call_output")[0].output == "Tool call denied by user."
    assert "[penguin] approve callback threw: approval UI crashed; denying." in caplog.messages
    assert not (tmp_path / "hello.txt").exists()


async def test_plain_function_approve_is_accepted(real_env, tmp_path: Path):
    out = await collect(
        ContextEngine(scenario1_llm(), real_env(tmp_path)).run(
            [user_text("go")], approve=lambda _call: "allow"
        )
    )
    assert [p.decision for p in payloads(out, "approval_decision")] == ["allow"]
    assert (tmp_path / "hello.txt").exists()


# --- A4 concurrency ---------------------------------------------------------------------------


async def test_a4a_sequential_approvals_overlapping_execution(real_env, tmp_path: Path):
    llm = ScriptedLLM(
        [
            tool_call("exec_command", {"cmd": "sleep 0.4; printf one > a.txt"}, "t1"),
            tool_call("exec_command", {"cmd": "printf two > b.txt"}, "t2"),
            usage(10),
        ],
        [assistant_text("both done"), usage(20)],
    )
    approved: dict[str, float] = {}

    async def stamp(call):
        approved[call.payload.tool_call_id] = time.monotonic()
        return "allow"

    seen: dict[str, float] = {}
    out = []
    async for msg in ContextEngine(llm, real_env(tmp_path)).run([user_text("go")], approve=stamp):
        out.append(msg)
        if msg.payload.type == "tool_call_output":
            seen[msg.payload.tool_call_id] = time.monotonic()
    assert approved["t2"] < seen["t1"]
    outputs = [p.tool_call_id for p in payloads(out, "tool_call_output")]
    assert outputs == ["t2", "t1"]
    assert (tmp_path / "a.txt").read_text() == "one" and (tmp_path / "b.txt").read_text() == "two"
    assert "both done" in texts([m for m in out if m.payload.type == "text"])
    # original call order in the next request
    assert [m.payload.tool_call_id for m in llm.calls[1]] == ["t1", "t2"]


async def test_a4b_all_outputs_collected_before_next_request():
    llm = ScriptedLLM(
        [
            tool_call("exec_command", {"cmd": "a"}, "u1"),
            tool_call("exec_command", {"cmd": "b"}, "u2"),
            usage(5),
        ],
        [assistant_text("ok"), usage(6)],
    )
    out = await collect(ContextEngine(llm, FakeEnv(delay=0.05)).run([user_text("go")], approve=allow))
    assert types(llm.calls[1]) == ["tool_call_output", "tool_call_output"]
    assert len(payloads(out, "tool_call_output")) == 2


async def test_a4c_slow_tool_delays_only_by_its_latency():
    async def slow(request):
        await asyncio.sleep(0.3)
        yield tool_call_output("wrote hello.txt", request.tool_call.payload.tool_call_id)

    llm = scenario1_llm()
    start = time.monotonic()
    await collect(ContextEngine(llm, FakeEnv(handler=slow)).run([user_text("go")], approve=allow))
    wall = time.monotonic() - start
    assert len(llm.calls) == 2
    assert [m.payload.output for m in llm.calls[1]] == ["wrote hello.txt"]
    assert 0.295 <= wall < 1.3


async def test_ten_tools_run_concurrently_and_return_in_call_order():
    ids = [f"c{i}" for i in range(10)]
    delays = {cid: 0.05 * (10 - i) for i, cid in enumerate(ids)}  # first call is slowest (0.5 s)

    async def timed(request):
        cid = request.tool_call.payload.tool_call_id
        await asyncio.sleep(delays[cid])
        yield tool_call_output(f"out {cid}", cid)

    llm = ScriptedLLM(
        [*(tool_call("exec_command", {"cmd": cid}, cid) for cid in ids), usage(5)],
        [assistant_text("all done"), usage(6)],
    )
    start = time.monotonic()
    out = await collect(ContextEngine(llm, FakeEnv(handler=timed)).run([user_text("go")], approve=allow))
    wall = time.monotonic() - start
    assert wall < 2.5  # sequential would be 2.75 s; concurrent ≈ 0.5 s
    completion = [p.tool_call_id for p in payloads(out, "tool_call_output")]
    assert completion == list(reversed(ids))
    assert [m.payload.output for m in llm.calls[1]] == [f"out {cid}" for cid in ids]


async def test_a_observable_order_request_end_does_not_wait_for_tools():
    gate = asyncio.Event()

    async def held(request):
        await gate.wait()
        yield tool_call_output("late", request.tool_call.payload.tool_call_id)

    llm = ScriptedLLM(
        [thinking("hmm"), tool_call("exec_command", {"cmd": "x"}, "A"), usage(5)],
        [assistant_text("fine"), usage(6)],
    )
    out = []
    async for msg in ContextEngine(llm, FakeEnv(handler=held)).run([user_text("go")], approve=allow):
        out.append(msg)
        if msg.payload.type == "request_end":
            gate.set()
    assert types(out) == [
        "request_begin",
        "thinking",
        "tool_call",
        "approval_decision",
        "token_usage",
        "request_end",
        "tool_call_output",
        "request_begin",
        "text",
        "token_usage",
        "request_end",
    ]
    assert out[5].payload.attempt is None and out[5].payload.retry_in_ms is None


async def test_llm_stream_not_pulled_while_approval_pending():
    pulled_after: list[str] = []
    release = asyncio.Event()

    async def slow_approve(call):
        await release.wait()
        return "allow"

    llm = ScriptedLLM(
        [
            tool_call("exec_command", {"cmd": "a"}, "a1"),
            lambda: pulled_after.append("next item pulled"),
            tool_call("exec_command", {"cmd": "b"}, "a2"),
            usage(5),
        ],
        [assistant_text("ok"), usage(6)],
    )
    engine = ContextEngine(llm, FakeEnv())
    task = asyncio.ensure_future(collect(engine.run([user_text("go")], approve=slow_approve)))
    await asyncio.sleep(0.2)
    assert pulled_after == []
    release.set()
    await task
    assert pulled_after == ["next item pulled"]


# --- A6 / A7 ----------------------------------------------------------------------------------


async def test_a6_subagent_pointer_for_direct_child_meta_only():
    def meta(sid):
        return session_meta(
            session_id=sid,
            provider="p",
            model_id="m",
            model_context_window=1000,
            system_prompt="s",
            agent_state="/a",
            workspace="/w",
            source="subagent",
        )

    async def spawning(request):
        yield with_origin(meta("sess-child"), "sess-child")
        yield with_origin(assistant_text("from child"), "sess-child")
        yield with_origin(with_origin(meta("sess-grand"), "sess-grand"), "sess-child")
        yield tool_call_output("spawned", request.tool_call.payload.tool_call_id)

    trace = MemoryTrace()
    llm = scenario1_llm()
    out = await collect(
        ContextEngine(llm, FakeEnv(handler=spawning), trace=trace).run([user_text("go")], approve=allow)
    )
    assert any(
        m.origin == ["sess-child"] and m.type == "model_msg" and m.payload.type == "text" for m in out
    )  # passed through
    pointers = [m.payload for m in trace.records if m.type == "event_msg" and m.payload.type == "subagent"]
    assert [p.session_id for p in pointers] == ["sess-child"]
    assert all(m.origin is None for m in trace.records)
    assert [m.payload.output for m in llm.calls[1]] == ["spawned"]


async def test_a7a_failed_tool_output_is_fed_back():
    async def boom(request):
        yield tool_call_output("[tool error] boom", request.tool_call.payload.tool_call_id, "failed")

    llm = ScriptedLLM(
        [tool_call("exec_command", {"cmd": "x"}, "c1"), usage(5)], [assistant_text("recovered"), usage(6)]
    )
    out = await collect(ContextEngine(llm, FakeEnv(handler=boom)).run([user_text("go")], approve=allow))
    assert [m.payload.output for m in llm.calls[1]] == ["[tool error] boom"]
    assert "recovered" in texts([m for m in out if m.payload.type == "text"])


async def test_a7b_raising_environment_becomes_failed_output():
    llm = ScriptedLLM(
        [tool_call("exec_command", {"cmd": "x"}, "c1"), usage(5)], [assistant_text("survived"), usage(6)]
    )
    trace = MemoryTrace()
    env = FakeEnv(raises=RuntimeError("custom env exploded"))
    out = await collect(ContextEngine(llm, env, trace=trace).run([user_text("go")], approve=allow))
    fed = [m.payload for m in llm.calls[1]]
    assert [(p.type, p.output, p.stop_reason) for p in fed] == [
        ("tool_call_output", "[tool error] custom env exploded", "failed")
    ]
    assert "survived" in texts([m for m in out if m.payload.type == "text"])
    assert "[tool error] custom env exploded" in [getattr(m.payload, "output", None) for m in trace.records]


async def test_task_ends_on_a_turn_without_tool_calls():
    llm = ScriptedLLM([assistant_text("just an answer"), usage(5)])
    out = await collect(ContextEngine(llm, FakeEnv()).run([user_text("hi")], approve=allow))
    assert len(llm.calls) == 1
    assert types(out) == ["request_begin", "text", "token_usage", "request_end"]


# --- B8 max_turns -----------------------------------------------------------------------------


def looping_llm(n: int) -> ScriptedLLM:
    replies = [[tool_call("exec_command", {"cmd": "x"}, f"c{i}"), usage(5)] for i in range(n)]
    return ScriptedLLM(*replies, [assistant_text("Done"), usage(6)])


async def test_b8a_max_turns_unlimited_by_default():
    for engine_kwargs in ({}, {"max_turns": -1}):
        llm = looping_llm(2)
        out = await collect(
            ContextEngine(llm, FakeEnv(), **engine_kwargs).run([user_text("go")], approve=allow)
        )
        assert len(llm.calls) == 3
        assert "Done" in texts([m for m in out if m.payload.type == "text"])
        assert not any("reached max turns" in t for t in texts(out))


async def test_b8b_max_turns_notice_stream():
    llm = looping_llm(5)
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(), max_turns=1, trace=trace)
    out = await collect(engine.run([user_text("go")], approve=allow))
    parts = [m.payload for m in out if m.payload.type == "partial_text"]
    assert [(p.event_type, p.text, p.stop_reason) for p in parts] == [
        ("start", "", "completed"),
        ("delta", "[reached max turns (1); stopping]", "completed"),
        ("stop", "", "failed"),
    ]
    last = out[-1].payload
    assert (last.type, last.text, last.stop_reason) == ("text", "[reached max turns (1); stopping]", "failed")
    assert "abort" not in types(out)
    assert len(llm.calls) == 1
    # the unsubmitted tool outputs are carried to the next run
    await collect(engine.run([user_text("more")], approve=allow))
    assert types(llm.calls[1]) == ["tool_call_output", "text"]
    assert texts(trace.records).count("[reached max turns (1); stopping]") == 2  # once per capped run
    assert not [t for t in types(trace.records) if t.startswith("partial_")]


async def test_max_turns_per_run_override_applies_to_that_run_only():
    llm = looping_llm(5)
    engine = ContextEngine(llm, FakeEnv())
    out = await collect(engine.run([user_text("go")], approve=allow, max_turns=2))
    assert out[-1].payload.text == "[reached max turns (2); stopping]"
    assert len(llm.calls) == 2
    with pytest.raises(ValueError, match="max_turns must be an integer"):
        await collect(engine.run([user_text("go")], max_turns="3"))


# --- B10 pre-request abort --------------------------------------------------------------------


def aborted_signal() -> AbortSignal:
    signal = AbortSignal()
    signal.abort("user")
    return signal


async def test_b10a_pre_request_abort_keeps_raw_input():
    llm = ScriptedLLM([assistant_text("ok"), usage(5)])
    engine = ContextEngine(llm, FakeEnv())
    out = await collect(engine.run([user_text("go")], signal=aborted_signal()))
    assert types(out) == ["abort"] and out[0].payload.reason == "aborted by user"
    assert llm.calls == []
    await collect(engine.run([user_text("next")]))
    assert len(llm.calls) == 1
    assert texts(llm.calls[0]) == ["go", "next"]


async def test_b10b_repeated_pre_request_aborts_accumulate():
    llm = ScriptedLLM([assistant_text("ok"), usage(5)])
    engine = ContextEngine(llm, FakeEnv())
    first = user_text("go")
    await collect(engine.run([first], signal=aborted_signal()))
    await collect(engine.run([user_text("next")], signal=aborted_signal()))
    await collect(engine.run([user_text("more")]))
    assert texts(llm.calls[0]) == ["go", "next", "more"]
    assert llm.calls[0][0] is first


# --- B11 / B13 carry-over ---------------------------------------------------------------------


async def test_b11_abort_during_tool_execution_is_case_a(real_env, tmp_path: Path):
    llm = ScriptedLLM(
        [tool_call("exec_command", {"cmd": "sleep 5"}, "slow"), usage(5)],
        [assistant_text("resumed"), usage(6)],
    )
    signal = AbortSignal()
    engine = ContextEngine(llm, real_env(tmp_path))
    asyncio.get_running_loop().call_later(0.2, signal.abort, "user")
    start = time.monotonic()
    out = await collect(engine.run([user_text("go")], approve=allow, signal=signal))
    assert time.monotonic() - start < 3
    assert out[-1].payload.type == "abort" and out[-1].payload.reason == "aborted by user"
    await collect(engine.run([user_text("next")], approve=allow))
    first = llm.calls[1]
    assert [(m.payload.type, m.payload.tool_call_id) for m in first[:1]] == [("tool_call_output", "slow")]
    assert "[interrupted: tool aborted by user]" in first[0].payload.output
    assert first[0].payload.stop_reason == "aborted"
    assert not any(t.startswith("[turn_aborted]") for t in texts(first))


async def test_case_a_placeholders_for_tools_that_ignore_the_abort():
    async def stubborn(request):
        await asyncio.sleep(30)
        yield tool_call_output("never", request.tool_call.payload.tool_call_id)

    async def quick(request):
        yield tool_call_output("quick done", request.tool_call.payload.tool_call_id)

    async def handler(request):
        inner = stubborn if request.tool_call.payload.tool_call_id == "s1" else quick
        async for msg in inner(request):
            yield msg

    llm = ScriptedLLM(
        [
            tool_call("exec_command", {"cmd": "a"}, "s1"),
            tool_call("exec_command", {"cmd": "b"}, "q1"),
            usage(5),
        ],
        [assistant_text("ok"), usage(6)],
    )
    signal = AbortSignal()
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(handler=handler), trace=trace)
    asyncio.get_running_loop().call_later(0.2, signal.abort, "user")
    start = time.monotonic()
    out = await collect(engine.run([user_text("go")], approve=allow, signal=signal))
    assert time.monotonic() - start < 6
    assert out[-1].payload.type == "abort"
    await collect(engine.run([user_text("next")], approve=allow))
    carried = [(m.payload.tool_call_id, m.payload.output, m.payload.stop_reason) for m in llm.calls[1][:2]]
    assert carried == [
        ("q1", "quick done", "completed"),
        ("s1", "[interrupted: tool aborted by user]", "aborted"),
    ]
    assert texts(llm.calls[1][2:]) == ["next"]
    # B13a: the placeholder is never recorded
    assert "[interrupted: tool aborted by user]" not in [
        getattr(m.payload, "output", None) for m in trace.records
    ]


async def test_abort_during_approval_emits_nothing_for_the_call():
    signal = AbortSignal()

    async def hanging(call):
        signal.abort("user")
        await asyncio.sleep(30)
        return "allow"

    llm = ScriptedLLM(
        [tool_call("exec_command", {"cmd": "x"}, "c1"), usage(5)], [assistant_text("ok"), usage(6)]
    )
    engine = ContextEngine(llm, FakeEnv())
    start = time.monotonic()
    out = await collect(engine.run([user_text("go")], approve=hanging, signal=signal))
    assert time.monotonic() - start < 5
    assert "approval_decision" not in types(out) and "tool_call_output" not in types(out)
    assert out[-1].payload.type == "abort"
    await collect(engine.run([user_text("next")], approve=allow))
    # the LLM answered the abort with `aborted`: the model output did not complete → case B
    assert texts(llm.calls[1]) == [
        "[turn_aborted]\n  [user_input]go[/user_input]\n"
        '  [tool_call name="exec_command" id="c1"]{"cmd":"x"}[/tool_call]\n[/turn_aborted]',
        "next",
    ]


async def test_b13a_case_a_placeholders_never_recorded():
    llm = ScriptedLLM(
        [tool_call("exec_command", {"cmd": "sleep"}, "slow"), usage(5)], [assistant_text("ok"), usage(6)]
    )
    signal = AbortSignal()
    trace = MemoryTrace()

    async def stubborn(request):
        await asyncio.sleep(30)
        yield tool_call_output("never", request.tool_call.payload.tool_call_id)

    engine = ContextEngine(llm, FakeEnv(handler=stubborn), trace=trace)
    asyncio.get_running_loop().call_later(0.1, signal.abort, "user")
    await collect(engine.run([user_text("go")], approve=allow, signal=signal))
    await collect(engine.run([user_text("next")], approve=allow))
    assert llm.calls[1][0].payload.output == "[interrupted: tool aborted by user]"
    assert "tool_call_output" not in types(trace.records)


async def test_b13b_case_b_flatten_never_recorded():
    llm = ScriptedLLM(
        reply(thinking("half thought", "aborted"), outcome=LLMOutcome("aborted")),
        [assistant_text("ok"), usage(6)],
    )
    trace = MemoryTrace()
    engine = ContextEngine(llm, FakeEnv(), trace=trace)
    out = await collect(engine.run([user_text("first ask")]))
    assert out[-1].payload.type == "abort" and out[-1].payload.reason == "aborted by user"
    assert not any(t.startswith("[turn_aborted]") for t in texts(trace.records))
    await collect(engine.run([user_text("next")]))
    assert texts(llm.calls[1]) == [
        "[turn_aborted]\n  [user_input]first ask[/user_input]\n  [thinking]half thought[/thinking]\n[/turn_aborted]",
        "next",
    ]
    assert not any(t.startswith("[turn_aborted]") for t in texts(trace.records))


async def test_case_b_keeps_paired_outputs_and_unwraps_previous_blocks():
    llm = ScriptedLLM(
        [tool_call("exec_command", {"cmd": "x"}, "c1"), usage(5)],
        reply(assistant_text("partial", "aborted"), outcome=LLMOutcome("auth", "401 bad key")),
        reply(outcome=LLMOutcome("auth", "401 bad key")),
        [assistant_text("ok"), usage(6)],
    )
    engine = ContextEngine(llm, FakeEnv())
    out = await collect(engine.run([user_text("go")], approve=allow))
    assert out[-1].payload.reason == "llm request error: 401 bad key"
    await collect(engine.run([user_text("again")]))
    await collect(engine.run([user_text("third")]))
    last = llm.calls[3]
    assert types(last) == ["tool_call_output", "text", "text"]
    assert last[1].payload.text == (
        "[turn_aborted]\n  [text]partial[/text]\n  [user_input]again[/user_input]\n[/turn_aborted]"
    )
    assert last[2].payload.text == "third"


async def test_abort_while_llm_streams_ends_quickly_even_if_llm_ignores_it():
    class DeafLLM:
        calls = 0

        async def stream_generate(self, parameters):
            DeafLLM.calls += 1
            yield partial_text("start")
            await asyncio.sleep(60)
            yield LLMOutcome("completed")

    signal = AbortSignal()
    engine = ContextEngine(DeafLLM(), FakeEnv())
    asyncio.get_running_loop().call_later(0.1, signal.abort, "user")
    start = time.monotonic()
    out = await collect(engine.run([user_text("go")], signal=signal))
    assert time.monotonic() - start < 5
    assert types(out)[-2:] == ["request_end", "abort"]
    assert out[-2].payload.status == "aborted"


async def test_signal_fired_mid_stream_stops_dispatching():
    signal = AbortSignal()
    llm = ScriptedLLM(
        [
            tool_call("exec_command", {"cmd": "x"}, "c1"),
            lambda: signal.abort("user"),
            Pause(0.01),
            tool_call("exec_command", {"cmd": "y"}, "c2"),
        ]
    )
    env = FakeEnv()
    out = await collect(ContextEngine(llm, env).run([user_text("go")], approve=allow, signal=signal))
    assert [r.tool_call.payload.tool_call_id for r in env.requests] == ["c1"]
    assert out[-1].payload.type == "abort"


async def test_a4c_engine_arms_no_timers_on_the_success_path(monkeypatch):
    import inspect

    loop = asyncio.get_running_loop()
    engine_timers: list[str] = []
    original_call_at = loop.call_at

    def spying_call_at(when, callback, *args, **kwargs):
        # the first caller outside asyncio is who armed the timer
        for frame in inspect.stack()[1:]:
            if "/asyncio/" in frame.filename:
                continue
            if "penguin_jupyter/engine/" in frame.filename:
                engine_timers.append(f"{frame.filename}:{frame.lineno}")
            break
        return original_call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", spying_call_at)  # call_later goes through call_at

    async def slow(request):
        await asyncio.sleep(0.3)
        yield tool_call_output("wrote hello.txt", request.tool_call.payload.tool_call_id)

    llm = scenario1_llm()
    signal = AbortSignal()  # a live signal too: watching it must not arm timers
    await collect(
        ContextEngine(llm, FakeEnv(handler=slow)).run([user_text("go")], approve=allow, signal=signal)
    )
    assert len(llm.calls) == 2
    assert engine_timers == []
    # the spy does see the engine's one timer, the reconnect backoff
    retrying = ScriptedLLM(reply(outcome=LLMOutcome("timeout")), [assistant_text("ok"), usage(3)])
    await collect(ContextEngine(retrying, FakeEnv(), backoff_base_ms=1).run([user_text("go")]))
    assert len(engine_timers) == 1 and "waits.py" in engine_timers[0]
