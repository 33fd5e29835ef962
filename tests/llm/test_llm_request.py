"""Outbound conversion (scenario 91), per-request config and the output cap (scenario 93),
outcome classification rules (docs/model.md "Request lifecycle"), the id allocator (docs/model.md "Tool-call ids") and side-LLM configs (docs/model.md "Side models")."""

from __future__ import annotations

import asyncio
import base64
import json

import anthropic
import httpx
import openai
import pytest
from agenthub import EmptyResponseError, ThinkingLevel, ToolCallArgumentParseError, UnsupportedParameterError

from penguin_jupyter.interfaces import AbortSignal, LLMOutcome, ToolDefinition
from penguin_jupyter.llm import (
    GenerativeModel,
    GenerativeModelConfig,
    ToolCallIdAllocator,
    classify_error,
    describe_error,
    estimate_messages_tokens,
    estimate_text_tokens,
    group_history,
    merge_to_uni_message,
    strip_tool_call_id_suffix,
    title_model_config,
    vision_model_config,
)
from penguin_jupyter.llm.classify import FAST_MODE_GUIDANCE
from penguin_jupyter.omni import (
    assistant_text,
    image_url,
    inline_data,
    thinking,
    tool_call,
    tool_call_output,
    user_text,
)
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.llm import collect, scripted_model

TOOLS = [ToolDefinition("exec_command", "Run a shell command.", {"type": "object", "properties": {}})]

# --- docs/model.md "Tool-call ids" ToolCallIdAllocator ---------------------------------------------------------------------


def test_allocator_examples():
    ids = ToolCallIdAllocator()
    assert [ids.allocate("get_time") for _ in range(3)] == ["get_time", "get_time#2", "get_time#3"]
    ids = ToolCallIdAllocator()
    ids.mark_used("t")
    ids.mark_used("t#2")
    ids.mark_used("t#2")
    assert ids.allocate("t") == "t#3"
    assert ids.allocate("call_x") == "call_x"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("get_time#2", "get_time"),
        ("get_time", "get_time"),
        ("a#b", "a#b"),
        ("a#2b", "a#2b"),
        ("x#1#12", "x#1"),
    ],
)
def test_strip_suffix(given, expected):
    assert strip_tool_call_id_suffix(given) == expected
    assert ToolCallIdAllocator.strip_suffix(given) == expected


# --- 91. outbound conversion ----------------------------------------------------------------------


def test_user_text_image_and_inline_data_merge_into_one_message():
    raw = b"\x89PNG-bytes"
    merged = merge_to_uni_message(
        [
            user_text("hello", sender="harness"),
            image_url("https://example.com/a.png"),
            inline_data("user", base64.b64encode(raw).decode(), "image/png"),
        ]
    )
    assert merged == {
        "role": "user",
        "content_items": [
            {"type": "text", "text": "hello"},
            {"type": "image_url", "image_url": "https://example.com/a.png"},
            {"type": "inline_data", "data": raw, "mime_type": "image/png"},
        ],
    }


def test_tool_call_arguments_become_an_object_and_ids_lose_their_suffix():
    calls = merge_to_uni_message(
        [
            tool_call("get_time", '{"tz":"UTC"}', "get_time#2"),
            tool_call("get_time", "", "get_time#3"),
            tool_call("f", "[1,2]", "call_1", fidelity={"thought_signature": "s"}),
        ]
    )
    assert calls == {
        "role": "assistant",
        "content_items": [
            {"type": "tool_call", "name": "get_time", "arguments": {"tz": "UTC"}, "tool_call_id": "get_time"},
            {"type": "tool_call", "name": "get_time", "arguments": {}, "tool_call_id": "get_time"},
            {
                "type": "tool_call",
                "name": "f",
                "arguments": {},
                "tool_call_id": "call_1",
                "fidelity": {"thought_signature": "s"},
            },
        ],
    }


def test_tool_call_output_becomes_tool_result_with_images():
    merged = merge_to_uni_message(
        [
            tool_call_output("ok", "get_time#2"),
            tool_call_output("pic", "c2", images=["data:image/png;base64,AA=="]),
        ]
    )
    assert merged["content_items"] == [
        {"type": "tool_result", "text": "ok", "tool_call_id": "get_time"},
        {
            "type": "tool_result",
            "text": "pic",
            "images": ["data:image/png;base64,AA=="],
            "tool_call_id": "c2",
        },
    ]


def test_fidelity_round_trips_into_gateway_items():
    merged = merge_to_uni_message(
        [
            thinking("", fidelity={"id": "rs_1", "encrypted_content": "e"}),
            assistant_text("final", fidelity={"phase": "answer", "signature": "sigB"}),
        ]
    )
    assert merged["content_items"] == [
        {"type": "thinking", "thinking": "", "fidelity": {"id": "rs_1", "encrypted_content": "e"}},
        {"type": "text", "text": "final", "fidelity": {"phase": "answer", "signature": "sigB"}},
    ]


def test_mixed_roles_and_empty_input_raise():
    with pytest.raises(ValueError, match="mixed roles"):
        merge_to_uni_message([user_text("q"), assistant_text("a")])
    with pytest.raises(ValueError, match="at least one input message"):
        merge_to_uni_message([])


def test_history_groups_adjacent_same_role_runs():
    groups = group_history(
        [
            user_text("a"),
            user_text("b"),
            assistant_text("c"),
            tool_call("f", "{}", "id1"),
            tool_call_output("o", "id1"),
            assistant_text("d"),
        ]
    )
    assert [(g["role"], len(g["content_items"])) for g in groups] == [
        ("user", 2),
        ("assistant", 2),
        ("user", 1),
        ("assistant", 1),
    ]


# --- 93. request config ------------------------------------------------------------------------


def _model(**overrides) -> GenerativeModel:
    fields = {
        "model_id": "m",
        "api_key": "k",
        "client_type": "openai-chat",
        "base_url": "http://127.0.0.1:9/v1",
    }
    fields.update(overrides)
    return GenerativeModel(GenerativeModelConfig(**fields))


def test_thinking_level_default_override_and_absent():
    assert "thinking_level" not in _model().request_config(None, [user_text("q")])
    model = _model(thinking_level="low")
    assert model.request_config(None, [user_text("q")])["thinking_level"] == ThinkingLevel.LOW
    assert model.request_config("high", [user_text("q")])["thinking_level"] == ThinkingLevel.HIGH
    assert model.request_config(None, [user_text("q")])["thinking_level"] == ThinkingLevel.LOW


def test_tools_system_prompt_and_fast_mode_keys():
    bare = _model().request_config(None, [user_text("q")])
    assert bare == {}
    full = _model(tools=TOOLS, system_prompt="be brief", max_tokens=100, fast_mode=True).request_config(
        None, [user_text("q")]
    )
    assert full == {
        "tools": [
            {"name": "exec_command", "description": "Run a shell command.", "parameters": TOOLS[0].parameters}
        ],
        "system_prompt": "be brief",
        "max_tokens": 100,
        "fast_mode": True,
    }
    assert "tool_choice" not in full


def test_thinking_level_reaches_the_wire_per_request():
    # agenthub's GLM client speaks chat completions, so the scripted server records its wire config
    with ScriptedModelServer([{"text": "a"}, {"text": "b"}, {"text": "c"}]) as s:
        model = GenerativeModel(
            GenerativeModelConfig(model_id="glm-5.2", api_key="k", base_url=s.url, thinking_level="low")
        )
        asyncio.run(collect(model, [user_text("1")]))
        asyncio.run(collect(model, [user_text("2")], thinking_level="high"))
        plain = GenerativeModel(GenerativeModelConfig(model_id="glm-5.2", api_key="k", base_url=s.url))
        asyncio.run(collect(plain, [user_text("3")]))
    assert [r.get("reasoning_effort") for r in s.requests] == ["low", "high", None]
    assert "thinking" not in s.requests[2]


