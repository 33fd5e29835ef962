"""Shared helpers for the llm tests: hand-built agenthub UniEvents, a GenerativeModel pointed at
the scripted model server, and a collector that splits a stream into messages and its outcome."""

from __future__ import annotations

from typing import Any

from penguin_jupyter.interfaces import GenerativeModelParameters, LLMOutcome
from penguin_jupyter.llm import EventTranslator, GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import OmniMessage, to_dict


def event(*items: dict[str, Any], finish: str | None = None, usage: dict | None = None) -> dict[str, Any]:
    """One gateway event (event_type is ignored by the translator)."""
    return {
        "role": "assistant",
        "event_type": "stop" if finish else "delta",
        "content_items": list(items),
        "usage_metadata": usage,
        "finish_reason": finish,
        "created_at": 0,
    }


def usage(cached: int | None = 0, prompt: int | None = 0, thoughts: int | None = 0, response: int | None = 0):
    return {
        "cached_tokens": cached,
        "prompt_tokens": prompt,
        "thoughts_tokens": thoughts,
        "response_tokens": response,
    }


def text(value: str, fidelity: dict | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "text", "text": value}
    if fidelity is not None:
        item["fidelity"] = fidelity
    return item


def thought(value: str, fidelity: dict | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "thinking", "thinking": value}
    if fidelity is not None:
        item["fidelity"] = fidelity
    return item


def partial_call(call_id: str, name: str = "", arguments: str = "") -> dict[str, Any]:
    return {"type": "partial_tool_call", "name": name, "arguments": arguments, "tool_call_id": call_id}


def complete_call(
    call_id: str, name: str, arguments: dict | None, fidelity: dict | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "tool_call",
        "name": name,
        "arguments": arguments,
        "tool_call_id": call_id,
    }
    if fidelity is not None:
        item["fidelity"] = fidelity
    return item


def translate(events: list[dict[str, Any]], translator: EventTranslator | None = None) -> list[OmniMessage]:
    """push every event, then finish() (no token_usage: that is the model's job)."""
    translator = translator or EventTranslator()
    out: list[OmniMessage] = []
    for e in events:
        out.extend(translator.push_event(e))
    out.extend(translator.finish())
    return out


def payloads(messages: list[OmniMessage]) -> list[dict[str, Any]]:
    """Wire payloads without timestamps, for exact comparisons."""
    return [to_dict(m)["payload"] for m in messages]


def kinds(messages: list[OmniMessage]) -> list[str]:
    out = []
    for m in messages:
        p = m.payload
        event_type = getattr(p, "event_type", None)
        out.append(f"{p.type}:{event_type}" if event_type else p.type)
    return out


def scripted_model(server, **overrides: Any) -> GenerativeModel:
    """A GenerativeModel speaking openai-chat to the scripted server."""
    fields: dict[str, Any] = {
        "model_id": "scripted-model",
        "api_key": "test-key",
        "base_url": server.url,
        "client_type": "openai-chat",
    }
    fields.update(overrides)
    return GenerativeModel(GenerativeModelConfig(**fields))


async def collect(model, new_messages, **kwargs: Any) -> tuple[list[OmniMessage], LLMOutcome]:
    """Drain one stream_generate; asserts the outcome is the last item and appears once."""
    items = [
        item async for item in model.stream_generate(GenerativeModelParameters(list(new_messages), **kwargs))
    ]
    outcomes = [i for i in items if isinstance(i, LLMOutcome)]
    assert len(outcomes) == 1 and isinstance(items[-1], LLMOutcome), items
    return items[:-1], items[-1]


def run_script(script: str, *args: str, site: object = None, **env: str) -> tuple[dict[str, Any], str]:
    """Run `python -c script args` in a fresh process (the repository, and `site` first when
    given, on its path; `env` added to this environment); the JSON object its last stdout line
    prints, and its stderr. Fails the test when the process fails."""
    import json
    import os
    import subprocess
    import sys

    from tests.support.paths import REPO_ROOT

    environ = dict(os.environ, **env)
    environ["PYTHONPATH"] = os.pathsep.join(str(p) for p in (site, REPO_ROOT, environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=180, env=environ, cwd=REPO_ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result, done.stderr
