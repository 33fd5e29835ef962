"""Scenarios H (63, 65, 66): run_subagent / input_subagent / kill_subagent through the real
Environment (close-out, limits, NoticeHub), with a scripted child on the runner side."""

from __future__ import annotations

import asyncio

import pytest

from penguin_jupyter.environment.notices import BackgroundEvent
from penguin_jupyter.omni import tool_call
from tests.support.subagent import (
    CHILD_ID,
    ScriptedRunner,
    call,
    child_abort,
    forwarded,
    output_of,
    own_delta_text,
    subagent_env,
    text_delta,
    until_aborted,
    wait_for,
)

SUBAGENT_ID = f"subagent-{CHILD_ID[-8:]}"


async def echo_round(handle, prompt, signal, approve):
    yield text_delta("Hello ")
    yield text_delta(prompt)


async def gated_round(handle, prompt, signal, approve):
    """`start:<prompt> ` now, `end:<prompt>` once the test opens the gate."""
    yield text_delta(f"start:{prompt} ")
    gate = asyncio.ensure_future(handle.gate.wait())
    stop = asyncio.ensure_future(until_aborted(signal))
    await asyncio.wait({gate, stop}, return_when=asyncio.FIRST_COMPLETED)
    gate.cancel()
    stop.cancel()
    if signal is not None and signal.aborted:
        yield child_abort("user")
        return
    handle.gate.clear()
    yield text_delta(f"end:{prompt}")


# --- 63. Foreground delegation; argument validation --------------------------------------------


async def test_63a_foreground_mirrors_direct_child_text_and_forwards_messages(tmp_path):
    async def script(handle, prompt, signal, approve):
        yield text_delta("Hello ")
        from penguin_jupyter.omni import with_origin

        yield with_origin(text_delta("grandchild text"), "session-grandchild")
        yield text_delta(prompt)

    runner = ScriptedRunner(script)
    env = subagent_env(tmp_path, runner)
    args = {
        "prompt": "world",
        "agent_id": "researcher",
        "model_id": "m1",
        "provider": "p1",
        "thinking_level": "high",
    }
    out = await call(env, "run_subagent", args)
    result = output_of(out)
    assert (result.stop_reason, result.output) == ("completed", "Hello world")
    assert own_delta_text(out) == "Hello world"
    assert runner.spawns == [
        {"agent_id": "researcher", "model_id": "m1", "provider": "p1", "thinking_level": "high"}
    ]
    passed = forwarded(out)
    assert all(m.origin[0] == CHILD_ID for m in passed)
    assert passed[0].type == "session_meta" and passed[0].origin == [CHILD_ID]
    texts = [(m.origin, m.payload.text) for m in passed[1:] if m.payload.type == "partial_text"]
    assert texts == [
        ([CHILD_ID], "Hello "),
        ([CHILD_ID, "session-grandchild"], "grandchild text"),
        ([CHILD_ID], "world"),
    ]
    assert runner.handles[0].disposed == 1  # finished in the window: released
    assert env.services.subagent_sessions.ids() == []
    env.dispose()


async def test_63a_finish_without_text_and_child_abort_and_raise(tmp_path):
    async def silent(handle, prompt, signal, approve):
        return
        yield

    async def aborting(handle, prompt, signal, approve):
        yield text_delta("partial")
        yield child_abort("llm_error")

    async def raising(handle, prompt, signal, approve):
        yield text_delta("so far")
        raise RuntimeError("child blew up")

    outputs = []
    for script in (silent, aborting, raising):
        env = subagent_env(tmp_path, ScriptedRunner(script))
        outputs.append(output_of(await call(env, "run_subagent", {"prompt": "x"})))
        env.dispose()
    assert [(o.stop_reason, o.output) for o in outputs] == [
        ("completed", "[subagent finished without a text answer]"),
        ("failed", "partial\n[subagent aborted: llm_error]"),
        ("failed", "so far\n[subagent error: child blew up]"),
    ]


