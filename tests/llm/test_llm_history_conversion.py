"""`llm/history_conversion.py`: converting only the new messages gives exactly agenthub's own
openai-chat conversion of the whole history, request after request, whatever reasoning fields
the history carries (and agenthub's Gemini conversion, whatever tool calls earlier messages
named, and its Anthropic Messages and OpenAI Responses conversions); a history that is not an
extension of the last one is converted whole."""

from __future__ import annotations

import inspect
from typing import Any

from agenthub import AutoLLMClient
from agenthub.gemini3_8.client import Gemini3_8Client
from agenthub.openai_chat.client import OpenaiChatClient

from penguin_jupyter.llm.history_conversion import (
    CallNameContext,
    IncrementalConversion,
    IncrementalSyncConversion,
    MessageAlone,
    install_incremental_conversion,
)

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content_items": [{"type": "text", "text": text}]}


def assistant(*items: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content_items": list(items)}


def think(text: str, field: str | None = "reasoning_content") -> dict[str, Any]:
    item: dict[str, Any] = {"type": "thinking", "thinking": text}
    if field is not None:
        item["fidelity"] = {"reasoning_field": field}
    return item


def call(n: int) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "name": "exec_command",
        "arguments": {"cmd": f"echo {n}"},
        "tool_call_id": f"c{n}",
    }


def result(n: int, images: bool = False) -> dict[str, Any]:
    out = {
        "role": "user",
        "content_items": [{"type": "tool_result", "text": f"out {n}", "tool_call_id": f"c{n}"}],
    }
    if images:
        out["content_items"][0]["images"] = [PNG]
    return out


def conversation() -> list[dict[str, Any]]:
    """Turns that exercise every path: tool calls before any thinking, thinking through each
    reasoning field (and none, and empty), thinking-less tool turns after them, images."""
    turns: list[dict[str, Any]] = [user("start"), assistant(call(0)), result(0)]
    turns += [
        assistant({"type": "text", "text": "ok"}),
        user("look"),
        assistant(think(""), call(1)),
        result(1),
    ]
    turns += [assistant(think("plan", "reasoning_content"), call(2)), result(2, images=True)]
    turns += [assistant(call(3)), result(3), assistant({"type": "text", "text": "done"})]
    turns += [{"role": "user", "content_items": [{"type": "image_url", "image_url": PNG}]}]
    turns += [assistant(think("hmm", "reasoning"), {"type": "text", "text": "seen"}), user("again")]
    turns += [assistant(call(4)), result(4), assistant(think("bare", None), call(5)), result(5)]
    turns += [assistant(call(6)), result(6), assistant({"type": "text", "text": "end"})]
    return turns


def openai_chat_client() -> OpenaiChatClient:
    return OpenaiChatClient(model="gpt-test", api_key="k", base_url="http://127.0.0.1:9/v1")


async def test_every_prefix_converts_as_agenthub_does() -> None:
    client = openai_chat_client()
    incremental = IncrementalConversion(client.transform_uni_message_to_model_input)
    history = conversation()
    for n in range(1, len(history) + 1):
        expected = await client.transform_uni_message_to_model_input(history[:n])
        assert await incremental(history[:n]) == expected, f"prefix of {n} messages"
        if n > 1:
            assert incremental.converted_last == 1  # only the new message went to agenthub


async def test_requests_two_messages_apart_and_rollbacks_convert_as_agenthub_does() -> None:
    client = openai_chat_client()
    incremental = IncrementalConversion(client.transform_uni_message_to_model_input)
    history = conversation()
    cuts = [*range(1, len(history) + 1, 2), 5, 9, 3, len(history)]
    for n in cuts:
        assert await incremental(history[:n]) == await client.transform_uni_message_to_model_input(
            history[:n]
        )
    assert incremental.converted_last == len(history) - 3  # after the rollback to 3: converted from there


