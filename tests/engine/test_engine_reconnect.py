"""Engine scenarios C (reconnect policy) of tests/SCENARIOS.md: retries with `[turn_retried]`,
exhaustion, auth/permanent stops, the backoff ladder and "retry now"."""

from __future__ import annotations

import asyncio
import time

from penguin_jupyter.engine import ContextEngine, reconnect_delay_ms
from penguin_jupyter.interfaces import AbortSignal, LLMOutcome
from penguin_jupyter.omni import assistant_text, partial_text, tool_call, tool_call_output, user_text
from tests.support.fakes import (
    FakeEnv,
    LLMFactory,
    MemoryTrace,
    ScriptedLLM,
    allow,
    collect,
    reply,
    settings,
    texts,
    types,
    usage,
)


def ends(msgs):
    return [m.payload for m in msgs if m.type == "event_msg" and m.payload.type == "request_end"]


def aborts(msgs):
    return [m.payload.reason for m in msgs if m.type == "event_msg" and m.payload.type == "abort"]


async def test_c16a_timeout_retries_with_turn_retried():
    original = user_text("go")
    llm = ScriptedLLM(
        reply(
            partial_text("start"),
            partial_text("delta", "thinking..."),
            partial_text("stop", "", "timeout"),
            assistant_text("thinking...", "timeout"),
            outcome=LLMOutcome("timeout", "idle timeout"),
        ),
        [assistant_text("done"), usage(5)],
    )
    out = await collect(ContextEngine(llm, FakeEnv(), max_reconnects=2, backoff_base_ms=0).run([original]))
    assert len(llm.calls) == 2
    retry = llm.calls[1]
    assert len(retry) == 2 and retry[0] is original
    assert retry[1].payload.text == "[turn_retried]\n  [text]thinking...[/text]\n[/turn_retried]"
    assert "[turn_aborted]" not in retry[1].payload.text
    assert aborts(out) == []
    first_end = ends(out)[0]
    assert (first_end.status, first_end.error_message, first_end.attempt, first_end.retry_in_ms) == (
        "timeout",
        "idle timeout",
        1,
        0,
    )
    assert (ends(out)[1].status, ends(out)[1].attempt, ends(out)[1].retry_in_ms) == ("completed", 2, None)


async def test_c16b_malformed_same_retry_shape():
    llm = ScriptedLLM(
        reply(assistant_text("partial json response", "malformed"), outcome=LLMOutcome("malformed")),
        [assistant_text("done"), usage(5)],
    )
    out = await collect(
        ContextEngine(llm, FakeEnv(), max_reconnects=2, backoff_base_ms=0).run([user_text("go")])
    )
    assert texts(llm.calls[1]) == [
        "go",
        "[turn_retried]\n  [text]partial json response[/text]\n[/turn_retried]",
    ]
    assert aborts(out) == []


async def test_c17_non_completed_tool_call_never_dispatched():
    llm = ScriptedLLM(
        reply(
            tool_call("exec_command", '{"cmd": "ec', "tc-broken", "malformed"),
            outcome=LLMOutcome("malformed"),
        ),
        [assistant_text("done"), usage(5)],
    )
    env = FakeEnv()
    out = await collect(ContextEngine(llm, env, backoff_base_ms=0).run([user_text("go")], approve=allow))
    assert "approval_decision" not in types(out)
    assert "tool_call_output" not in types(out)
    assert env.requests == []
    assert texts(llm.calls[1]) == ["go"] and llm.calls[1] == llm.calls[0]


async def test_c19_exhaustion_aborts_and_carries_original_plus_retried():
    llm = ScriptedLLM(
        reply(assistant_text("partial...", "timeout"), outcome=LLMOutcome("timeout")),
        reply(assistant_text("partial...", "timeout"), outcome=LLMOutcome("timeout")),
        [assistant_text("ok"), usage(5)],
    )
    engine = ContextEngine(llm, FakeEnv(), max_reconnects=1, backoff_base_ms=0)
    out = await collect(engine.run([user_text("go")]))
    assert len(llm.calls) == 2
    assert aborts(out) == ["reconnect failed after 1 retries"]
    assert ends(out)[-1].retry_in_ms is None and ends(out)[-1].attempt == 2
    await collect(engine.run([user_text("next")]))
    sent = texts(llm.calls[2])
    assert sent[0] == "go" and sent[2] == "next"
    assert sent[1] == (
        "[turn_retried]\n  [text]partial...[/text]\n  [text]partial...[/text]\n[/turn_retried]"
    )
    assert not any("[turn_aborted]" in t for t in sent)