@pytest.mark.parametrize(
    "args",
    [{"prompt": "x", "model_id": "m1"}, {"prompt": "x", "provider": "p1"}],
)
async def test_63b_half_a_model_reference_fails_without_spawning(tmp_path, args):
    runner = ScriptedRunner(echo_round)
    env = subagent_env(tmp_path, runner)
    result = output_of(await call(env, "run_subagent", args))
    assert result.stop_reason == "failed"
    assert result.output == (
        "[run_subagent error: `model_id` and `provider` must be given together (a model reference is the "
        "pair), or both omitted to inherit the parent session's model]"
    )
    assert runner.spawns == []
    env.dispose()


@pytest.mark.parametrize(("level", "shown"), [("hgih", '"hgih"'), ("none", '"none"'), ("", '""'), (3, "3")])
async def test_63b_thinking_level_outside_the_tiers_fails_without_spawning(tmp_path, level, shown):
    runner = ScriptedRunner(echo_round)
    env = subagent_env(tmp_path, runner)
    result = output_of(await call(env, "run_subagent", {"prompt": "x", "thinking_level": level}))
    assert result.stop_reason == "failed"
    assert result.output == (
        f"[run_subagent error: invalid `thinking_level` {shown}; use one of low / medium / high / xhigh / max, "
        "or omit it to inherit the parent session's level]"
    )
    assert runner.spawns == []
    env.dispose()


async def test_63b_omitted_or_null_overrides_reach_the_runner_as_no_keys(tmp_path):
    runner = ScriptedRunner(echo_round)
    env = subagent_env(tmp_path, runner)
    await call(env, "run_subagent", {"prompt": "a"})
    await call(
        env, "run_subagent", {"prompt": "b", "thinking_level": None, "model_id": None, "provider": None}
    )
    assert runner.spawns == [{}, {}]
    env.dispose()


async def test_63b_no_runner_missing_prompt_and_spawn_errors(tmp_path):
    env = subagent_env(tmp_path, None)
    result = output_of(await call(env, "run_subagent", {"prompt": "x"}))
    assert (result.stop_reason, result.output) == (
        "failed",
        "[run_subagent unavailable: no subagent runner configured]",
    )
    env.dispose()

    env = subagent_env(tmp_path, ScriptedRunner(echo_round))
    for args in ({}, {"prompt": "   "}, {"prompt": 7}):
        result = output_of(await call(env, "run_subagent", args))
        assert (result.stop_reason, result.output) == (
            "failed",
            "[run_subagent error: missing required string argument `prompt`]",
        )
    env.dispose()

    depth = RuntimeError("subagent depth limit 1 reached; not spawning another subagent")
    env = subagent_env(tmp_path, ScriptedRunner(echo_round, error=depth))
    result = output_of(await call(env, "run_subagent", {"prompt": "x"}))
    assert (result.stop_reason, result.output) == (
        "failed",
        "[run_subagent error: subagent depth limit 1 reached; not spawning another subagent]",
    )
    env.dispose()

    env = subagent_env(tmp_path, ScriptedRunner(echo_round))
    env.services.subagent_sessions.dispose()
    result = output_of(await call(env, "run_subagent", {"prompt": "x"}))
    assert result.output == "[run_subagent unavailable: no subagent session manager available]"
    env.dispose()


async def test_63_parent_abort_in_the_window_kills_the_child(tmp_path):
    from penguin_jupyter.interfaces import AbortSignal

    seen_abort = asyncio.Event()

    async def script(handle, prompt, signal, approve):
        yield text_delta("working")
        await until_aborted(signal)
        seen_abort.set()

    runner = ScriptedRunner(script)
    env = subagent_env(tmp_path, runner)
    signal = AbortSignal()
    task = asyncio.ensure_future(call(env, "run_subagent", {"prompt": "x"}, signal=signal))
    await wait_for(lambda: bool(runner.handles) and runner.handles[0].prompts == ["x"])
    await asyncio.sleep(0.1)
    signal.abort("user")
    result = output_of(await asyncio.wait_for(task, 20))
    assert result.stop_reason == "aborted"
    assert result.output == "working\n[interrupted: tool aborted by user]"
    await asyncio.wait_for(seen_abort.wait(), 10)
    await wait_for(lambda: runner.handles[0].disposed == 1)
    assert env.services.subagent_sessions.ids() == []
    env.dispose()


# --- 65. Backgrounding, input_subagent, capacity, disposal --------------------------------------


async def test_65a_window_expiry_poll_follow_up_and_errors(tmp_path):
    runner = ScriptedRunner(gated_round)
    env = subagent_env(tmp_path, runner)
    manager = env.services.subagent_sessions

    first = output_of(await call(env, "run_subagent", {"prompt": "one", "yield_time_ms": 250}))
    assert first.stop_reason == "completed"
    assert first.output == (
        f"start:one \n[subagent running with subagent_id {SUBAGENT_ID}; use input_subagent to poll for "
        "progress or send a follow-up prompt]"
    )
    assert manager.ids() == [SUBAGENT_ID] and manager.has_running()

    busy = output_of(await call(env, "input_subagent", {"subagent_id": SUBAGENT_ID, "prompt": "two"}))
    assert (busy.stop_reason, busy.output) == (
        "failed",
        f"[input_subagent error: subagent {SUBAGENT_ID} is still running; poll with an empty prompt to collect "
        "progress first]",
    )

    handle = runner.handles[0]
    handle.gate.set()
    polled = output_of(await call(env, "input_subagent", {"subagent_id": SUBAGENT_ID, "yield_time_ms": 3000}))
    assert polled.stop_reason == "completed"
    assert polled.output == (
        f"end:one\n[subagent idle with subagent_id {SUBAGENT_ID}; send a follow-up prompt to continue]"
    )
    assert manager.ids() == [SUBAGENT_ID]  # kept for a follow-up

    follow = asyncio.ensure_future(
        call(env, "input_subagent", {"subagent_id": SUBAGENT_ID, "prompt": "two", "yield_time_ms": 20000})
    )
    await wait_for(lambda: handle.prompts == ["one", "two"])
    handle.gate.set()
    again = output_of(await asyncio.wait_for(follow, 30))
    assert again.output == (
        f"start:two end:two\n[subagent idle with subagent_id {SUBAGENT_ID}; send a follow-up prompt to continue]"
    )
    assert len(runner.handles) == 1

    unknown = output_of(await call(env, "input_subagent", {"subagent_id": "subagent-deadbeef"}))
    assert (unknown.stop_reason, unknown.output) == (
        "failed",
        "[input_subagent error: unknown subagent_id subagent-deadbeef (the session may have finished and been "
        "cleared)]",
    )
    missing = output_of(await call(env, "input_subagent", {}))
    assert missing.output == 'Missing required argument "subagent_id" for input_subagent.'
    env.dispose()
    assert handle.disposed == 1


async def test_65a_child_approvals_queue_while_backgrounded_and_resolve_on_the_next_poll(tmp_path):
    async def script(handle, prompt, signal, approve):
        yield text_delta("asking ")
        decision = await approve(tool_call("exec_command", '{"cmd":"ls"}', "k1"))
        yield text_delta(f"approved:{decision}")

    runner = ScriptedRunner(script)
    env = subagent_env(tmp_path, runner)
    first = output_of(await call(env, "run_subagent", {"prompt": "p", "yield_time_ms": 250}))
    assert first.output.endswith(
        "use input_subagent to poll for progress or send a follow-up prompt] "
        "[subagent is waiting for approval of 1 tool call(s); poll to review]"
    )
    asked = []

    async def approve(call_msg):
        asked.append(call_msg)
        return "allow"

    polled = output_of(
        await call(
            env, "input_subagent", {"subagent_id": SUBAGENT_ID, "yield_time_ms": 3000}, approve=approve
        )
    )
    assert polled.output.startswith("approved:allow\n[subagent idle")
    assert [(m.payload.name, m.payload.tool_call_id) for m in asked] == [("exec_command", "k1")]
    env.dispose()


async def test_65a_an_approver_that_raises_counts_as_deny(tmp_path):
    async def script(handle, prompt, signal, approve):
        decision = await approve(tool_call("exec_command", "{}", "k1"))
        yield text_delta(f"decision:{decision}")

    env = subagent_env(tmp_path, ScriptedRunner(script))

    async def broken(_call):
        raise ValueError("ui gone")

    result = output_of(await call(env, "run_subagent", {"prompt": "p"}, approve=broken))
    assert result.output == "decision:deny"
    env.dispose()


