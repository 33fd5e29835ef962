"""Shared helpers for tests that drive agenthub against the ScriptedModelServer.

Owns client construction and event collection for the scripted-server tests; the server
itself lives in `penguin_jupyter.testing`.
"""

from __future__ import annotations

from typing import Any

from agenthub import AutoLLMClient

from penguin_jupyter.testing import ScriptedModelServer


def openai_chat_client(server: ScriptedModelServer, *, sdk_retries: int | None = 0) -> AutoLLMClient:
    """An agenthub `openai-chat` client on `server`; `sdk_retries=None` keeps the SDK default (2)."""
    client = AutoLLMClient(model=server.model, client_type="openai-chat", base_url=server.url, api_key="test")
    if sdk_retries is not None:
        inner = client._client
        inner._client = inner._client.with_options(max_retries=sdk_retries)
    return client


def user_message(text: str) -> dict[str, Any]:
    return {"role": "user", "content_items": [{"type": "text", "text": text}]}


async def collect(
    client: AutoLLMClient, text: str = "go", config: dict[str, Any] | None = None
) -> list[dict]:
    """Every event of one stateful turn (raises what the client raises)."""
    events: list[dict] = []
    async for event in client.streaming_response_stateful(message=user_message(text), config=config or {}):
        events.append(event)
    return events


def items(events: list[dict], kind: str) -> list[dict]:
    return [item for event in events for item in event["content_items"] if item["type"] == kind]


def joined(events: list[dict], kind: str, key: str) -> str:
    return "".join(item[key] for item in items(events, kind))


def cause_chain(exc: BaseException | None) -> list[BaseException]:
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain
