"""Scenarios G and docs/tools.md "exec_command" to docs/environment.md "Background completion reports" with real subprocesses: exec/input/kill_command, command sessions,
background completion reports, the child environment, bounded memory and clean disposal."""

from __future__ import annotations

import asyncio
import os
import re
import time

import psutil
import pytest

from penguin_jupyter.environment.notices import BackgroundEvent, background_notice_message, report_label
from penguin_jupyter.environment.tools.common import clamp_yield_ms
from tests.support.env import delta_text, deltas, final, make_env, run_call, tool_entry


@pytest.fixture
def env(tmp_path):
    environment = make_env(
        tmp_path, tool_entry("exec_command"), tool_entry("input_command"), tool_entry("kill_command")
    )
    yield environment
    environment.dispose()


def process_id_in(text: str) -> str:
    start = text.index("proc-")
    return text[start : start + 13]


def live_group_members(pgid: int) -> list[int]:
    """Non-zombie processes whose process group is `pgid` (read from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry))
    return members


async def wait_for(predicate, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_foreground_exit_decides_completion(env):
    started = time.monotonic()
    msgs = await run_call(env, "exec_command", {"cmd": "sleep 5 & echo hello"})
    assert time.monotonic() - started < 4
    assert final(msgs).output == "hello\n" and final(msgs).stop_reason == "completed"
    assert "process_id" not in final(msgs).output


async def test_streams_incrementally_and_is_not_a_tty(env):
    msgs = await run_call(env, "exec_command", {"cmd": "echo first; sleep 0.4; echo second"})
    chunks = [p.output for p in deltas(msgs)]
    assert any("first" in c and "second" not in c for c in chunks)
    assert any("second" in c for c in chunks)
    tty = await run_call(env, "exec_command", {"cmd": "[ -t 1 ] && echo tty || echo notty"})
    assert final(tty).output == "notty\n"


async def test_exit_mapping(env):
    failed = await run_call(env, "exec_command", {"cmd": "echo oops >&2; exit 3"})
    assert final(failed).output == "oops\n\n[exit code: 3]" and final(failed).stop_reason == "failed"
    signalled = await run_call(env, "exec_command", {"cmd": "kill -TERM $$"})
    assert final(signalled).output == "[terminated by signal SIGTERM]"
    assert final(signalled).stop_reason == "failed"
    missing = await run_call(env, "exec_command", {})
    assert final(missing).output == 'Missing required argument "cmd" for exec_command.'
    bad_dir = await run_call(env, "exec_command", {"cmd": "true", "workdir": "no/such/dir"})
    assert final(bad_dir).output.startswith("[spawn error: ") and final(bad_dir).stop_reason == "failed"
    workdir = await run_call(env, "exec_command", {"cmd": "pwd", "workdir": "/"})
    assert final(workdir).output == "/\n"


async def test_still_running_yields_a_process_id_then_input_and_poll(env):
    msgs = await run_call(env, "exec_command", {"cmd": "read line; echo got:$line", "yield_time_ms": 300})
    output = final(msgs).output
    assert final(msgs).stop_reason == "completed"
    assert "[process running with process_id proc-" in output
    assert output.endswith("; use input_command to send input or poll for output]")
    pid = process_id_in(output)
    poll = await run_call(env, "input_command", {"process_id": pid, "yield_time_ms": 300})
    assert final(poll).output == f"[process still running with process_id {pid}]"
    answer = await run_call(
        env, "input_command", {"process_id": pid, "chars": "hello\n", "yield_time_ms": 3000}
    )
    assert final(answer).output == "got:hello\n" and final(answer).stop_reason == "completed"
    gone = await run_call(env, "input_command", {"process_id": pid})
    assert final(gone).output == (
        f"[input_command error: unknown process_id {pid} (the session may have exited and been cleared)]"
    )


async def test_input_command_ctrl_c_and_mixed_chars(env):
    msgs = await run_call(env, "exec_command", {"cmd": "sleep 30", "yield_time_ms": 300})
    pid = process_id_in(final(msgs).output)
    mixed = await run_call(env, "input_command", {"process_id": pid, "chars": "x\u0003"})
    assert final(mixed).stop_reason == "failed"
    assert final(mixed).output == (
        '[input_command error: chars mixes U+0003 (Ctrl-C) with other content; send "\\u0003" alone to interrupt]'
    )
    interrupted = await run_call(
        env, "input_command", {"process_id": pid, "chars": "\u0003", "yield_time_ms": 3000}
    )
    assert final(interrupted).output == "[terminated by signal SIGINT]"
    assert final(interrupted).stop_reason == "failed"


async def test_sixty_second_default_yield_is_clamped():
    assert clamp_yield_ms(None, 60000, 120000) == 60000
    assert clamp_yield_ms(10, 60000, 120000) == 250
    assert clamp_yield_ms(10**9, 60000, 120000) == 119000
    assert clamp_yield_ms("500", 60000, 120000) == 60000
    assert clamp_yield_ms(5000, 60000, 1000) == 250
    assert clamp_yield_ms(10**9, 60000, 0) == 10**9


async def test_disposed_environment_refuses_new_commands(env):
    env.dispose()
    msgs = await run_call(env, "exec_command", {"cmd": "echo should-not-run"})
    assert final(msgs).stop_reason == "failed"
    assert "command session manager disposed" in final(msgs).output
    assert "should-not-run" not in final(msgs).output.replace(
        "[spawn error: command session manager disposed]", ""
    )
    assert final(msgs).output == "[spawn error: command session manager disposed]"


async def test_background_command_reports_completion(env):
    events: list[BackgroundEvent] = []
    env.set_notice_listener(events.append)
    msgs = await run_call(
        env, "exec_command", {"cmd": "printf 'bg output'; exit 0", "run_in_background": True}
    )
    output = final(msgs).output
    assert final(msgs).stop_reason == "completed"
    pid = process_id_in(output)
    assert output == (
        f"[command running in background with process_id {pid}; its completion will arrive as a user message — "
        "no need to poll. Use input_command to interact or kill_command to stop it]"
    )
    await wait_for(lambda: events)
    (event,) = events
    assert (event.kind, event.id, event.status, event.detail) == ("command", pid, "completed", "exit code 0")
    assert "bg output" in event.output and "printf 'bg output'" in event.label
    failing = await run_call(env, "exec_command", {"cmd": "exit 3", "run_in_background": True})
    await wait_for(lambda: len(events) == 2)
    assert events[1].id == process_id_in(final(failing).output)
    assert (events[1].status, events[1].detail) == ("failed", "exit code 3")


async def test_events_before_a_listener_are_buffered(env):
    await run_call(env, "exec_command", {"cmd": "echo early", "run_in_background": True})
    await wait_for(lambda: len(env.notices._pending) == 1)
    events: list[BackgroundEvent] = []
    env.set_notice_listener(events.append)
    assert len(events) == 1 and events[0].output == "early\n"
    assert env.drain_notices() == []


async def test_drain_notices_pull_style(env):
    await run_call(env, "exec_command", {"cmd": "echo pulled; exit 1", "run_in_background": True})
    await wait_for(lambda: len(env.notices._pending) == 1)
    (event,) = env.drain_notices()
    assert (event.status, event.detail, event.output) == ("failed", "exit code 1", "pulled\n")
    assert env.drain_notices() == []


async def test_dispose_suppresses_pending_reports(env):
    await run_call(env, "exec_command", {"cmd": "sleep 0.3; echo late", "run_in_background": True})
    env.dispose()
    await asyncio.sleep(1.0)
    events: list[BackgroundEvent] = []
    env.set_notice_listener(events.append)
    await asyncio.sleep(0.2)
    assert events == [] and env.drain_notices() == []


async def test_kill_command_stops_a_background_command_without_a_report(env):
    events: list[BackgroundEvent] = []
    env.set_notice_listener(events.append)
    launched = await run_call(
        env, "exec_command", {"cmd": "echo pending; sleep 30", "run_in_background": True}
    )
    pid = process_id_in(final(launched).output)
    await asyncio.sleep(0.5)
    killed = await run_call(env, "kill_command", {"process_id": pid})
    assert final(killed).stop_reason == "completed"
    assert final(killed).output == (
        f"pending\n\n[process {pid} killed (SIGTERM to the process group, SIGKILL after a grace period)]"
    )
    await asyncio.sleep(1.2)
    assert events == []
    again = await run_call(env, "kill_command", {"process_id": pid})
    assert final(again).stop_reason == "failed"
    unknown = await run_call(env, "kill_command", {"process_id": "proc-00000000"})
    assert final(unknown).output == (
        "[kill_command error: unknown process_id proc-00000000 (the session may have exited and been cleared)]"
    )


async def test_kill_command_on_an_exited_session(env):
    launched = await run_call(
        env, "exec_command", {"cmd": "exit 4", "yield_time_ms": 250, "run_in_background": True}
    )
    pid = process_id_in(final(launched).output)
    await wait_for(lambda: env.command_sessions.get(pid).exited)
    result = await run_call(env, "kill_command", {"process_id": pid})
    assert final(result).output == f"[process {pid} had already exited (exit code 4); session removed]"


async def test_registry_cap_evicts_least_recently_used(env):
    env.command_sessions.cap = 2
    ids = []
    for _ in range(3):
        msgs = await run_call(env, "exec_command", {"cmd": "sleep 30", "yield_time_ms": 250})
        ids.append(process_id_in(final(msgs).output))
    assert env.command_sessions.ids() == ids[1:]
    gone = await run_call(env, "input_command", {"process_id": ids[0]})
    assert "unknown process_id" in final(gone).output


async def test_vault_cannot_override_hardening(tmp_path, monkeypatch):
    monkeypatch.setenv("PORT", "4321")
    monkeypatch.setenv("host", "somewhere")
    monkeypatch.setenv("Force_Color", "1")
    env = make_env(
        tmp_path,
        tool_entry("exec_command"),
        vault={"PENGUIN_VAULT_TEST_KEY": "vault-secret-value", "PAGER": "less"},
    )
    msgs = await run_call(env, "exec_command", {"cmd": 'echo "k=$PENGUIN_VAULT_TEST_KEY pager=$PAGER"'})
    assert final(msgs).output == "k=vault-secret-value pager=cat\n"
    hardened = await run_call(
        env, "exec_command", {"cmd": 'echo "$GIT_EDITOR|$GIT_TERMINAL_PROMPT|$PAGER|$TERM"'}
    )
    assert final(hardened).output == "true|0|cat|dumb\n"
    stripped = await run_call(
        env, "exec_command", {"cmd": "env | grep -i -E '^(port|host|force_color)=' || true"}
    )
    assert final(stripped).output == "[no output]"
    env.dispose()
    with_port = make_env(tmp_path, tool_entry("exec_command"), vault={"PORT": "8080"})
    msgs = await run_call(with_port, "exec_command", {"cmd": "echo $PORT"})
    assert final(msgs).output == "8080\n"
    with_port.dispose()


async def test_fifty_megabytes_keep_memory_bounded(tmp_path):
    env = make_env(tmp_path, tool_entry("exec_command"), session_scratchpad_dir=str(tmp_path / "scratch"))
    process = psutil.Process()
    before = process.memory_info().rss
    msgs = await run_call(env, "exec_command", {"cmd": "head -c 50000000 /dev/zero | tr '\\0' a"})
    growth = process.memory_info().rss - before
    assert growth < 250 * 1024 * 1024, f"RSS grew by {growth} bytes"
    output = final(msgs).output
    # The model's view is capped at 16,000 chars. When the machine is busy, the reader thread can
    # overrun the 1 MiB unread-output buffer between two drains: the oldest part is dropped and
    # the next drain starts with the buffer's marker (commands/session.py), so the head may hold it.
    head, _, notes = output.partition("\n[output truncated: exceeded 16000 chars]\n")
    dropped = r"\[\.\.\. \d+ chars of earlier output dropped \.\.\.\]\n"
    assert len(head) == 16000 and re.fullmatch(f"a*(?:{dropped}a*)*", head), (
        f"not a in the head: {[(i, c) for i, c in enumerate(head) if c != 'a'][:5]} {notes[:400]!r}"
    )
    assert final(msgs).stop_reason == "completed"
    assert delta_text(msgs) == output
    archived = re.fullmatch(r"\[output archived(?: \(\d+ MiB limit; head and tail kept\))?: (.+)\]", notes)
    assert archived is not None and os.path.getsize(archived.group(1)) <= 8 * 1024 * 1024, notes
    env.dispose()


async def test_dispose_leaves_no_child_alive(env):
    running = await run_call(env, "exec_command", {"cmd": "sleep 100 & sleep 100", "yield_time_ms": 300})
    background = await run_call(
        env, "exec_command", {"cmd": "sleep 100 & sleep 100", "run_in_background": True}
    )
    sessions = [
        env.command_sessions.get(process_id_in(final(running).output)),
        env.command_sessions.get(process_id_in(final(background).output)),
    ]
    groups = [s.pid for s in sessions]
    await asyncio.sleep(0.3)
    assert all(len(live_group_members(g)) >= 2 for g in groups)
    env.dispose()
    env.dispose()
    await wait_for(lambda: not any(live_group_members(g) for g in groups), timeout_s=5)


async def test_kill_all_commands_keeps_the_environment_usable(env):
    msgs = await run_call(env, "exec_command", {"cmd": "sleep 100", "yield_time_ms": 300})
    session = env.command_sessions.get(process_id_in(final(msgs).output))
    env.kill_all_commands()
    await wait_for(lambda: not live_group_members(session.pid), timeout_s=5)
    assert env.command_sessions.ids() == []
    after = await run_call(env, "exec_command", {"cmd": "echo still-works"})
    assert final(after).output == "still-works\n"


async def test_notice_text_and_label():
    event = BackgroundEvent("command", "proc-11aa22bb", "sleep 1", "completed", "exit code 0", "done!")
    msg = background_notice_message(event)
    assert msg.payload.sender == "harness"
    assert msg.payload.text == (
        "[background_task_done]\n"
        "Automatic notification from the harness, not the user: a background task you started has finished.\n"
        "kind: command\nid: proc-11aa22bb\nstatus: completed\ndetail: exit code 0\n[/background_task_done]\n\n"
        "Background command finished: `sleep 1` (process_id proc-11aa22bb) — exit code 0\n\ndone!"
    )
    assert report_label("x" * 200 + "\nsecond") == "x" * 119 + "…"


async def test_proxy_policy_is_read_at_every_spawn(tmp_path, monkeypatch):
    from penguin_jupyter.environment.child_env import ProxyPolicy
    from penguin_jupyter.interfaces import EnvironmentServices

    monkeypatch.setenv("https_proxy", "http://host-proxy:1")
    monkeypatch.setenv("NO_PROXY", "keep.me")
    current: list[ProxyPolicy | None] = [ProxyPolicy("strip")]
    services = EnvironmentServices(extra={"proxy_policy": lambda: current[0]})
    env = make_env(tmp_path, tool_entry("exec_command"), services=services)
    show = {"cmd": 'echo "[$https_proxy|$HTTP_PROXY|$NO_PROXY|$no_proxy]"'}
    assert final(await run_call(env, "exec_command", show)).output == "[||keep.me|]\n"
    current[0] = ProxyPolicy("inject", url="http://127.0.0.1:9", no_proxy="localhost")
    assert final(await run_call(env, "exec_command", show)).output == (
        "[http://127.0.0.1:9|http://127.0.0.1:9|localhost|localhost]\n"
    )
    env.dispose()


async def test_trailing_output_after_exit_is_kept_whether_or_not_a_child_holds_the_pipes(tmp_path):
    from penguin_jupyter.environment.commands.session import CommandSession

    plain = CommandSession("printf 'a%.0s' $(seq 1 5000)", str(tmp_path), dict(os.environ))
    text = "".join([chunk async for chunk in plain.collect(10_000, None)])
    assert text == "a" * 5000 and plain.exited and plain.pipes_closed

    # A background child keeps the pipes open after the shell exits: completion still follows
    # the shell, and the child's output written within the quiet window is collected.
    held = CommandSession("(sleep 0.01; echo late; sleep 3) & echo early", str(tmp_path), dict(os.environ))
    text = "".join([chunk async for chunk in held.collect(10_000, None)])
    assert held.exited and not held.pipes_closed
    assert text.startswith("early\n")
    held.hard_kill()