async def test_a_replaced_message_means_a_whole_conversion() -> None:
    client = openai_chat_client()
    incremental = IncrementalConversion(client.transform_uni_message_to_model_input)
    history = conversation()
    await incremental(history[:8])
    changed = [*history[:4], user("edited"), *history[5:10]]
    assert await incremental(changed) == await client.transform_uni_message_to_model_input(changed)
    assert incremental.converted_last == len(changed)


async def test_the_list_returned_is_the_callers_to_change() -> None:
    incremental = IncrementalConversion(openai_chat_client().transform_uni_message_to_model_input)
    history = conversation()
    first = await incremental(history[:4])
    first.insert(0, {"role": "system", "content": "sys"})  # what agenthub does with it
    assert (await incremental(history[:5]))[0] != {"role": "system", "content": "sys"}


def gemini_conversation() -> list[dict[str, Any]]:
    """Gemini's own cases on top: a tool result answering a call several messages back (its
    function name comes from that call), a call whose id is its name (an id-less history), a
    message mixing tool results with text (split into runs), signatures in fidelity."""
    named = {"type": "tool_call", "name": "ls", "arguments": {}, "tool_call_id": "ls"}
    signed = {**call(7), "fidelity": {"signature": b"\x8fsig"}}
    turns = [user("start"), assistant(call(0), signed), result(0)]
    turns += [
        {"role": "user", "content_items": [result(7)["content_items"][0], {"type": "text", "text": "also"}]}
    ]
    turns += [assistant({"type": "text", "text": "ok", "fidelity": {"signature": b"\x01"}}), user("more")]
    turns += [
        assistant(named),
        {"role": "user", "content_items": [{"type": "tool_result", "text": "a", "tool_call_id": "ls"}]},
    ]
    turns += [
        assistant(call(8), call(9)),
        result(8),
        result(9),
        user("look"),
        assistant({"type": "text", "text": "x"}),
    ]
    turns += [result(0), {"role": "user", "content_items": [{"type": "image_url", "image_url": PNG}]}]
    return turns


async def test_gemini_every_prefix_and_rollback_converts_as_agenthub_does() -> None:
    client = Gemini3_8Client(model="gemini-3-flash", api_key="k", base_url="http://127.0.0.1:9")
    incremental = IncrementalConversion(client.transform_uni_message_to_model_input, CallNameContext)
    history = gemini_conversation()
    for n in [*range(1, len(history) + 1), 4, len(history), 2, 9, len(history)]:
        expected = await client.transform_uni_message_to_model_input(history[:n])
        assert await incremental(history[:n]) == expected, f"prefix of {n} messages"
    assert incremental.converted_last == len(history) - 9
    # a tool result answering a call converted by an earlier request names that call's function
    wire = await incremental(history)
    assert [p.function_response.name for c in wire for p in c.parts or [] if p.function_response] == [
        "exec_command", "exec_command", "ls", "exec_command", "exec_command", "exec_command",
    ]  # fmt: skip


def per_message_conversation() -> list[dict[str, Any]]:
    """What the Anthropic and Responses conversions see: text with and without a phase, signed
    and redacted thinking, summaries with encrypted reasoning, tool calls mixed with text, tool
    results with images, image messages."""
    signed = {"type": "thinking", "thinking": "plan", "fidelity": {"signature": "sig-1"}}
    redacted = {"type": "thinking", "thinking": "_REDACTED_THINKING", "fidelity": {"signature": "opaque"}}
    summary = {
        "type": "thinking",
        "thinking": "summary",
        "fidelity": {"channel": "summary", "encrypted_content": "enc", "signature": "sig-2"},
    }
    phased = {"type": "text", "text": "note", "fidelity": {"phase": "commentary"}}
    final = {"type": "text", "text": "answer", "fidelity": {"phase": "final_answer"}}
    turns: list[dict[str, Any]] = [user("start"), assistant(signed, call(0)), result(0)]
    turns += [assistant(phased, final), user("look"), assistant(redacted, {"type": "text", "text": "x"}, call(1))]
    turns += [result(1, images=True), assistant(summary, call(2), call(3)), result(2), result(3)]
    turns += [{"role": "user", "content_items": [{"type": "image_url", "image_url": PNG}]}]
    turns += [assistant({"type": "text", "text": "seen"}), user("again"), assistant(call(4)), result(4)]
    return turns