async def test_65b_capacity_of_eight_running_background_subagents(tmp_path):
    runner = ScriptedRunner(gated_round)
    env = subagent_env(tmp_path, runner)
    for n in range(8):
        launched = output_of(await call(env, "run_subagent", {"prompt": f"t{n}", "run_in_background": True}))
        assert launched.stop_reason == "completed"
    refused = output_of(await call(env, "run_subagent", {"prompt": "ninth"}))
    assert (refused.stop_reason, refused.output) == (
        "failed",
        "[run_subagent error: too many background subagents; poll or finish existing ones first]",
    )
    assert len(runner.spawns) == 8
    # an idle one is evicted to make room
    manager = env.services.subagent_sessions
    first_id = manager.ids()[0]
    runner.handles[0].gate.set()
    await wait_for(lambda: not manager.get(first_id).running)
    ok = output_of(await call(env, "run_subagent", {"prompt": "ninth", "run_in_background": True}))
    assert ok.stop_reason == "completed"
    assert first_id not in manager.ids() and len(manager.ids()) == 8
    env.dispose()


async def test_65b_dispose_aborts_background_children_and_denies_pending_approvals(tmp_path):
    decisions = []
    aborted = asyncio.Event()

    async def script(handle, prompt, signal, approve):
        yield text_delta("waiting ")
        decisions.append(await approve(tool_call("exec_command", "{}", "k1")))
        await until_aborted(signal)
        aborted.set()

    runner = ScriptedRunner(script)
    env = subagent_env(tmp_path, runner)
    out = output_of(await call(env, "run_subagent", {"prompt": "p", "yield_time_ms": 250}))
    assert "waiting for approval of 1 tool call(s)" in out.output
    env.dispose()
    await asyncio.wait_for(aborted.wait(), 10)
    assert decisions == ["deny"]
    await wait_for(lambda: runner.handles[0].disposed == 1)


# --- 66. run_in_background --------------------------------------------------------------------


def notices_of(env) -> list[BackgroundEvent]:
    events: list[BackgroundEvent] = []
    env.set_notice_listener(events.append)
    return events


async def test_66_background_launch_reports_every_round(tmp_path):
    runner = ScriptedRunner(gated_round)
    env = subagent_env(tmp_path, runner)
    events = notices_of(env)
    out = await call(env, "run_subagent", {"prompt": "research\nmore lines", "run_in_background": True})
    result = output_of(out)
    assert result.stop_reason == "completed"
    assert result.output == (
        f"[subagent running in background with subagent_id {SUBAGENT_ID}; its completion will arrive as a user "
        "message — no need to poll. Use input_subagent to interact or kill_subagent to stop it]"
    )
    metas = [m for m in out if m.type == "session_meta"]
    assert len(metas) == 1 and metas[0].origin == [CHILD_ID]
    manager = env.services.subagent_sessions
    assert manager.has_running()
    handle = runner.handles[0]
    await wait_for(lambda: handle.prompts == ["research\nmore lines"])
    handle.gate.set()
    await wait_for(lambda: len(events) == 1)
    assert events[0] == BackgroundEvent(
        kind="subagent",
        id=SUBAGENT_ID,
        label="research",
        status="completed",
        detail="",
        output="start:research\nmore lines end:research\nmore lines",
    )
    assert not manager.has_running()

    follow = output_of(
        await call(
            env, "input_subagent", {"subagent_id": SUBAGENT_ID, "prompt": "next", "yield_time_ms": 250}
        )
    )
    assert follow.output == f"start:next \n[subagent still running with subagent_id {SUBAGENT_ID}]"
    handle.gate.set()
    await wait_for(lambda: len(events) == 2)
    assert (events[1].status, events[1].output) == ("completed", "end:next")
    env.dispose()


