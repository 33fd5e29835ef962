"""The public Python API against its contract: the README's "The core, from Python" and docs/architecture.md "The three interfaces", name by name.

Every statement of those two documents that can be checked is checked here — import paths,
signatures and defaults, model fields, literal values, async-ness, return shapes, documented
errors — with real calls where they are cheap (builders, configs, a real Environment, a
GenerativeModel and a ContextEngine over the scripted model server, an Agent/Session on a
temporary data root). The README's "The core, from Python" snippet is run as written.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import inspect
import json
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from penguin_jupyter.omni import OmniMessage
from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT

BUILTIN_TABLE = {  # docs/tools.md: name -> (permission, timeout_ms, max_output_length, required, for_model)
    "read_file": ("r", 30000, 64000, ["file_path"], None),
    "edit_file": ("rw", 30000, 16000, ["file_path", "old_string", "new_string"], None),
    "write_file": ("rw", 30000, 16000, ["file_path", "content"], None),
    "exec_command": ("rw", 120000, 16000, ["description", "cmd"], None),
    "input_command": ("rw", 130000, 16000, ["description", "process_id"], None),
    "kill_command": ("rw", 30000, 16000, ["description", "process_id"], None),
    "run_subagent": ("rw", 600000, 16000, ["description", "prompt"], None),
    "input_subagent": ("rw", 600000, 16000, ["description", "subagent_id"], None),
    "kill_subagent": ("rw", 30000, 16000, ["description", "subagent_id"], None),
    "read_image": ("r", 60000, 16000, ["source"], "vision"),
    "describe_image": ("r", 90000, 16000, ["source"], "text-only"),
}


def params(fn: Any) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(fn).parameters)


def assert_params(fn: Any, expected: dict[str, Any], *, keyword_only: tuple[str, ...] = ()) -> None:
    """Each named parameter exists with the given default (`inspect.Parameter.empty` = required);
    names in `keyword_only` must be keyword-only. Extra optional parameters are allowed."""
    got = params(fn)
    for name, default in expected.items():
        assert name in got, f"{fn!r} has no parameter {name!r} (has {list(got)})"
        assert got[name].default == default, f"{name}: default {got[name].default!r} != {default!r}"
        if name in keyword_only:
            assert got[name].kind is inspect.Parameter.KEYWORD_ONLY, f"{name} must be keyword-only"
    for name, param in got.items():
        if (
            name not in expected
            and name != "self"
            and param.kind not in (param.VAR_KEYWORD, param.VAR_POSITIONAL)
        ):
            assert param.default is not inspect.Parameter.empty, f"undocumented required parameter {name!r}"


def payload_fields(cls: type) -> list[str]:
    return list(cls.model_fields)


async def allow(_call: OmniMessage) -> str:
    return "allow"


# --- Messages: penguin_jupyter.omni ------------------------------------------------------------


def test_omni_names_are_importable():
    import penguin_jupyter.omni as omni

    for name in [
        "OmniMessage",
        "to_json",
        "from_json",
        "user_text",
        "assistant_text",
        "thinking",
        "tool_call",
        "tool_call_output",
        "partial_text",
        "token_usage",
        "with_origin",
        "request_begin",
        "request_end",
        "approval_decision",
        "abort",
        "is_complete_model_message",
        "is_partial_payload",
        "is_model_message",
        "is_event_message",
        "is_session_meta",
        "PartialAggregator",
        "StopReason",
    ]:
        assert hasattr(omni, name), name


def test_omni_message_model_fields_and_stop_reasons():
    from pydantic import BaseModel

    from penguin_jupyter.omni import StopReason

    assert issubclass(OmniMessage, BaseModel)
    assert list(OmniMessage.model_fields) == ["timestamp", "type", "payload", "origin"]
    assert OmniMessage.model_fields["origin"].default is None
    assert set(typing.get_args(OmniMessage.model_fields["type"].annotation)) == {
        "session_meta",
        "model_msg",
        "event_msg",
    }
    assert set(typing.get_args(StopReason)) == {
        "completed",
        "failed",
        "aborted",
        "timeout",
        "malformed",
        "auth",
    }


def test_payload_models_have_the_wire_fields_in_order():
    import penguin_jupyter.omni as o

    expected = {  # docs/protocol.md "session_meta" to docs/protocol.md "Events"
        o.SessionMetaPayload: "session_id provider model_id model_context_window system_prompt agent_state workspace source",
        o.TextPayload: "type role text stop_reason fidelity sender",
        o.ImageUrlPayload: "type role image_url stop_reason",
        o.InlineDataPayload: "type role data mime_type stop_reason fidelity",
        o.ThinkingPayload: "type role thinking stop_reason fidelity",
        o.InlineThinkingPayload: "type role data mime_type stop_reason fidelity",
        o.ToolCallPayload: "type role name arguments tool_call_id stop_reason fidelity",
        o.ToolCallOutputPayload: "type role output images tool_call_id stop_reason",
        o.PartialTextPayload: "type role event_type text stop_reason",
        o.PartialThinkingPayload: "type role event_type thinking stop_reason",
        o.PartialToolCallPayload: "type role event_type name arguments tool_call_id stop_reason",
        o.PartialToolCallOutputPayload: "type role event_type output images tool_call_id stop_reason",
        o.RequestBeginPayload: "type",
        o.RequestEndPayload: "type status error_message attempt retry_in_ms",
        o.ApprovalDecisionPayload: "type decision tool_call_id",
        o.TokenUsagePayload: "type session request",
        o.AbortPayload: "type reason",
        o.CompactionBeginPayload: "type reason mode context turns",
        o.CompactionEndPayload: "type reason mode status attempt error_message",
        o.SubagentPayload: "type session_id",
        o.ToolListReadyPayload: "type tools",
        o.McpConnectBeginPayload: "type servers",
        o.McpConnectEndPayload: "type status results",
        o.TokenCounts: "cache_read cache_write output total",
    }
    for cls, fields in expected.items():
        assert payload_fields(cls) == fields.split(), cls.__name__
    decision = o.ApprovalDecisionPayload.model_fields["decision"].annotation
    assert set(typing.get_args(decision)) == {"allow", "deny", "forbidden"}


def test_to_json_is_the_exact_wire_shape_of_section_1_7():
    from penguin_jupyter.omni import (
        abort,
        approval_decision,
        request_end,
        to_json,
        token_usage,
        tool_call,
        tool_call_output,
        user_text,
    )

    def body(msg: OmniMessage) -> str:
        line = to_json(msg)
        assert "\n" not in line and ": " not in line and ", " not in line
        stamp = json.loads(line)["timestamp"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
        return line.replace(f'"timestamp":"{stamp}",', "", 1)

    assert body(user_text("Create hello.txt")) == (
        '{"type":"model_msg","payload":{"type":"text","role":"user","text":"Create hello.txt","stop_reason":"completed"}}'
    )
    assert body(user_text("[background_task_done]\n…", sender="harness")) == (
        '{"type":"model_msg","payload":{"type":"text","role":"user","text":"[background_task_done]\\n…",'
        '"stop_reason":"completed","sender":"harness"}}'
    )
    assert body(tool_call("exec_command", {"cmd": "printf hi > hello.txt"}, "call_0")) == (
        '{"type":"model_msg","payload":{"type":"tool_call","role":"assistant","name":"exec_command",'
        '"arguments":"{\\"cmd\\":\\"printf hi > hello.txt\\"}","tool_call_id":"call_0","stop_reason":"completed"}}'
    )
    assert body(approval_decision("allow", "call_0")) == (
        '{"type":"event_msg","payload":{"type":"approval_decision","decision":"allow","tool_call_id":"call_0"}}'
    )
    assert body(tool_call_output("[no output]", "call_0")) == (
        '{"type":"model_msg","payload":{"type":"tool_call_output","role":"user","output":"[no output]",'
        '"tool_call_id":"call_0","stop_reason":"completed"}}'
    )
    counts = {"cache_read": 0, "cache_write": 12, "output": 5, "total": 17}
    assert body(token_usage(counts, counts)) == (
        '{"type":"event_msg","payload":{"type":"token_usage","session":{"cache_read":0,"cache_write":12,"output":5,'
        '"total":17},"request":{"cache_read":0,"cache_write":12,"output":5,"total":17}}}'
    )
    assert body(request_end("timeout", "idle", 1, 2000)) == (
        '{"type":"event_msg","payload":{"type":"request_end","status":"timeout","error_message":"idle",'
        '"attempt":1,"retry_in_ms":2000}}'
    )
    assert (
        body(abort("aborted by user"))
        == '{"type":"event_msg","payload":{"type":"abort","reason":"aborted by user"}}'
    )
    assert body(abort()) == '{"type":"event_msg","payload":{"type":"abort","reason":null}}'


def test_from_json_round_trips_and_raises_value_error_on_garbage():
    from penguin_jupyter.omni import from_json, to_json, tool_call_output, with_origin

    msg = with_origin(tool_call_output("ok", "c1", images=["data:image/png;base64,AA=="]), "session-x")
    again = from_json(to_json(msg))
    assert isinstance(again, OmniMessage) and again == msg and to_json(again) == to_json(msg)
    garbage = [
        "",
        "not json",
        "{",
        "null",
        "[]",
        '"text"',
        '{"type":"model_msg"}',
        '{"timestamp":"t","type":"nope","payload":{}}',
        '{"timestamp":"t","type":"model_msg","payload":{"type":"request_begin"}}',
        '{"timestamp":"t","type":"event_msg","payload":{"type":"text","role":"user","text":"x"}}',
        '{"timestamp":"t","type":"model_msg","payload":{"type":"text"}}',
        '{"timestamp":"t","type":"model_msg","payload":{"type":"text","role":"user","text":"x","stop_reason":"meh"}}',
    ]
    for line in garbage:
        with pytest.raises(ValueError):
            from_json(line)


def test_builders_signatures_and_shapes():
    from penguin_jupyter.omni import (
        abort,
        approval_decision,
        assistant_text,
        partial_text,
        request_begin,
        request_end,
        thinking,
        token_usage,
        tool_call,
        tool_call_output,
        user_text,
        with_origin,
    )

    assert_params(tool_call, {"name": inspect.Parameter.empty, "arguments": inspect.Parameter.empty,
                              "tool_call_id": inspect.Parameter.empty})  # fmt: skip
    assert_params(tool_call_output, {"output": inspect.Parameter.empty, "tool_call_id": inspect.Parameter.empty,
                                     "stop_reason": None, "images": None})  # fmt: skip
    assert_params(partial_text, {"event_type": inspect.Parameter.empty, "text": ""})
    assert_params(abort, {"reason": None})
    assert params(request_begin) == {}

    assert user_text("hi").payload.role == "user" and user_text("hi").payload.text == "hi"
    assert assistant_text("yo").payload.role == "assistant"
    assert thinking("hmm").payload.thinking == "hmm"
    assert tool_call("t", '{"a":1}', "c").payload.arguments == '{"a":1}'
    assert tool_call("t", {"a": 1, "b": "é"}, "c").payload.arguments == '{"a":1,"b":"é"}'
    out = tool_call_output("x", "c", "failed", ["data:image/png;base64,AA=="])
    assert (out.payload.stop_reason, out.payload.images) == ("failed", ["data:image/png;base64,AA=="])
    assert tool_call_output("x", "c").payload.stop_reason == "completed"
    part = partial_text("delta", "abc")
    assert (part.type, part.payload.type, part.payload.event_type, part.payload.text) == (
        "model_msg",
        "partial_text",
        "delta",
        "abc",
    )
    assert request_begin().payload.type == "request_begin" and request_begin().type == "event_msg"
    end = request_end("failed", "boom")
    assert (end.payload.status, end.payload.error_message) == ("failed", "boom")
    assert approval_decision("forbidden", "c").payload.decision == "forbidden"
    usage = token_usage({"cache_read": 1, "cache_write": 2, "output": 3, "total": 6}, {"total": 6})
    assert usage.payload.session.output == 3 and usage.payload.request.total == 6

    base = user_text("hop")
    once = with_origin(base, "b")
    twice = with_origin(once, "a")
    assert base.origin is None and once.origin == ["b"] and twice.origin == ["a", "b"]


def test_guards_classify_each_kind():
    from penguin_jupyter.omni import (
        is_complete_model_message,
        is_event_message,
        is_model_message,
        is_partial_payload,
        is_session_meta,
        partial_text,
        request_begin,
        session_meta,
        user_text,
    )

    meta = session_meta(session_id="s", provider="p", model_id="m", model_context_window="unknown",
                        system_prompt="", agent_state="/a", workspace="/w")  # fmt: skip
    table = {  # msg -> (complete, partial, model, event, meta)
        "text": (user_text("x"), (True, False, True, False, False)),
        "partial": (partial_text("start"), (False, True, True, False, False)),
        "event": (request_begin(), (False, False, False, True, False)),
        "meta": (meta, (False, False, False, False, True)),
    }
    guards = (
        is_complete_model_message,
        is_partial_payload,
        is_model_message,
        is_event_message,
        is_session_meta,
    )
    for label, (msg, expected) in table.items():
        assert tuple(bool(g(msg)) for g in guards) == expected, label


def test_partial_aggregator_folds_a_segment():
    from penguin_jupyter.omni import PartialAggregator, partial_text, request_begin

    agg = PartialAggregator()
    out: list[OmniMessage] = []
    for msg in (
        request_begin(),
        partial_text("start"),
        partial_text("delta", "Hel"),
        partial_text("delta", "lo"),
    ):
        out.extend(agg.push(msg))
    assert [m.payload.type for m in out] == ["request_begin"]
    out.extend(agg.push(partial_text("stop")))
    assert out[-1].payload.type == "text" and out[-1].payload.text == "Hello"
    agg.push(partial_text("delta", "open"))
    flushed = agg.flush()
    assert [m.payload.text for m in flushed] == ["open"]


def test_payload_is_a_discriminated_union_on_payload_type():
    import penguin_jupyter.omni as o

    def build(kind: str, payload: dict[str, Any]) -> Any:
        return OmniMessage(timestamp="2026-01-01T00:00:00.000Z", type=kind, payload=payload).payload

    assert isinstance(build("model_msg", {"type": "text", "role": "user", "text": "x"}), o.TextPayload)
    assert isinstance(build("model_msg", {"type": "thinking", "thinking": ""}), o.ThinkingPayload)
    assert isinstance(build("event_msg", {"type": "abort", "reason": None}), o.AbortPayload)
    meta = build("session_meta", {"session_id": "s", "provider": "p", "model_id": "m",
                                  "model_context_window": 1000, "system_prompt": "", "agent_state": "/a",
                                  "workspace": "/w"})  # fmt: skip
    assert isinstance(meta, o.SessionMetaPayload)
    assert build("model_msg", {"type": "text", "role": "user", "text": "x", "fidelity": {}}).fidelity is None
    assert o.user_text("x").origin is None
    assert OmniMessage.model_validate({**o.to_dict(o.user_text("x")), "origin": []}).origin is None


# --- Interfaces: penguin_jupyter.interfaces -----------------------------------------------------


def test_abort_signal_is_the_gateway_one_and_thread_safe():
    import threading

    from agenthub.abort_signal import AbortSignal as Gateway

    from penguin_jupyter.interfaces import AbortSignal

    assert AbortSignal is Gateway
    signal = AbortSignal()
    assert signal.aborted is False and signal.reason is None

    async def waiter() -> str:
        await signal.wait()
        return signal.reason

    async def main() -> str:
        task = asyncio.ensure_future(waiter())
        await asyncio.sleep(0)
        threading.Thread(target=signal.abort, args=("stop",)).start()
        return await asyncio.wait_for(task, 10)

    assert asyncio.run(main()) == "stop"
    assert signal.aborted is True
    signal.abort("again")
    assert signal.reason == "stop"
    bare = AbortSignal()
    bare.abort()
    assert bare.aborted and bare.reason is None


def test_interface_dataclasses_and_protocols():
    from penguin_jupyter.interfaces import (
        ApproveFn,
        EnvironmentInterface,
        GenerativeModelParameters,
        LLMInterface,
        LLMOutcome,
        ToolExecutionRequest,
    )
    from penguin_jupyter.omni import tool_call, user_text

    assert LLMOutcome("completed") == LLMOutcome(status="completed", message=None, permanent=False)
    assert LLMOutcome("failed", "boom", True).permanent is True
    p = GenerativeModelParameters([user_text("x")])
    assert (p.signal, p.thinking_level) == (None, None)
    assert_params(GenerativeModelParameters, {"new_messages": inspect.Parameter.empty, "signal": None,
                                              "thinking_level": None})  # fmt: skip
    req = ToolExecutionRequest(tool_call("t", "{}", "c"))
    assert (req.signal, req.approve) == (None, None)
    assert_params(
        ToolExecutionRequest, {"tool_call": inspect.Parameter.empty, "signal": None, "approve": None}
    )

    assert typing.get_origin(typing.Protocol) is None  # sanity
    assert "stream_generate" in dir(LLMInterface)
    for name in ("list_tools", "execute_tool", "tool_permission", "dispose"):
        assert name in dir(EnvironmentInterface), name
    args, returned = typing.get_args(ApproveFn)
    assert args == [OmniMessage]
    assert set(typing.get_args(typing.get_args(returned)[0])) == {"allow", "deny", "forbidden"}


def test_interfaces_md_service_types():
    from penguin_jupyter.interfaces import (
        EnvironmentServices,
        MCPServerConfig,
        RunOptions,
        VisionDescriberService,
    )

    services = EnvironmentServices()
    for name in ("subagent_runner", "vision_describer", "command_sessions", "subagent_sessions"):
        assert getattr(services, name) is None, name
    assert VisionDescriberService().model_id is None and VisionDescriberService().create_llm is None
    assert MCPServerConfig("files", {"command": "npx"}).config == {"command": "npx"}
    run = RunOptions()
    assert (run.signal, run.approve, run.thinking_level) == (None, None, None)


# --- Engine: penguin_jupyter.engine --------------------------------------------------------------


def test_context_engine_signature_and_compaction_settings():
    from penguin_jupyter.engine import CompactionSettings, ContextEngine

    assert_params(
        ContextEngine,
        {"llm": inspect.Parameter.empty, "environment": inspect.Parameter.empty, "trace": None, "max_turns": -1,
         "max_reconnects": 5, "backoff_base_ms": 2000, "backoff_cap_ms": 30000, "compaction": None},
        keyword_only=("trace", "max_turns", "max_reconnects", "backoff_base_ms", "backoff_cap_ms", "compaction"),
    )  # fmt: skip
    assert_params(ContextEngine.run, {"new_messages": inspect.Parameter.empty, "approve": None, "signal": None,
                                      "thinking_level": None}, keyword_only=("approve", "signal", "thinking_level"))  # fmt: skip
    assert inspect.isasyncgenfunction(ContextEngine.run)
    assert not inspect.iscoroutinefunction(ContextEngine.steer)
    assert not inspect.iscoroutinefunction(ContextEngine.skip_reconnect_wait)
    settings = CompactionSettings()
    assert (settings.max_context_length, settings.max_session_turns, settings.mode) == (
        256000,
        -1,
        "summarize",
    )
    assert settings.prompt == (  # docs/state.md "The system prompt"
        "Summarize the task transcript above. The summary will replace the transcript as its only record, so "
        "include everything needed to continue the task — the original request, current state, next steps, and "
        "any learnings. Do not call any tools; reply with text only, in exactly this format and nothing after "
        "it:\n\n[summary]put the summary text here...[/summary]"
    )
    assert CompactionSettings(max_context_length=1000, mode="discard").mode == "discard"


# --- Environment: penguin_jupyter.environment ----------------------------------------------------


def test_tool_definition_config_fields_and_defaults():
    from penguin_jupyter.environment import ToolDefinitionConfig

    entry = ToolDefinitionConfig(name="t", description="d")
    assert (entry.parameters, entry.permission, entry.for_model) == (None, None, None)
    assert (entry.timeout_ms, entry.max_output_length) == (120000, 16000)
    positional = ToolDefinitionConfig("t", "d", {"type": "object"}, "r", "vision", 5, 7)
    assert (positional.name, positional.description, positional.parameters) == ("t", "d", {"type": "object"})
    assert (
        positional.permission,
        positional.for_model,
        positional.timeout_ms,
        positional.max_output_length,
    ) == (
        "r",
        "vision",
        5,
        7,
    )
    assert_params(ToolDefinitionConfig, {"name": inspect.Parameter.empty, "description": inspect.Parameter.empty,
                                         "parameters": None, "permission": None, "for_model": None,
                                         "timeout_ms": 120000, "max_output_length": 16000})  # fmt: skip
    with pytest.raises(ValueError):
        ToolDefinitionConfig(name="t", description="d", permission="x")
    with pytest.raises(ValueError):
        ToolDefinitionConfig(name="t", description="d", for_model="audio")


def test_tool_config_and_environment_config_defaults():
    from penguin_jupyter.environment import EnvironmentConfig, ToolConfig, default_tool_config

    tc = ToolConfig()
    assert (tc.builtin, tc.custom_tools, tc.mcp_servers) == (None, [], [])
    assert_params(ToolConfig, {"builtin": None, "custom_tools": [], "mcp_servers": []})
    entries = default_tool_config().builtin
    assert ToolConfig(entries).builtin == entries  # builtin is the first parameter
    servers = ToolConfig(mcp_servers=[{"name": "files", "config": {"command": "npx"}}]).mcp_servers
    assert [(s.name, s.config) for s in servers] == [("files", {"command": "npx"})]
    cfg = EnvironmentConfig("/w", tc)
    assert (cfg.workspace_dir, cfg.tool_config, cfg.session_scratchpad_dir, cfg.services, cfg.vault) == (
        "/w",
        tc,
        None,
        None,
        None,
    )
    names = [f.name for f in dataclasses.fields(EnvironmentConfig)]
    assert names[:5] == ["workspace_dir", "tool_config", "session_scratchpad_dir", "services", "vault"]


def test_default_tool_config_is_the_full_builtin_toolset_of_section_4():
    from penguin_jupyter.environment import BUILTIN_TOOL_FACTORIES, ToolConfig, default_tool_config

    config = default_tool_config()
    assert isinstance(config, ToolConfig)
    names = [e.name for e in config.builtin]
    assert names == list(BUILTIN_TABLE)
    assert set(BUILTIN_TOOL_FACTORIES) == set(BUILTIN_TABLE)
    for entry in config.builtin:
        permission, timeout_ms, max_len, required, for_model = BUILTIN_TABLE[entry.name]
        assert (entry.permission, entry.timeout_ms, entry.max_output_length, entry.for_model) == (
            permission,
            timeout_ms,
            max_len,
            for_model,
        ), entry.name
        assert entry.parameters["type"] == "object" and entry.parameters["required"] == required, entry.name
        assert entry.description
    config.builtin.pop()  # a fresh copy each call
    assert len(default_tool_config().builtin) == 11


async def test_environment_implements_the_interface(tmp_path):
    from penguin_jupyter.environment import Environment, EnvironmentConfig, default_tool_config
    from penguin_jupyter.interfaces import EnvironmentInterface, ToolDefinition, ToolExecutionRequest
    from penguin_jupyter.omni import tool_call

    env = Environment(EnvironmentConfig(str(tmp_path), default_tool_config()))
    assert isinstance(env, EnvironmentInterface)
    assert inspect.iscoroutinefunction(Environment.list_tools)
    tools = await env.list_tools()
    assert [t.name for t in tools] == list(BUILTIN_TABLE)
    assert all(isinstance(t, ToolDefinition) for t in tools)
    assert env.tool_permission("read_file") == "r" and env.tool_permission("write_file") == "rw"
    assert env.tool_permission("nope") is None

    (tmp_path / "a.txt").write_text("hello\n")
    stream = env.execute_tool(ToolExecutionRequest(tool_call("read_file", {"file_path": "a.txt"}, "c1")))
    assert inspect.isasyncgen(stream)
    msgs = [m async for m in stream]
    first, *middle, last = msgs
    assert (first.payload.type, first.payload.event_type) == ("partial_tool_call_output", "start")
    assert middle[-1].payload.event_type == "stop"
    assert last.payload.type == "tool_call_output" and last.payload.stop_reason == "completed"
    assert "hello" in last.payload.output and last.payload.tool_call_id == "c1"
    streamed = "".join(m.payload.output for m in middle if m.payload.event_type == "delta")
    assert streamed == last.payload.output

    unknown = [m async for m in env.execute_tool(ToolExecutionRequest(tool_call("nope", "{}", "c2")))]
    assert unknown[-1].payload.output == "Unknown tool: nope" and unknown[-1].payload.stop_reason == "failed"
    env.dispose()
    env.dispose()  # idempotent


async def test_adding_a_builtin_tool_is_one_factory_entry(tmp_path, monkeypatch):
    from penguin_jupyter.environment import (
        BUILTIN_TOOL_FACTORIES,
        BuiltinTool,
        Environment,
        EnvironmentConfig,
        ToolConfig,
        ToolDefinitionConfig,
        ToolExecutionContext,
        ToolResult,
    )
    from penguin_jupyter.interfaces import ToolExecutionRequest
    from penguin_jupyter.omni import partial_tool_call_output, tool_call

    assert ToolResult() == ToolResult(stop_reason=None, note=None, images=None)
    context_fields = [f.name for f in dataclasses.fields(ToolExecutionContext)]
    assert context_fields[:4] == ["workspace_dir", "tool_call_id", "signal", "approve"]

    class Echo:
        name = "echo"

        def __init__(self, definition: ToolDefinitionConfig, services: Any = None) -> None:
            self.definition = definition

        async def execute(self, args: dict[str, Any], ctx: Any):
            yield partial_tool_call_output("delta", str(args["text"]), ctx.tool_call_id)
            yield ToolResult(note="[echoed]")

    assert isinstance(Echo(ToolDefinitionConfig(name="echo", description="d")), BuiltinTool)
    monkeypatch.setitem(BUILTIN_TOOL_FACTORIES, "echo", Echo)
    entry = ToolDefinitionConfig(name="echo", description="Echo text.", permission="r")
    env = Environment(EnvironmentConfig(str(tmp_path), ToolConfig(builtin=[entry])))
    assert [t.name for t in await env.list_tools()] == ["echo"]
    msgs = [m async for m in env.execute_tool(ToolExecutionRequest(tool_call("echo", {"text": "hi"}, "e1")))]
    assert msgs[-1].payload.output == "hi\n[echoed]" and msgs[-1].payload.stop_reason == "completed"
    env.dispose()


async def test_environment_config_fields_take_effect(tmp_path):
    from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig, ToolDefinitionConfig
    from penguin_jupyter.interfaces import ToolExecutionRequest
    from penguin_jupyter.omni import tool_call

    everything = Environment(EnvironmentConfig(str(tmp_path), ToolConfig()))  # builtin=None: the full set
    assert [t.name for t in await everything.list_tools()] == list(BUILTIN_TABLE)
    everything.dispose()

    scratch = tmp_path / "scratch"
    exec_entry = ToolDefinitionConfig("exec_command", "run", {"type": "object"}, "rw", max_output_length=50)
    env = Environment(
        EnvironmentConfig(
            str(tmp_path),
            ToolConfig(builtin=[exec_entry]),
            session_scratchpad_dir=str(scratch),
            vault={"PENGUIN_CONTRACT_SECRET": "s3cret"},
        )
    )

    async def run(cmd: str, call_id: str) -> str:
        request = ToolExecutionRequest(tool_call("exec_command", {"cmd": cmd}, call_id))
        return [m async for m in env.execute_tool(request)][-1].payload.output

    assert (await run('printf %s "$PENGUIN_CONTRACT_SECRET"', "v1")).startswith("s3cret")
    long = await run("seq 1 5000", "v2")
    assert long[50:].startswith("\n[output truncated: exceeded 50 chars]\n[output archived: ")
    archived = Path(long.split("[output archived: ", 1)[1].split("]", 1)[0])
    assert archived.parent == scratch / "truncated-tool-output"
    assert archived.read_text().splitlines() == [str(i) for i in range(1, 5001)]
    env.dispose()


# --- Model: penguin_jupyter.llm -------------------------------------------------------------------


def test_generative_model_config_signature():
    from penguin_jupyter.llm import GenerativeModelConfig, ToolCallIdAllocator

    assert_params(
        GenerativeModelConfig,
        {"model_id": inspect.Parameter.empty, "api_key": None, "base_url": None, "client_type": None,
         "system_prompt": None, "context_window": None, "max_tokens": None, "thinking_level": None,
         "request_timeout_ms": 120000, "tool_call_ids": None},
    )  # fmt: skip
    config = GenerativeModelConfig("m")
    assert config.tools == [] and config.request_timeout_ms == 120000
    assert [f.name for f in dataclasses.fields(GenerativeModelConfig)][:11] == [
        "model_id", "api_key", "base_url", "client_type", "tools", "system_prompt", "context_window",
        "max_tokens", "thinking_level", "request_timeout_ms", "tool_call_ids",
    ]  # fmt: skip
    assert ToolCallIdAllocator() is not None


async def test_generative_model_streams_and_ends_with_one_outcome():
    from penguin_jupyter.interfaces import GenerativeModelParameters, LLMInterface, LLMOutcome
    from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
    from penguin_jupyter.omni import user_text

    with ScriptedModelServer([{"text": "Hello there"}]) as server:
        model = GenerativeModel(GenerativeModelConfig("scripted-model", api_key="sk-x", base_url=server.url,
                                                      client_type="openai-chat"))  # fmt: skip
        assert isinstance(model, LLMInterface)
        items = [i async for i in model.stream_generate(GenerativeModelParameters([user_text("hi")]))]
    outcomes = [i for i in items if isinstance(i, LLMOutcome)]
    assert len(outcomes) == 1 and items[-1] is outcomes[0] and outcomes[0].status == "completed"
    texts = [i.payload.text for i in items if isinstance(i, OmniMessage) and i.payload.type == "text"]
    assert texts == ["Hello there"]
    assert any(isinstance(i, OmniMessage) and i.payload.type == "token_usage" for i in items)


async def test_generative_model_never_raises_on_a_dead_endpoint():
    from penguin_jupyter.interfaces import GenerativeModelParameters, LLMOutcome
    from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
    from penguin_jupyter.omni import user_text

    server = ScriptedModelServer().start()
    url = server.url
    server.stop()
    model = GenerativeModel(GenerativeModelConfig("m", api_key="k", base_url=url, client_type="openai-chat"))
    items = [i async for i in model.stream_generate(GenerativeModelParameters([user_text("hi")]))]
    assert isinstance(items[-1], LLMOutcome) and items[-1].status != "completed"
    assert sum(isinstance(i, LLMOutcome) for i in items) == 1


def test_tool_call_id_allocator_examples_of_section_6():
    from penguin_jupyter.llm import ToolCallIdAllocator

    ids = ToolCallIdAllocator()
    assert [ids.allocate("get_time") for _ in range(3)] == ["get_time", "get_time#2", "get_time#3"]
    marked = ToolCallIdAllocator()
    marked.mark_used("t")
    marked.mark_used("t#2")
    marked.mark_used("t#2")
    assert marked.allocate("t") == "t#3"
    assert [ToolCallIdAllocator.strip_suffix(i) for i in ("a#2", "a#2#3", "a#b", "a#2b", "a")] == [
        "a",
        "a#2",
        "a#b",
        "a#2b",
        "a",
    ]


async def test_generative_model_rejects_mixed_roles_and_empty_input_with_a_failed_outcome():
    from penguin_jupyter.interfaces import AbortSignal, GenerativeModelParameters, LLMOutcome
    from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
    from penguin_jupyter.omni import assistant_text, user_text

    model = GenerativeModel(GenerativeModelConfig("m", api_key="k", base_url="http://127.0.0.1:9/v1",
                                                  client_type="openai-chat"))  # fmt: skip

    async def items(params: GenerativeModelParameters) -> list[Any]:
        return [i async for i in model.stream_generate(params)]

    mixed = await items(GenerativeModelParameters([user_text("a"), assistant_text("b")]))
    assert len(mixed) == 1 and isinstance(mixed[0], LLMOutcome) and mixed[0].status == "failed"
    assert "does not accept mixed roles" in (mixed[0].message or "")
    empty = await items(GenerativeModelParameters([]))
    assert len(empty) == 1 and empty[0].status == "failed"
    signal = AbortSignal()
    signal.abort()
    aborted = await items(GenerativeModelParameters([user_text("a")], signal=signal))
    assert len(aborted) == 1 and aborted[0].status == "aborted"


async def test_a_throwing_approve_counts_as_deny(tmp_path):
    from penguin_jupyter.engine import ContextEngine
    from penguin_jupyter.environment import Environment, EnvironmentConfig, default_tool_config
    from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
    from penguin_jupyter.omni import user_text

    async def broken(_call: OmniMessage) -> str:
        raise RuntimeError("approval UI crashed")

    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"file_path": "x.txt", "content": "hi"}}]},
        {"text": "ok"},
    ]
    env = Environment(EnvironmentConfig(str(tmp_path), default_tool_config()))
    with ScriptedModelServer(script) as server:
        llm = GenerativeModel(GenerativeModelConfig("scripted-model", api_key="k", base_url=server.url,
                                                    client_type="openai-chat", tools=await env.list_tools()))  # fmt: skip
        msgs = [m async for m in ContextEngine(llm, env).run([user_text("write")], approve=broken)]
    env.dispose()
    assert [m.payload.decision for m in msgs if m.payload.type == "approval_decision"] == ["deny"]
    assert not (tmp_path / "x.txt").exists()


async def test_context_engine_runs_a_tool_turn_over_real_parts(tmp_path):
    from penguin_jupyter.engine import ContextEngine
    from penguin_jupyter.environment import Environment, EnvironmentConfig, default_tool_config
    from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
    from penguin_jupyter.omni import user_text
    from penguin_jupyter.trace import TraceWriter, read_trace

    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"file_path": "x.txt", "content": "hi"}}]},
        {"text": "Wrote it."},
    ]
    env = Environment(EnvironmentConfig(str(tmp_path), default_tool_config()))
    with ScriptedModelServer(script) as server:
        tools = await env.list_tools()
        llm = GenerativeModel(GenerativeModelConfig("scripted-model", api_key="k", base_url=server.url,
                                                    client_type="openai-chat", tools=tools))  # fmt: skip
        engine = ContextEngine(llm, env, trace=TraceWriter(tmp_path / "trace.jsonl"))
        assert engine.steer([user_text("late")]) is False  # no run in flight
        assert engine.skip_reconnect_wait() is False
        msgs = [m async for m in engine.run([user_text("write x.txt")], approve=allow)]
        assert await engine.compact() == []  # no compaction configured: nothing to do
    env.dispose()
    assert (tmp_path / "x.txt").read_text() == "hi"
    kinds = [m.payload.type for m in msgs if m.type != "session_meta"]
    assert "approval_decision" in kinds and "tool_call_output" in kinds
    assert msgs[-1].payload.type == "token_usage" or kinds[-1] in ("text", "token_usage", "request_end")
    assert [m.payload.text for m in msgs if m.payload.type == "text"] == ["Wrote it."]
    assert not any(m.payload.type == "text" and m.payload.role == "user" for m in msgs)  # input not echoed
    records = read_trace(tmp_path / "trace.jsonl")
    assert records[0].payload.type == "text" and records[0].payload.text == "write x.txt"
    assert [r.payload.type for r in records if r.payload.type.startswith("partial_")] == []
    assert [r.payload.type for r in records].count("tool_call_output") == 1


async def test_context_engine_run_rejects_a_non_list_input_in_one_line(tmp_path):
    from penguin_jupyter.engine import ContextEngine
    from penguin_jupyter.environment import Environment, EnvironmentConfig
    from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
    from penguin_jupyter.omni import user_text

    env = Environment(EnvironmentConfig(str(tmp_path)))
    llm = GenerativeModel(
        GenerativeModelConfig("m", api_key="k", base_url="http://127.0.0.1:9/v1", client_type="openai-chat")
    )
    engine = ContextEngine(llm, env)
    for bad in ("hello", user_text("hello"), [user_text("ok"), 3], None):
        with pytest.raises(TypeError, match=r"^ContextEngine\.run takes a list of OmniMessage") as info:
            [m async for m in engine.run(bad)]
        assert "\n" not in str(info.value)
    assert engine.task_running is False
    env.dispose()


async def test_context_engine_denies_everything_without_approve(tmp_path):
    from penguin_jupyter.engine import ContextEngine
    from penguin_jupyter.environment import Environment, EnvironmentConfig, default_tool_config
    from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
    from penguin_jupyter.omni import user_text

    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"file_path": "x.txt", "content": "hi"}}]},
        {"text": "ok"},
    ]
    env = Environment(EnvironmentConfig(str(tmp_path), default_tool_config()))
    with ScriptedModelServer(script) as server:
        llm = GenerativeModel(GenerativeModelConfig("scripted-model", api_key="k", base_url=server.url,
                                                    client_type="openai-chat", tools=await env.list_tools()))  # fmt: skip
        msgs = [m async for m in ContextEngine(llm, env).run([user_text("write")])]
    env.dispose()
    decisions = [m.payload.decision for m in msgs if m.payload.type == "approval_decision"]
    assert decisions == ["deny"] and not (tmp_path / "x.txt").exists()


# --- Agent and Session: penguin_jupyter -----------------------------------------------------------


def test_top_level_names_and_signatures():
    import penguin_jupyter
    from penguin_jupyter import Agent, Session, create_agent

    assert inspect.iscoroutinefunction(create_agent)
    assert_params(create_agent, {"agent_id": "default_agent", "project_id": None, "root": None},
                  keyword_only=("project_id", "root"))  # fmt: skip
    assert inspect.iscoroutinefunction(Agent.create_session)
    assert_params(Agent.create_session, {"workspace_dir": inspect.Parameter.empty, "provider": None, "model_id": None},
                  keyword_only=("workspace_dir", "provider", "model_id"))  # fmt: skip
    assert inspect.iscoroutinefunction(Agent.resume_session)
    assert_params(Agent.resume_session, {"session_id": inspect.Parameter.empty})
    assert inspect.isasyncgenfunction(Session.run)
    assert_params(Session.run, {"new_messages": inspect.Parameter.empty, "approve": None, "signal": None,
                                "thinking_level": None}, keyword_only=("approve", "signal", "thinking_level"))  # fmt: skip
    assert inspect.iscoroutinefunction(Session.compact)
    assert not inspect.iscoroutinefunction(Session.steer) and not inspect.iscoroutinefunction(Session.dispose)
    assert callable(penguin_jupyter.load_ipython_extension) and callable(
        penguin_jupyter.unload_ipython_extension
    )


async def test_agent_session_lifecycle_on_the_scripted_server(tmp_path, monkeypatch):
    from penguin_jupyter import create_agent
    from penguin_jupyter.omni import user_text
    from penguin_jupyter.trace import TraceWriter, read_trace

    root = tmp_path / "home"
    monkeypatch.setenv("PENGUIN_HOME", str(root))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [{"text": "first"}, {"text": "[summary]The user said hello.[/summary]"}, {"text": "second"}]
    with ScriptedModelServer(script) as server:
        add_model(root, "default_project", provider="openai", model_id="scripted-model", base_url=server.url,
                  api_key="sk-x", client_type="openai-chat", default=True)  # fmt: skip
        agent = await create_agent()  # root defaults to $PENGUIN_HOME
        assert (agent.agent_id, agent.project_id) == ("default_agent", "default_project")
        assert (root / "default_project" / "agents" / "default_agent").is_dir()
        with pytest.raises(ValueError, match="together"):
            await agent.create_session(workspace_dir=workspace, provider="openai")
        with pytest.raises(ValueError, match="together"):
            await agent.create_session(workspace_dir=workspace, model_id="scripted-model")
        session = await agent.create_session(
            workspace_dir=workspace, provider="openai", model_id="scripted-model"
        )
        assert isinstance(session.session_id, str) and session.session_id
        assert session.steer([user_text("nobody listens")]) is False
        for bad in ("hello", user_text("hello"), ["hello"]):
            with pytest.raises(TypeError, match=r"^Session\.run takes a list of OmniMessage"):
                [m async for m in session.run(bad)]
        msgs = [m async for m in session.run([user_text("hello")])]
        assert [m.payload.text for m in msgs if m.payload.type == "text"] == ["first"]
        assert not any(m.type == "session_meta" for m in msgs)  # never the main session's own meta
        trace_path = Path(session.trace_path)
        compacted = await session.compact()  # the default agent config summarizes
        assert [m.payload.type for m in compacted][:1] == ["compaction_begin"]
        assert compacted[-1].payload.type == "compaction_end" and compacted[-1].payload.status == "completed"
        session.dispose()
        session.dispose()

        records = read_trace(trace_path)
        assert all(isinstance(r, OmniMessage) for r in records)
        assert records[0].type == "session_meta" and records[0].payload.session_id == session.session_id
        assert not any(r.payload.type.startswith("partial_") for r in records[1:])

        resumed = await agent.resume_session(session.session_id)
        assert resumed.session_id == session.session_id
        again = [m async for m in resumed.run([user_text("more")])]
        assert [m.payload.text for m in again if m.payload.type == "text"] == ["second"]
        assert "The user said hello." in json.dumps(server.requests[2]["messages"])  # summary carried on
        resumed.dispose()
        with pytest.raises(ValueError):
            await agent.resume_session("session-does-not-exist")

    other = tmp_path / "t.jsonl"
    writer = TraceWriter(other)
    writer.write(user_text("x"))
    writer.close()
    assert [r.payload.text for r in read_trace(other)] == ["x"]


async def test_create_agent_root_and_project_arguments(tmp_path):
    from penguin_jupyter import create_agent

    agent = await create_agent("helper", project_id="proj", root=tmp_path)
    assert (agent.agent_id, agent.project_id) == ("helper", "proj")
    assert (tmp_path / "proj" / "agents" / "helper").is_dir()


async def test_create_agent_root_falls_back_to_home_penguin_data(monkeypatch):
    from penguin_jupyter import create_agent

    monkeypatch.delenv("PENGUIN_HOME", raising=False)
    agent = await create_agent()
    assert Path(agent.root) == Path.home() / ".penguin" / "data"
    assert (Path.home() / ".penguin" / "data" / "default_project" / "agents" / "default_agent").is_dir()


def test_subagent_and_vision_seams_match_interfaces_md():
    from penguin_jupyter.subagent_runner import AgentSubagentRunner, SubagentSessionHandle

    assert inspect.iscoroutinefunction(AgentSubagentRunner.spawn)
    assert_params(AgentSubagentRunner.spawn, {"agent_id": None, "model_id": None},
                  keyword_only=("agent_id", "model_id"))  # fmt: skip
    assert inspect.isasyncgenfunction(SubagentSessionHandle.run)
    assert_params(
        SubagentSessionHandle.run, {"prompt": inspect.Parameter.empty, "signal": None, "approve": None}
    )
    assert callable(SubagentSessionHandle.dispose)


# --- Layering and the notebook entry point --------------------------------------------------------


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_core_imports_never_pull_in_ipython():
    out = run_python(
        "import sys\n"
        "import penguin_jupyter, penguin_jupyter.omni, penguin_jupyter.interfaces, penguin_jupyter.engine\n"
        "import penguin_jupyter.environment, penguin_jupyter.llm, penguin_jupyter.trace\n"
        "from penguin_jupyter import create_agent, Session\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets')))\n"
    )
    assert out.strip() == "[]"


def test_load_ext_registers_the_penguin_magics():
    out = run_python(
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_line_magic('load_ext', 'penguin_jupyter')\n"
        "magics = shell.magics_manager.magics\n"
        "print('penguin' in magics['cell'], 'penguin' in magics['line'])\n"
        "import penguin_jupyter.notebook, penguin_jupyter.testing\n"
    )
    assert out.split() == ["True", "True"]


# --- README "The core, from Python" ---------------------------------------------------------------


def test_readme_core_module_list_names_exist():
    import importlib

    listed = {
        "penguin_jupyter.omni": ["OmniMessage", "to_json", "from_json", "PartialAggregator", "markers"],
        "penguin_jupyter.interfaces": ["LLMInterface", "EnvironmentInterface", "ApproveFn", "RunOptions",
                                       "SubagentRunner", "AbortSignal"],
        "penguin_jupyter.engine": ["ContextEngine"],
        "penguin_jupyter.llm": ["GenerativeModel"],
        "penguin_jupyter.environment": ["Environment"],
        "penguin_jupyter.trace": ["TraceWriter", "read_trace"],
    }  # fmt: skip
    readme = (REPO / "README.md").read_text(encoding="utf-8").split("## The core, from Python", 1)[1]
    for module, names in listed.items():
        assert f"`{module}" in readme, module
        loaded = importlib.import_module(module)
        for name in names:
            assert hasattr(loaded, name), f"{module}.{name}"


def readme_core_snippet() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## The core, from Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README has no python block under 'The core, from Python'"
    return match.group(1)


async def test_readme_core_snippet_runs_as_written(tmp_path, monkeypatch, capsys):
    snippet = readme_core_snippet()
    pair = re.search(r'provider="([^"]+)", model_id="([^"]+)"', snippet)
    assert pair, "the snippet names a provider/model pair"
    provider, model_id = pair.groups()
    root = tmp_path / "home"
    monkeypatch.setenv("PENGUIN_HOME", str(root))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("penguins\n")
    monkeypatch.chdir(workspace)
    script = [
        {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "notes.txt"}},
                        {"name": "write_file", "arguments": {"file_path": "evil.txt", "content": "x"}}]},
        {"text": "A notes file about penguins."},
    ]  # fmt: skip
    with ScriptedModelServer(script) as server:
        add_model(root, "default_project", provider=provider, model_id=model_id, base_url=server.url,
                  api_key="sk-x", client_type="openai-chat", default=True)  # fmt: skip
        namespace: dict[str, Any] = {}
        code = compile(snippet, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)
        if inspect.iscoroutine(result):
            await result
        try:
            assert namespace["resumed"].session_id == namespace["session"].session_id
        finally:
            namespace["session"].dispose()
            namespace["resumed"].dispose()
    printed = capsys.readouterr().out
    assert "tool_call_output" in printed and "A notes file about penguins." in printed
    assert "penguins" in printed  # read_file was allowed and its output streamed back
    assert not (workspace / "evil.txt").exists()  # write_file was denied by the snippet's approve


def test_readme_model_config_snippets_work():
    import os
    import stat

    from penguin_jupyter.state import load_project_config, paths

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    toml_block = re.search(r"```toml\n(.*?)```", readme, re.S)
    assert toml_block, "README shows a .project_config.toml example"
    toml_text = "\n".join(line.strip() for line in toml_block.group(1).splitlines())
    root = paths.resolve_root(None)
    config_path = root / "default_project" / ".project_config.toml"
    config_path.parent.mkdir(parents=True)
    config_path.write_text(toml_text, encoding="utf-8")
    config = load_project_config(None, "default_project")
    [entry] = config.models
    assert (entry.provider, entry.model_id, entry.client_type) == ("local", "qwen3-32b", "openai-chat")
    assert (entry.base_url, entry.context_window) == ("http://127.0.0.1:8000/v1", 131072)
    assert (config.default_model.provider, config.default_model.model_id) == ("local", "qwen3-32b")

    config_path.unlink()
    add_model(None, "default_project", provider="local", model_id="qwen3-32b", base_url="http://127.0.0.1:8000/v1",
              api_key="sk-x", client_type="openai-chat", default=True)  # fmt: skip
    assert stat.S_IMODE(os.stat(config_path).st_mode) == 0o600
    assert load_project_config(None, "default_project").models[0].api_key == "sk-x"