def per_message_clients() -> list[Any]:
    from agenthub.claude5.client import Claude5Client

    from penguin_jupyter.seams.llm_sdk import build_ant_messages_client, protocol_client_class

    clients: list[Any] = [
        Claude5Client(model="claude-sonnet-4-6", api_key="k", base_url="http://127.0.0.1:9"),
        build_ant_messages_client("m", "k", "http://127.0.0.1:9"),
    ]
    for client_type in ("openai-responses", "gpt-5.5", "deepseek-v4-omni", "minimax-m3"):
        cls = protocol_client_class(client_type)
        assert cls is not None
        clients.append(cls(model=client_type, api_key="k", base_url="http://127.0.0.1:9/v1"))
    return clients


async def converted_by_both(incremental: Any, convert: Any, messages: list[Any]) -> tuple[Any, Any]:
    """(ours, agenthub's) for `messages`, whether the conversion is a coroutine or not."""
    ours, theirs = incremental(messages), convert(messages)
    return (await ours, await theirs) if inspect.iscoroutine(theirs) else (ours, theirs)


async def test_anthropic_and_responses_every_prefix_and_rollback_converts_as_agenthub_does() -> None:
    history = per_message_conversation()
    for client in per_message_clients():
        name = type(client).__name__
        convert = client.transform_uni_message_to_model_input
        incremental: Any = (
            IncrementalConversion(convert, MessageAlone)
            if inspect.iscoroutinefunction(convert)
            else IncrementalSyncConversion(convert)
        )

        for n in [*range(1, len(history) + 1), 5, len(history), 2, 9, len(history)]:
            ours, theirs = await converted_by_both(incremental, convert, history[:n])
            assert ours == theirs, f"{name}: prefix of {n} messages"
        assert incremental.converted_last == len(history) - 9, name
        ours, theirs = await converted_by_both(incremental, convert, history)
        assert ours == theirs and incremental.converted_last == 0, name
        # a replaced message: converted again from the last conversion that ended before it (the
        # request of the first 2 messages, above)
        changed = [*history[:4], user("edited"), *history[5:]]
        ours, theirs = await converted_by_both(incremental, convert, changed)
        assert ours == theirs and incremental.converted_last == len(changed) - 2, name


def test_installed_for_every_protocol_but_claude_on_bedrock() -> None:
    for client_type, expected in [
        ("openai-chat", True),
        ("openai-chat-vllm-adapter", True),
        ("gemini-3-flash", True),
        ("openai-responses", True),
        ("gpt-5.5", True),
        ("deepseek-v4-pro", True),
        ("minimax-m3", True),
        ("claude-sonnet-4-6", True),
        ("glm-5.1", False),
        ("kimi-k2.5", False),
    ]:
        client = AutoLLMClient(
            model="m", api_key="k", base_url="http://127.0.0.1:9/v1", client_type=client_type
        )
        assert install_incremental_conversion(client._client) is expected, client_type
    from penguin_jupyter.seams.llm_sdk import build_ant_messages_client

    assert install_incremental_conversion(build_ant_messages_client("m", "k", "http://127.0.0.1:9"))
    bedrock = AutoLLMClient(
        model="claude-sonnet-4-6", api_key="id,secret", base_url="bedrock://us-east-1", client_type=None
    )
    assert not install_incremental_conversion(bedrock._client)
    assert not any(install_incremental_conversion(obj) for obj in (object(), None, "x"))