async def test_66_kill_aborts_without_a_report(tmp_path):
    runner = ScriptedRunner(gated_round)
    env = subagent_env(tmp_path, runner)
    events = notices_of(env)
    await call(env, "run_subagent", {"prompt": "long job", "run_in_background": True})
    await wait_for(lambda: runner.handles[0].prompts == ["long job"])
    killed = output_of(await call(env, "kill_subagent", {"subagent_id": SUBAGENT_ID}))
    assert (killed.stop_reason, killed.output) == (
        "completed",
        f"start:long job \n[subagent {SUBAGENT_ID} aborted and removed; its own trace keeps the work done so far]",
    )
    await wait_for(lambda: runner.handles[0].disposed == 1)
    await asyncio.sleep(0.2)
    assert events == []
    unknown = output_of(await call(env, "kill_subagent", {"subagent_id": SUBAGENT_ID}))
    assert (unknown.stop_reason, unknown.output) == (
        "failed",
        f"[kill_subagent error: unknown subagent_id {SUBAGENT_ID} (the session may have finished and been cleared)]",
    )
    missing = output_of(await call(env, "kill_subagent", {}))
    assert missing.output == 'Missing required argument "subagent_id" for kill_subagent.'
    env.dispose()


async def test_66_kill_of_an_idle_subagent(tmp_path):
    env = subagent_env(tmp_path, ScriptedRunner(echo_round))
    events = notices_of(env)
    await call(env, "run_subagent", {"prompt": "quick", "run_in_background": True})
    await wait_for(lambda: len(events) == 1)
    killed = output_of(await call(env, "kill_subagent", {"subagent_id": SUBAGENT_ID}))
    assert killed.output == f"[subagent {SUBAGENT_ID} was idle; session removed]"
    env.dispose()


async def test_66_failing_background_child_reports_failed_and_taps_messages_live(tmp_path):
    async def script(handle, prompt, signal, approve):
        yield text_delta("tried")
        yield child_abort("llm_error")

    env = subagent_env(tmp_path, ScriptedRunner(script))
    events = notices_of(env)
    tapped = []
    env.services.subagent_sessions.set_message_listener(tapped.append)
    out = await call(env, "run_subagent", {"prompt": "fragile", "run_in_background": True})
    assert [m.type for m in forwarded(out)] == ["session_meta"]
    await wait_for(lambda: len(events) == 1)
    assert (events[0].status, events[0].detail, events[0].output) == (
        "failed",
        "[subagent aborted: llm_error]",
        "tried",
    )
    kinds = [m.payload.type for m in tapped]
    assert kinds == ["partial_text", "abort"]
    assert all(m.origin == [CHILD_ID] for m in tapped)
    env.dispose()


async def test_66_background_child_approvals_resolve_through_the_launch_approver(tmp_path):
    async def script(handle, prompt, signal, approve):
        decision = await approve(tool_call("exec_command", "{}", "k1"))
        yield text_delta(f"approved:{decision}")

    env = subagent_env(tmp_path, ScriptedRunner(script))
    events = notices_of(env)
    asked = []

    async def approve(call_msg):
        asked.append(call_msg.payload.tool_call_id)
        return "allow"

    await call(env, "run_subagent", {"prompt": "p", "run_in_background": True}, approve=approve)
    await wait_for(lambda: len(events) == 1)
    assert events[0].output == "approved:allow"
    assert asked == ["k1"]
    env.dispose()


async def test_66_background_messages_buffer_until_a_listener_attaches(tmp_path):
    env = subagent_env(tmp_path, ScriptedRunner(echo_round))
    events = notices_of(env)
    await call(env, "run_subagent", {"prompt": "world", "run_in_background": True})
    await wait_for(lambda: len(events) == 1)
    tapped = []
    env.services.subagent_sessions.set_message_listener(tapped.append)
    assert [m.payload.text for m in tapped] == ["Hello ", "world"]
    env.dispose()


# --- clamps, aborts of a poll, missing services --------------------------------------------------


async def test_window_is_capped_below_the_tool_timeout(tmp_path):
    """docs/tools.md "Yield times": yield_time_ms 600000 on a 2000 ms tool timeout → a 1000 ms window."""
    runner = ScriptedRunner(gated_round)
    env = subagent_env(tmp_path, runner, timeout_ms=2000)
    result = output_of(
        await asyncio.wait_for(call(env, "run_subagent", {"prompt": "x", "yield_time_ms": 600000}), 30)
    )
    assert result.stop_reason == "completed"
    assert f"[subagent running with subagent_id {SUBAGENT_ID};" in result.output
    polled = output_of(
        await asyncio.wait_for(
            call(env, "input_subagent", {"subagent_id": SUBAGENT_ID, "yield_time_ms": 1e9}), 30
        )
    )
    assert polled.output == f"[subagent still running with subagent_id {SUBAGENT_ID}]"
    env.dispose()