async def test_c21a_failed_takes_the_ladder_then_graceful_abort():
    failed = LLMOutcome("failed", "400 unknown parameter: max_output_tokens")
    llm = ScriptedLLM(
        reply(outcome=failed), reply(outcome=failed), reply(outcome=failed), [assistant_text("ok")]
    )
    engine = ContextEngine(llm, FakeEnv(), max_reconnects=2, backoff_base_ms=0)
    out = await collect(engine.run([user_text("go")]))
    assert len(llm.calls) == 3
    assert aborts(out) == ["llm request failed after 2 retries: 400 unknown parameter: max_output_tokens"]
    await collect(engine.run([user_text("next")]))
    assert texts(llm.calls[3]) == ["go", "next"]  # nothing was produced: no [turn_retried]


async def test_c21b_failed_request_that_recovers_is_no_error():
    llm = ScriptedLLM(reply(outcome=LLMOutcome("failed", "503")), [assistant_text("answer"), usage(5)])
    out = await collect(ContextEngine(llm, FakeEnv(), backoff_base_ms=1).run([user_text("go")]))
    assert aborts(out) == []
    assert [e.status for e in ends(out)] == ["failed", "completed"]
    assert isinstance(ends(out)[0].retry_in_ms, int) and ends(out)[0].retry_in_ms >= 0


async def test_c22a_auth_never_retries():
    llm = ScriptedLLM(reply(outcome=LLMOutcome("auth", "401 invalid x-api-key")), [assistant_text("never")])
    out = await collect(ContextEngine(llm, FakeEnv(), backoff_base_ms=0).run([user_text("go")]))
    assert len(llm.calls) == 1
    end = ends(out)[0]
    assert (end.status, end.error_message, end.attempt, end.retry_in_ms) == (
        "auth",
        "401 invalid x-api-key",
        1,
        None,
    )
    assert aborts(out) == ["llm request error: 401 invalid x-api-key"]


async def test_c22b_permanent_failed_never_retries():
    message = "fast mode is not available; turn it off in the model settings to use this model."
    llm = ScriptedLLM(reply(outcome=LLMOutcome("failed", message, permanent=True)), [assistant_text("never")])
    out = await collect(
        ContextEngine(llm, FakeEnv(), max_reconnects=3, backoff_base_ms=0).run([user_text("go")])
    )
    assert len(llm.calls) == 1
    assert ends(out)[0].status == "failed" and ends(out)[0].retry_in_ms is None
    assert aborts(out) == [f"llm request error: {message}"]


async def test_c23_default_cap_is_five():
    llm = ScriptedLLM(*[reply(outcome=LLMOutcome("timeout")) for _ in range(7)])
    out = await collect(ContextEngine(llm, FakeEnv(), backoff_base_ms=1).run([user_text("go")]))
    assert len(llm.calls) == 6
    assert aborts(out) == ["reconnect failed after 5 retries"]
    assert [e.attempt for e in ends(out)] == [1, 2, 3, 4, 5, 6]
    assert [e.retry_in_ms for e in ends(out)] == [1, 2, 4, 8, 16, None]


async def test_c23_variant_403_twice_then_success():
    forbidden = LLMOutcome("failed", "403 forbidden")
    llm = ScriptedLLM(reply(outcome=forbidden), reply(outcome=forbidden), [assistant_text("ok"), usage(3)])
    out = await collect(ContextEngine(llm, FakeEnv(), backoff_base_ms=1).run([user_text("go")]))
    assert len(llm.calls) == 3 and aborts(out) == []


def test_c24_backoff_ladder():
    assert [reconnect_delay_ms(2000, 30000, n) for n in range(1, 6)] == [2000, 4000, 8000, 16000, 30000]
    assert sum(reconnect_delay_ms(2000, 30000, n) for n in range(1, 6)) == 60000
    assert [reconnect_delay_ms(2000, 30000, n) for n in (6, 7)] == [30000, 30000]
    assert reconnect_delay_ms(50000, 30000, 1) == 30000