async def test_wire_has_no_tools_key_when_empty_and_service_tier_only_with_fast_mode():
    with ScriptedModelServer([{"text": "a"}, {"text": "b"}]) as s:
        await collect(scripted_model(s), [user_text("q")])
        await collect(scripted_model(s, tools=TOOLS, fast_mode=True, system_prompt="sys"), [user_text("q")])
    first, second = s.requests
    assert "tools" not in first and "service_tier" not in first and "tool_choice" not in first
    assert second["tools"] == [{"type": "function", "function": TOOLS[0].to_spec()}]
    assert second["service_tier"] == "priority" and "tool_choice" not in second
    assert second["messages"][0] == {"role": "system", "content": "sys"}


async def test_fast_mode_rejection_is_permanent_failed():
    with ScriptedModelServer([{"text": "never"}]) as s:
        model = GenerativeModel(
            GenerativeModelConfig(model_id="glm-5.2", api_key="k", base_url=s.url, fast_mode=True)
        )
        messages, outcome = await collect(model, [user_text("q")])
        assert s.requests == []
    assert messages == []
    assert outcome == LLMOutcome(
        "failed", f"GLM does not support fast mode. {FAST_MODE_GUIDANCE}", permanent=True
    )


def test_output_cap_with_a_large_window_or_no_window_is_the_configured_cap():
    assert (
        _model(max_tokens=32000, context_window=1_000_000).request_config(None, [user_text("q")])[
            "max_tokens"
        ]
        == 32000
    )
    assert "max_tokens" not in _model(context_window=32768).request_config(None, [user_text("q")])
    assert "max_tokens" not in _model(max_tokens=-1, context_window=32768).request_config(
        None, [user_text("q")]
    )


async def test_output_cap_without_a_window_ignores_a_large_context():
    with ScriptedModelServer(
        [{"text": "a", "usage": {"prompt_tokens": 200_000, "completion_tokens": 1}}]
    ) as s:
        model = scripted_model(s, max_tokens=32000)
        await collect(model, [user_text("q")])
    assert model.request_config(None, [user_text("next")])["max_tokens"] == 32000


async def test_output_cap_clamps_against_a_small_window_over_real_requests():
    script = [
        {"text": "a", "usage": {"prompt_tokens": 30_000, "completion_tokens": 1}},
        {"text": "b", "usage": {"prompt_tokens": 40_000, "completion_tokens": 1}},
    ]
    with ScriptedModelServer(script) as s:
        model = scripted_model(
            s, max_tokens=32000, context_window=32768, tools=TOOLS, system_prompt="You help."
        )
        await collect(model, [user_text("first")])
        await collect(model, [user_text("second")])
    first_cap, second_cap = (r["max_completion_tokens"] for r in s.requests)
    assert 30000 < first_cap < 32000
    assert 512 <= second_cap < 2000
    assert model.request_config(None, [user_text("third")])["max_tokens"] == 512


async def test_a_huge_image_tool_output_is_counted_flat():
    one_mb = "data:image/png;base64," + "A" * 1_000_000
    with ScriptedModelServer([{"text": "a", "usage": {"prompt_tokens": 1000, "completion_tokens": 1}}]) as s:
        model = scripted_model(s, max_tokens=32000, context_window=128_000)
        await collect(model, [user_text("q")])
    assert (
        model.request_config(None, [tool_call_output("shot", "c1", images=[one_mb])])["max_tokens"] == 32000
    )
    assert estimate_messages_tokens([tool_call_output("shot", "c1", images=[one_mb])]) < 1700


def test_set_history_reseeds_the_input_estimate():
    model = _model(max_tokens=32000, context_window=32768)
    model.set_history([user_text("x" * 120_000), assistant_text("ok")])
    cap = model.request_config(None, [user_text("q")])["max_tokens"]
    assert 512 <= cap < 2000


def test_estimates():
    assert estimate_text_tokens("abcd") == 1
    assert estimate_text_tokens("abcde") == 2
    assert estimate_text_tokens("héllo") == 1 + 1
    assert estimate_messages_tokens([image_url("https://x/y.png")]) == 1600


# --- docs/model.md "Request lifecycle" classification (error shapes the SDKs raise) -------------------------------------------


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return httpx.Response(status, headers=headers, request=request)