async def test_an_aborted_poll_leaves_the_child_running(tmp_path):
    from penguin_jupyter.interfaces import AbortSignal

    runner = ScriptedRunner(gated_round)
    env = subagent_env(tmp_path, runner)
    await call(env, "run_subagent", {"prompt": "x", "yield_time_ms": 250})
    signal = AbortSignal()
    poll = asyncio.ensure_future(
        call(env, "input_subagent", {"subagent_id": SUBAGENT_ID, "yield_time_ms": 100000}, signal=signal)
    )
    await asyncio.sleep(0.2)
    signal.abort("user")
    result = output_of(await asyncio.wait_for(poll, 20))
    assert (result.stop_reason, result.output) == ("aborted", "[interrupted: tool aborted by user]")
    manager = env.services.subagent_sessions
    assert manager.get(SUBAGENT_ID).running
    runner.handles[0].gate.set()
    done = output_of(await call(env, "input_subagent", {"subagent_id": SUBAGENT_ID, "yield_time_ms": 5000}))
    assert done.output.startswith("end:x\n[subagent idle")
    env.dispose()


async def test_tools_without_services_explain_themselves(tmp_path):
    from penguin_jupyter.environment import ToolExecutionContext
    from penguin_jupyter.environment.tools.input_subagent import InputSubagentTool
    from penguin_jupyter.environment.tools.kill_subagent import KillSubagentTool
    from penguin_jupyter.environment.types import ToolFailed
    from tests.support.env import tool_entry

    ctx = ToolExecutionContext(workspace_dir=str(tmp_path), tool_call_id="c1")
    texts = []
    for factory, name in (
        (InputSubagentTool, "input_subagent"),
        (KillSubagentTool, "kill_subagent"),
    ):
        tool = factory(tool_entry(name), None)
        with pytest.raises(ToolFailed) as failed:  # the one way a tool reports failure
            [item async for item in tool.execute({"subagent_id": "subagent-x"}, ctx)]
        texts.append(failed.value.text)
    assert texts == [
        "[input_subagent unavailable: no subagent session manager configured]",
        "[kill_subagent unavailable: no subagent session manager configured]",
    ]


async def test_subagent_tools_are_in_the_default_toolset_and_registry():
    from penguin_jupyter.environment import default_tool_config
    from penguin_jupyter.environment.registry import BUILTIN_TOOL_FACTORIES

    entries = {e.name: e for e in default_tool_config().builtin or []}
    for name, timeout in (("run_subagent", 600000), ("input_subagent", 600000), ("kill_subagent", 30000)):
        assert name in BUILTIN_TOOL_FACTORIES
        assert (entries[name].permission, entries[name].timeout_ms, entries[name].max_output_length) == (
            "rw",
            timeout,
            16000,
        )
    run_props = entries["run_subagent"].parameters["properties"]
    assert {
        "prompt",
        "agent_id",
        "provider",
        "model_id",
        "thinking_level",
        "run_in_background",
        "yield_time_ms",
    } <= set(run_props)
    assert entries["run_subagent"].parameters["required"] == ["description", "prompt"]
    assert entries["input_subagent"].parameters["required"] == ["description", "subagent_id"]
    assert entries["kill_subagent"].parameters["required"] == ["description", "subagent_id"]


async def test_dispose_also_kills_a_child_inside_a_foreground_window(tmp_path):
    aborted = asyncio.Event()

    async def script(handle, prompt, signal, approve):
        yield text_delta("busy")
        await until_aborted(signal)
        aborted.set()

    runner = ScriptedRunner(script)
    env = subagent_env(tmp_path, runner)
    window = asyncio.ensure_future(call(env, "run_subagent", {"prompt": "x"}))
    await wait_for(lambda: bool(runner.handles) and runner.handles[0].prompts == ["x"])
    env.dispose()
    await asyncio.wait_for(aborted.wait(), 10)
    result = output_of(await asyncio.wait_for(window, 20))
    assert (result.stop_reason, result.output) == ("completed", "busy")
    await wait_for(lambda: runner.handles[0].disposed == 1)