async def test_c26_retry_now_skips_the_wait():
    llm = ScriptedLLM(reply(outcome=LLMOutcome("timeout")), [assistant_text("ok"), usage(3)])
    engine = ContextEngine(llm, FakeEnv(), backoff_base_ms=60000)
    assert engine.skip_reconnect_wait() is False
    skipped: list[bool] = []

    async def poll():
        while not any(skipped):
            await asyncio.sleep(0.02)
            skipped.append(engine.skip_reconnect_wait())

    poller = asyncio.ensure_future(poll())
    start = time.monotonic()
    out = await collect(engine.run([user_text("go")]))
    await poller
    assert time.monotonic() - start < 10
    assert skipped.count(True) == 1
    assert len(llm.calls) == 2
    assert [e.status for e in ends(out)] == ["timeout", "completed"]
    assert [e.attempt for e in ends(out)] == [1, 2]
    assert aborts(out) == []
    assert engine.skip_reconnect_wait() is False


async def test_abort_during_backoff():
    llm = ScriptedLLM(
        reply(assistant_text("half", "timeout"), outcome=LLMOutcome("timeout")),
        [assistant_text("ok"), usage(3)],
    )
    signal = AbortSignal()
    engine = ContextEngine(llm, FakeEnv(), backoff_base_ms=60000)
    asyncio.get_running_loop().call_later(0.2, signal.abort, "user")
    start = time.monotonic()
    out = await collect(engine.run([user_text("go")], signal=signal))
    assert time.monotonic() - start < 5
    assert aborts(out) == ["aborted during reconnect backoff"]
    await collect(engine.run([user_text("next")]))
    assert texts(llm.calls[1]) == ["go", "[turn_retried]\n  [text]half[/text]\n[/turn_retried]", "next"]


async def test_retry_transcript_includes_tools_already_run():
    llm = ScriptedLLM(
        reply(
            assistant_text("let me look"),
            tool_call("exec_command", {"cmd": "ls"}, "c1"),
            outcome=LLMOutcome("timeout"),
        ),
        [assistant_text("ok"), usage(3)],
    )
    env = FakeEnv()
    await collect(ContextEngine(llm, env, backoff_base_ms=0).run([user_text("go")], approve=allow))
    assert len(env.requests) == 1  # not re-run
    assert texts(llm.calls[1])[1] == (
        "[turn_retried]\n  [text]let me look[/text]\n"
        '  [tool_call name="exec_command" id="c1"]{"cmd":"ls"}[/tool_call]\n'
        '  [tool_call_output id="c1" status="completed"]tool ran[/tool_call_output]\n[/turn_retried]'
    )


async def test_c28_retry_text_never_recorded():
    llm = ScriptedLLM(
        reply(assistant_text("half", "timeout"), outcome=LLMOutcome("timeout")),
        [assistant_text("ok"), usage(3)],
    )
    trace = MemoryTrace()
    await collect(
        ContextEngine(llm, FakeEnv(), max_reconnects=1, backoff_base_ms=0, trace=trace).run([user_text("go")])
    )
    assert "[turn_retried]" in llm.calls[1][1].payload.text
    recorded = texts(trace.records)
    assert not any(t.startswith(("[turn_retried]", "[turn_aborted]")) for t in recorded)
    assert recorded.count("go") == 1


async def test_c29_thinking_level_reaches_turns_and_retries_not_compaction():
    llm = ScriptedLLM(
        reply(outcome=LLMOutcome("timeout")),
        [assistant_text("answer"), usage(100)],
        [assistant_text("[summary]s[/summary]"), usage(5)],
    )
    engine = ContextEngine(
        llm,
        FakeEnv(),
        backoff_base_ms=0,
        compaction=settings(max_context_length=10),
        create_llm=LLMFactory(ScriptedLLM()),
    )
    await collect(engine.run([user_text("go")], thinking_level="high"))
    assert llm.thinking_levels == ["high", "high", None]


async def test_reconnect_keeps_tool_outputs_paired_with_next_turn():
    llm = ScriptedLLM(
        [tool_call("exec_command", {"cmd": "x"}, "c1"), usage(5)],
        reply(outcome=LLMOutcome("timeout")),
        [assistant_text("ok"), usage(6)],
    )
    await collect(ContextEngine(llm, FakeEnv(), backoff_base_ms=0).run([user_text("go")], approve=allow))
    assert llm.calls[1] == llm.calls[2]
    assert [m.payload for m in llm.calls[2]] == [tool_call_output("tool ran", "c1").payload]