def _chained(outer: BaseException, cause: BaseException) -> BaseException:
    outer.__cause__ = cause
    return outer


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (json.JSONDecodeError("Expecting value", "x", 0), "malformed"),
        (ToolCallArgumentParseError("C", "f", "id", "{", "bad"), "malformed"),
        (EmptyResponseError("C", "stop"), "malformed"),
        (ValueError("Streaming response yielded no events"), "malformed"),
        (
            _chained(RuntimeError("wrapped"), ValueError("Last event must carry finish_reason, got: {}")),
            "malformed",
        ),
        (openai.AuthenticationError("bad key", response=_response(401), body=None), "auth"),
        (anthropic.AuthenticationError("bad key", response=_response(401), body=None), "auth"),
        (
            openai.BadRequestError("nope", response=_response(400), body={"code": "invalid_api_key"}),
            "auth",
        ),
        (
            openai.PermissionDeniedError(
                "nope", response=_response(403), body={"error": {"type": "authentication_error"}}
            ),
            "auth",
        ),
        (openai.RateLimitError("slow down", response=_response(429), body=None), "timeout"),
        (openai.InternalServerError("boom", response=_response(502), body=None), "timeout"),
        (openai.APIStatusError("late", response=_response(408), body=None), "timeout"),
        (openai.BadRequestError("bad request", response=_response(400), body=None), "failed"),
        (
            openai.PermissionDeniedError("request timed out upstream", response=_response(403), body=None),
            "failed",
        ),
        # the provider's word (docs/model-requests.md "Failures waiting cannot fix")
        (
            openai.BadRequestError(
                "bad request", response=_response(400, {"x-should-retry": "false"}), body=None
            ),
            "failed!",
        ),
        (openai.APITimeoutError(request=httpx.Request("POST", "http://x")), "timeout"),
        (
            _chained(
                openai.APIConnectionError(request=httpx.Request("POST", "http://x")),
                httpx.ConnectError("refused"),
            ),
            "timeout",
        ),
        (_chained(RuntimeError("stream failed"), httpx.ReadError("reset")), "timeout"),
        (ConnectionResetError(104, "Connection reset by peer"), "timeout"),
        # words are not a classification: an untyped error that merely says "socket" or "503" fails
        (RuntimeError("socket terminated: other side closed"), "failed"),
        (RuntimeError("Request terminated by content filter"), "failed"),
        (RuntimeError("503 Service Unavailable"), "failed"),
        (asyncio.CancelledError(), "aborted"),
        (RuntimeError("something else"), "failed"),
        (UnsupportedParameterError("C", "fast_mode", "no fast tier"), "failed"),
    ],
)
def test_classification_rules(error, status):
    """`failed!` is a permanent failure: the engine does not retry it."""
    outcome = classify_error(error)
    permanent = status.endswith("!")
    status = status.rstrip("!")
    assert outcome.status == status
    assert outcome.permanent is permanent
    if status in ("failed", "auth", "malformed", "timeout"):
        assert outcome.message


def test_fast_mode_rejection_only_when_enabled():
    error = UnsupportedParameterError("C", "fast_mode", "C does not support fast mode.")
    assert classify_error(error, fast_mode=True) == LLMOutcome(
        "failed", f"C does not support fast mode. {FAST_MODE_GUIDANCE}", permanent=True
    )
    other = UnsupportedParameterError("C", "temperature", "no")
    assert classify_error(other, fast_mode=True).permanent is False


def test_describe_error_walks_the_chain_with_codes():
    class Coded(Exception):
        def __init__(self, message: str, code: str) -> None:
            super().__init__(message)
            self.code = code

    error = _chained(TypeError("terminated"), Coded("other side closed", "ECONNRESET"))
    assert describe_error(error) == "terminated: other side closed (ECONNRESET)"
    assert classify_error(error).status == "timeout"
    same = _chained(RuntimeError("x"), RuntimeError("x"))
    assert describe_error(same) == "x"


# --- an upstream that ignores cancellation cannot hang the run ----------------------------------


