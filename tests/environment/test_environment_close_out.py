"""Scenarios E (docs/environment.md): list_tools, framing, unknown tools, truncation + archive,
compatibility tools, images, origin passthrough, raised and aborted tools."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from penguin_jupyter.environment import ToolConfig, ToolResult, default_tool_config
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.omni import tool_call_output, with_origin
from tests.support.env import (
    ScriptedTool,
    assert_well_framed,
    final,
    make_env,
    out,
    run_call,
    scripted_env,
    tool_entry,
)


async def test_list_tools_exposes_only_definition_fields(tmp_path):
    entry = tool_entry("exec_command")
    unknown = entry.model_copy(update={"name": "not_a_registered_tool"})
    env = make_env(tmp_path, entry, unknown)
    tools = await env.list_tools()
    assert [t.to_spec() for t in tools] == [
        {"name": "exec_command", "description": entry.description, "parameters": entry.parameters}
    ]
    assert env.tool_permission("exec_command") == "rw"
    assert env.tool_permission("not_a_registered_tool") is None
    msgs = await run_call(env, "not_a_registered_tool", {"cmd": "true"})
    assert final(msgs).output == "Unknown tool: not_a_registered_tool"
    env.dispose()


async def test_default_toolset_and_model_class_selection(tmp_path):
    env = make_env(tmp_path)
    names = [t.name for t in await env.list_tools()]
    assert names == [
        "read_file",
        "edit_file",
        "write_file",
        "exec_command",
        "input_command",
        "kill_command",
        "run_subagent",
        "input_subagent",
        "kill_subagent",
        "read_image",
        "describe_image",
    ]
    assert env.tool_permission("read_file") == "r"
    env.dispose()
    vision = make_env(tmp_path, model_class="vision")
    text_only = make_env(tmp_path, model_class="text-only")
    assert "read_image" in [t.name for t in await vision.list_tools()]
    assert "describe_image" not in [t.name for t in await vision.list_tools()]
    assert "describe_image" in [t.name for t in await text_only.list_tools()]
    assert "read_image" not in [t.name for t in await text_only.list_tools()]
    vision.dispose()
    text_only.dispose()


async def test_default_table_limits():
    table = {e.name: (e.permission, e.timeout_ms, e.max_output_length) for e in default_tool_config().builtin}
    assert table == {
        "read_file": ("r", 30000, 64000),
        "edit_file": ("rw", 30000, 16000),
        "write_file": ("rw", 30000, 16000),
        "exec_command": ("rw", 120000, 16000),
        "input_command": ("rw", 130000, 16000),
        "kill_command": ("rw", 30000, 16000),
        "run_subagent": ("rw", 600000, 16000),
        "input_subagent": ("rw", 600000, 16000),
        "kill_subagent": ("rw", 30000, 16000),
        "read_image": ("r", 60000, 16000),
        "describe_image": ("r", 90000, 16000),
    }


async def test_call_description_toggle_removes_the_argument(tmp_path):
    entry = tool_entry("exec_command")
    assert entry.parameters["required"] == ["description", "cmd"]
    env = make_env(tmp_path, entry.model_copy(update={"call_description": False}))
    (tool,) = await env.list_tools()
    assert "description" not in tool.parameters["properties"]
    assert tool.parameters["required"] == ["cmd"]
    assert "description" in entry.parameters["properties"]  # the entry itself is untouched
    env.dispose()


async def test_normal_call_framing_writes_the_file(tmp_path):
    env = make_env(tmp_path, tool_entry("exec_command"))
    msgs = await run_call(env, "exec_command", {"cmd": "printf 'Hello, Penguin' > note.txt"}, "call_write")
    assert msgs[0].payload.type == "partial_tool_call_output" and msgs[0].payload.event_type == "start"
    assert any(m.payload.type == "partial_tool_call_output" and m.payload.event_type == "stop" for m in msgs)
    assert final(msgs).tool_call_id == "call_write" and final(msgs).stop_reason == "completed"
    assert (tmp_path / "note.txt").read_text() == "Hello, Penguin"
    env.dispose()


async def test_true_yields_no_output_marker(tmp_path):
    env = make_env(tmp_path, tool_entry("exec_command"))
    msgs = await run_call(env, "exec_command", {"cmd": "true"})
    assert final(msgs).output == "[no output]" and final(msgs).stop_reason == "completed"
    assert_well_framed(msgs)
    env.dispose()


async def test_unknown_tool_sequence(tmp_path):
    env = make_env(tmp_path)
    msgs = await run_call(env, "not_a_real_tool", {}, "call_unknown")
    assert [m.payload.type for m in msgs] == ["partial_tool_call_output"] * 3 + ["tool_call_output"]
    assert msgs[1].payload.event_type == "delta"
    assert "Unknown tool: not_a_real_tool" in msgs[1].payload.output
    assert final(msgs).output == "Unknown tool: not_a_real_tool"
    assert final(msgs).tool_call_id == "call_unknown" and final(msgs).stop_reason == "failed"
    env.dispose()


async def test_bad_arguments_are_upfront_failures(tmp_path):
    env = make_env(tmp_path, tool_entry("exec_command"))
    empty = await run_call(env, "exec_command", "  ")
    assert final(empty).output == (
        'Tool call "exec_command" failed: the arguments field is empty. '
        "Re-issue the call with a complete JSON object."
    )
    broken = await run_call(env, "exec_command", '{"cmd": ')
    assert final(broken).output.startswith(
        'Tool call "exec_command" failed: the arguments are not valid JSON ('
    )
    assert final(broken).output.endswith("). Re-issue the call with one complete, valid JSON object.")
    assert final(broken).stop_reason == "failed"
    # JSON that is not an object is refused as such (it used to read as `{}`), deep nesting too
    not_object = await run_call(env, "exec_command", "42")
    assert final(not_object).output == (
        'Tool call "exec_command" failed: the arguments are not a JSON object (got a number). '
        "Re-issue the call with one complete, valid JSON object."
    )
    deep = await run_call(env, "exec_command", "[" * 100_000 + "]" * 100_000)
    assert "the arguments are not valid JSON (RecursionError" in final(deep).output
    assert final(deep).stop_reason == "failed"
    env.dispose()


async def test_front_keep_truncation_and_archive(tmp_path):
    scratch = tmp_path / "scratch"
    env = make_env(
        tmp_path, tool_entry("exec_command", max_output_length=50), session_scratchpad_dir=str(scratch)
    )
    msgs = await run_call(env, "exec_command", {"cmd": "seq 1 100000"})
    output = final(msgs).output
    assert output.startswith("1\n2\n3\n")
    assert output.index("[output truncated: exceeded 50 chars]") == 51
    match = re.search(r"\[output archived: ([^\]]+)\]", output)
    assert match, output
    with open(match.group(1)) as handle:
        assert handle.read().endswith("100000\n")
    assert_well_framed(msgs)
    assert oct(os.stat(scratch / "truncated-tool-output").st_mode & 0o777) == "0o700"
    env.dispose()


async def test_truncation_without_scratchpad_and_disabled_limit(tmp_path):
    env = make_env(tmp_path, tool_entry("exec_command", max_output_length=5))
    msgs = await run_call(env, "exec_command", {"cmd": "seq 1 100"})
    assert "[output truncated: exceeded 5 chars]" in final(msgs).output
    assert "[output archived:" not in final(msgs).output
    assert_well_framed(msgs)
    env.dispose()
    scratch = tmp_path / "scratch"
    unlimited = make_env(
        tmp_path, tool_entry("exec_command", max_output_length=0), session_scratchpad_dir=str(scratch)
    )
    msgs = await run_call(unlimited, "exec_command", {"cmd": "seq 1 100000"})
    assert "[output truncated" not in final(msgs).output
    assert final(msgs).output.endswith("99999\n100000\n")
    assert not (scratch / "truncated-tool-output").exists()
    short = await run_call(unlimited, "exec_command", {"cmd": "echo short"})
    assert final(short).output == "short\n"
    assert not scratch.exists()
    unlimited.dispose()


async def test_exact_archive_is_readable_across_environments(tmp_path):
    scratch = tmp_path / "scratch"
    body = "BEGIN\n" + "x" * 200 + "\nEND\n"
    assert len(body) == 211
    (tmp_path / "body.txt").write_text(body)
    ws = tmp_path / "ws"
    ws.mkdir()
    env = make_env(
        ws,
        tool_entry("exec_command", max_output_length=50),
        tool_entry("read_file"),
        session_scratchpad_dir=str(scratch),
    )
    msgs = await run_call(env, "exec_command", {"cmd": f"cat {tmp_path / 'body.txt'}"})
    assert final(msgs).stop_reason == "completed"
    path = re.search(r"\[output archived: ([^\]]+)\]", final(msgs).output).group(1)
    assert Path(path).read_text() == body
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    read = await run_call(env, "read_file", {"file_path": path})
    assert "BEGIN" in final(read).output and "END" in final(read).output
    env.dispose()
    assert os.path.exists(path)
    fresh = make_env(ws, tool_entry("read_file"), session_scratchpad_dir=str(scratch))
    again = await run_call(fresh, "read_file", {"file_path": path})
    assert "     8\tEND" not in final(again).output and "END" in final(again).output
    fresh.dispose()


async def test_archive_failure_keeps_the_outcome(tmp_path, caplog):
    blocker = tmp_path / "scratch"
    blocker.write_text("a regular file where the scratchpad should be")
    env = make_env(
        tmp_path, tool_entry("exec_command", max_output_length=50), session_scratchpad_dir=str(blocker)
    )
    msgs = await run_call(env, "exec_command", {"cmd": "seq 1 1000"})
    assert re.search(r"\[output archive failed: [^\]]+\]", final(msgs).output)
    assert final(msgs).stop_reason == "completed"
    assert re.search(
        r'\[penguin\] tool "exec_command" truncated output archive write failed \([A-Z]+\)\.',
        "\n".join(caplog.messages),
    )
    assert_well_framed(msgs)
    env.dispose()


async def test_late_abort_during_archive_does_not_change_the_result(tmp_path, monkeypatch):
    from penguin_jupyter.environment import archive

    signal = AbortSignal()
    original = archive.ArchiveCapture.save

    def save_then_abort(self):
        signal.abort("user")
        return original(self)

    monkeypatch.setattr(archive.ArchiveCapture, "save", save_then_abort)
    env = make_env(
        tmp_path, tool_entry("exec_command", max_output_length=50), session_scratchpad_dir=str(tmp_path / "s")
    )
    msgs = await run_call(env, "exec_command", {"cmd": "seq 1 1000"}, signal=signal)
    assert signal.aborted
    assert final(msgs).stop_reason == "completed"
    assert "[output archived:" in final(msgs).output
    assert "[interrupted: tool aborted by user]" not in final(msgs).output
    env.dispose()


async def test_huge_archive_keeps_utf8_head_and_tail(tmp_path):
    async def script(args, ctx):
        yield out(ctx, "BEGIN-企鹅\n")
        block = "x" * 65536
        for _ in range((8 * 1024 * 1024 + 100_000) // 65536):
            yield out(ctx, block)
        yield out(ctx, "x" * ((8 * 1024 * 1024 + 100_000) % 65536))
        yield out(ctx, "\n-END-\ud83d")
        yield out(ctx, "\udc27")

    tool = ScriptedTool("big", script, max_output_length=50)
    env = scripted_env(tmp_path, tool, session_scratchpad_dir=str(tmp_path / "s"))
    msgs = await run_call(env, "big", {})
    output = final(msgs).output
    assert "head and tail kept" in output
    path = re.search(r"\[output archived \(8 MiB limit; head and tail kept\): ([^\]]+)\]", output).group(1)
    data = Path(path).read_bytes()
    assert len(data) <= 8 * 1024 * 1024
    text = data.decode("utf-8")
    assert "BEGIN-企鹅" in text and text.endswith("-END-🐧") and "[archive middle truncated]" in text
    assert "\ufffd" not in text
    assert_well_framed(msgs)


async def test_compatibility_tool_complete_message_only(tmp_path):
    source = "COMPLETE-ONLY-" + "z" * 100 + "-END"

    async def script(args, ctx):
        yield tool_call_output(source, ctx.tool_call_id)

    env = scripted_env(
        tmp_path,
        ScriptedTool("compat", script, max_output_length=20),
        session_scratchpad_dir=str(tmp_path / "s"),
    )
    msgs = await run_call(env, "compat", {})
    output = final(msgs).output
    assert output.startswith(source[:20] + "\n[output truncated: exceeded 20 chars]")
    path = re.search(r"\[output archived: ([^\]]+)\]", output).group(1)
    assert Path(path).read_text() == source
    assert final(msgs).stop_reason == "completed"
    assert_well_framed(msgs)


async def test_images_ride_one_delta_before_stop_only_when_completed(tmp_path):
    image = "data:image/png;base64,AAAA"

    async def ok(args, ctx):
        yield out(ctx, "image/png, 4 B")
        yield ToolResult(images=[image])

    env = scripted_env(tmp_path, ScriptedTool("pic", ok))
    msgs = await run_call(env, "pic", {})
    assert final(msgs).output == "image/png, 4 B" and final(msgs).images == [image]
    carrying = [
        i for i, m in enumerate(msgs) if m.payload.type == "partial_tool_call_output" and m.payload.images
    ]
    assert len(carrying) == 1 and msgs[carrying[0]].payload.event_type == "delta"
    assert msgs[carrying[0] + 1].payload.event_type == "stop"
    assert msgs[carrying[0]].payload.output == ""

    async def failed(args, ctx):
        yield out(ctx, "image/png, 4 B")
        yield ToolResult(stop_reason="failed", images=[image])

    env = scripted_env(tmp_path, ScriptedTool("pic", failed))
    msgs = await run_call(env, "pic", {})
    assert final(msgs).stop_reason == "failed"
    assert all(m.payload.images is None for m in msgs if hasattr(m.payload, "images"))
    assert '"images"' not in msgs[-1].model_dump_json(exclude_none=True)


async def test_origin_passthrough_is_excluded(tmp_path):
    child = with_origin(tool_call_output("c" * 1300, "child_call"), "child-session")

    async def script(args, ctx):
        yield child
        yield out(ctx, "own output")

    scratch = tmp_path / "s"
    env = scripted_env(
        tmp_path, ScriptedTool("parent", script, max_output_length=10), session_scratchpad_dir=str(scratch)
    )
    msgs = await run_call(env, "parent", {})
    assert msgs[1] == child
    complete = [m for m in msgs if m.payload.type == "tool_call_output" and not m.origin]
    assert len(complete) == 1 and complete[0].payload.output == "own output"
    assert complete[0].payload.stop_reason == "completed"
    assert not scratch.exists()


async def test_raised_tool_keeps_partial_output(tmp_path):
    async def script(args, ctx):
        yield out(ctx, "", "start")
        yield out(ctx, "working")
        raise RuntimeError("kaboom")

    env = scripted_env(tmp_path, ScriptedTool("boom", script))
    msgs = await run_call(env, "boom", {})
    kinds = [m.payload.event_type if m.payload.type != "tool_call_output" else "complete" for m in msgs]
    assert kinds == ["start", "delta", "delta", "stop", "complete"]
    assert msgs[2].payload.output == "\n[tool error] kaboom"
    assert msgs[3].payload.stop_reason == "failed" and final(msgs).stop_reason == "failed"
    assert final(msgs).output == "working\n[tool error] kaboom"
    assert_well_framed(msgs)


async def test_abort_relabels_whatever_the_tool_reports(tmp_path):
    async def raises(args, ctx):
        yield out(ctx, "partial")
        raise RuntimeError("late failure")

    async def complete_anyway(args, ctx):
        yield tool_call_output("done anyway", ctx.tool_call_id)

    async def start_then_complete(args, ctx):
        yield out(ctx, "", "start")
        yield tool_call_output("buffered result", ctx.tool_call_id)

    for script, content in (
        (raises, "partial"),
        (complete_anyway, "done anyway"),
        (start_then_complete, "buffered result"),
    ):
        signal = AbortSignal()
        signal.abort("user")
        env = scripted_env(tmp_path, ScriptedTool("t", script))
        msgs = await run_call(env, "t", {}, signal=signal)
        assert final(msgs).stop_reason == "aborted"
        assert content in final(msgs).output
        assert final(msgs).output.endswith("[interrupted: tool aborted by user]")
        assert_well_framed(msgs)


async def test_timeout_marker_and_note_order(tmp_path):
    async def sleeper(args, ctx):
        yield out(ctx, "begun")
        await ctx.signal.wait()
        yield ToolResult(stop_reason="aborted", note="[tool note]")

    env = scripted_env(tmp_path, ScriptedTool("slow", sleeper, timeout_ms=200))
    msgs = await run_call(env, "slow", {})
    assert final(msgs).output == "begun\n[tool note]\n[tool timeout: exceeded 200ms]"
    assert final(msgs).stop_reason == "failed"
    assert_well_framed(msgs)


async def test_user_abort_mid_run_interrupts_exec(tmp_path):
    env = make_env(tmp_path, tool_entry("exec_command"))
    signal = AbortSignal()

    async def abort_soon():
        await asyncio.sleep(0.5)
        signal.abort("user")

    aborter = asyncio.create_task(abort_soon())
    msgs = await run_call(env, "exec_command", {"cmd": "echo started; sleep 30"}, signal=signal)
    await aborter
    assert final(msgs).stop_reason == "aborted"
    assert final(msgs).output == "started\n\n[interrupted: tool aborted by user]"
    env.dispose()


async def test_extra_tools_are_listed_after_configured_entries(tmp_path):
    async def script(args, ctx):
        yield out(ctx, f"got {args['x']}")

    env = make_env(
        tmp_path, tool_entry("read_file"), extra_tools=[ScriptedTool("kernel_run", script, permission="rw")]
    )
    assert [t.name for t in await env.list_tools()] == ["read_file", "kernel_run"]
    assert env.tool_permission("kernel_run") == "rw"
    msgs = await run_call(env, "kernel_run", {"x": 1})
    assert final(msgs).output == "got 1"
    env.dispose()


async def test_dispose_is_idempotent(tmp_path):
    env = make_env(tmp_path)
    env.dispose()
    env.dispose()
    assert isinstance(env.config.tool_config, ToolConfig)


async def test_a_tool_ignoring_cancellation_is_cancelled_after_the_grace(tmp_path, monkeypatch):
    from penguin_jupyter.environment import close_out

    monkeypatch.setattr(close_out, "CANCEL_GRACE_S", 0.2)

    async def stubborn(args, ctx):
        yield out(ctx, "ignoring you")
        await asyncio.sleep(60)

    env = scripted_env(tmp_path, ScriptedTool("stubborn", stubborn, timeout_ms=200))
    msgs = await asyncio.wait_for(run_call(env, "stubborn", {}), timeout=10)
    assert final(msgs).output == "ignoring you\n[tool timeout: exceeded 200ms]"
    assert final(msgs).stop_reason == "failed"


async def test_command_tools_without_a_manager_explain_themselves(tmp_path):
    from penguin_jupyter.environment import BUILTIN_TOOL_FACTORIES, ToolExecutionContext
    from penguin_jupyter.environment.types import ToolFailed

    for name in ("exec_command", "input_command", "kill_command"):
        tool = BUILTIN_TOOL_FACTORIES[name](tool_entry(name))
        ctx = ToolExecutionContext(workspace_dir=str(tmp_path), tool_call_id="c")
        with pytest.raises(ToolFailed) as failed:  # the one way a tool reports failure
            [item async for item in tool.execute({"cmd": "true", "process_id": "p"}, ctx)]
        assert failed.value.text == f"[{name} unavailable: no command session manager configured]"