class _DeafUpstreamModel(GenerativeModel):
    """Its upstream yields one text event, then hangs and swallows cancellation for 3 s — far past
    the model's 1 s grace, so the run must finish without it."""

    def _open_stream(self, client, message, config, signal):
        async def events():
            yield {
                "role": "assistant",
                "event_type": "delta",
                "content_items": [{"type": "text", "text": "partial"}],
                "usage_metadata": None,
                "finish_reason": None,
            }
            deaf_until = None
            while True:
                try:
                    await asyncio.sleep(0.1 if deaf_until else 3600)
                except asyncio.CancelledError:
                    deaf_until = deaf_until or asyncio.get_running_loop().time() + 3
                if deaf_until and asyncio.get_running_loop().time() > deaf_until:
                    return  # wind down eventually, so the test loop can close

        return events()


async def test_abort_wins_over_an_upstream_that_ignores_cancellation():
    model = _DeafUpstreamModel(GenerativeModelConfig(model_id="m", api_key="k", client_type="openai-chat"))
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.3, signal.abort)
    messages, outcome = await asyncio.wait_for(collect(model, [user_text("q")], signal=signal), timeout=30)
    assert outcome == LLMOutcome("aborted")
    assert [m.payload.stop_reason for m in messages[-2:]] == ["aborted", "aborted"]


async def test_idle_timer_wins_over_an_upstream_that_ignores_cancellation():
    model = _DeafUpstreamModel(
        GenerativeModelConfig(model_id="m", api_key="k", client_type="openai-chat", request_timeout_ms=300)
    )
    messages, outcome = await asyncio.wait_for(collect(model, [user_text("q")]), timeout=30)
    assert outcome.status == "timeout"
    assert messages[-1].payload.text == "partial" and messages[-1].payload.stop_reason == "timeout"


# --- docs/model.md "Side models" side LLMs ------------------------------------------------------------------------------


def test_side_configs_drop_tools_prompt_and_cap_output():
    base = GenerativeModelConfig(
        model_id="m",
        api_key="k",
        tools=TOOLS,
        system_prompt="sys",
        max_tokens=32000,
        thinking_level="high",
        fast_mode=True,
    )
    title = title_model_config(base)
    assert (
        title.tools,
        title.system_prompt,
        title.thinking_level,
        title.max_tokens,
        title.request_timeout_ms,
    ) == (
        [],
        None,
        "none",
        300,
        30000,
    )
    assert title.fast_mode is False and title.api_key == "k"
    vision = vision_model_config(GenerativeModelConfig(model_id="v", max_tokens=1000))
    assert (vision.max_tokens, vision.request_timeout_ms, vision.thinking_level) == (1000, 60000, "none")
    assert vision_model_config(GenerativeModelConfig(model_id="v")).max_tokens == 2048


def test_generative_model_is_an_llm_interface_and_takes_tool_objects():
    from penguin_jupyter.environment.types import ToolDefinitionConfig
    from penguin_jupyter.interfaces import LLMInterface

    model = _model(tools=[ToolDefinitionConfig(name="t", description="d"), {"name": "u", "description": "e"}])
    assert isinstance(model, LLMInterface)
    assert model.request_config(None, [user_text("q")])["tools"] == [
        {"name": "t", "description": "d"},
        {"name": "u", "description": "e"},
    ]


def test_a_hard_clamp_is_logged_once_per_distinct_value_as_a_diagnostic(caplog):
    """INFO, not WARNING: nothing configures logging in a kernel, so a warning would print into
    the running cell (issue 39: an internal line in the user's output)."""
    model = _model(max_tokens=32000, context_window=32768)
    model.set_history([user_text("x" * 120_000)])
    with caplog.at_level("INFO", logger="penguin_jupyter.llm.model"):
        model.request_config(None, [user_text("q")])
        model.request_config(None, [user_text("q")])
    records = caplog.records
    assert len(records) == 1 and records[0].getMessage().startswith("output cap clamped hard: max_tokens 32000 -> ")
    assert records[0].levelname == "INFO"


async def test_idle_timer_disabled_by_a_non_positive_timeout():
    entry = {"text": ["ab", "cd"], "fault": {"kind": "stall", "after": 1, "seconds": 1.0}}
    with ScriptedModelServer([entry]) as s:
        messages, outcome = await collect(scripted_model(s, request_timeout_ms=0), [user_text("q")])
    assert outcome.status == "completed"
    assert messages[-2].payload.text == "abcd"
