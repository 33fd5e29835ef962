"""Shared fixtures for the session/agent tests: a data root with a model entry pointing at a
ScriptedModelServer, a workspace, approval callbacks and small readers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from penguin_jupyter.omni import OmniMessage
from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer

PROVIDER = "openai"
MODEL_ID = "scripted-model"


def configure_model(
    root: Path, server: ScriptedModelServer, *, project: str = "default_project", **extra: Any
) -> None:
    """A default model entry for `project` that talks to `server` over loopback."""
    add_model(
        root,
        project,
        provider=PROVIDER,
        model_id=MODEL_ID,
        base_url=server.url,
        api_key="sk-test-secret",
        client_type="openai-chat",
        context_window=32768,
        default=True,
        **extra,
    )


def configure_child_model(root: Path, server: ScriptedModelServer, model_id: str = "child-model") -> None:
    """A second (non-default) model entry, for a subagent, that talks to `server`."""
    add_model(
        root,
        "default_project",
        provider=PROVIDER,
        model_id=model_id,
        base_url=server.url,
        api_key="sk-child",
        client_type="openai-chat",
        context_window=16384,
    )


async def allow(_call: OmniMessage) -> str:
    return "allow"


async def collect(stream) -> list[OmniMessage]:
    return [msg async for msg in stream]


def kinds(msgs: list[OmniMessage]) -> list[str]:
    return [m.type if m.type == "session_meta" else m.payload.type for m in msgs]


def request_messages(request: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, content-or-summary) for each chat message of a recorded request body."""
    out: list[tuple[str, str]] = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if message.get("tool_calls"):
            content = json.dumps([c["function"]["name"] for c in message["tool_calls"]])
        out.append((message["role"], content or ""))
    return out


_NOTEBOOK_CONTEXT = re.compile(r"\n*\[notebook_context\]\n[\s\S]*?\n\[/notebook_context\]")


def typed_messages(request: dict[str, Any]) -> list[tuple[str, str]]:
    """`request_messages` with the `[notebook_context]` block a `%%penguin` cell adds to its
    prompt removed (docs/notebook-tools.md "The cell you mean"): what the user typed."""
    return [(role, _NOTEBOOK_CONTEXT.sub("", content)) for role, content in request_messages(request)]


async def crafted_session(agent: Any, workspace: Path, records: list[OmniMessage]) -> tuple[str, Path]:
    """A session whose Trace holds its real session_meta followed by `records` (never run)."""
    from penguin_jupyter.trace import TraceWriter

    session = await agent.create_session(workspace_dir=workspace)
    path = session.trace_path
    session.dispose()
    writer = TraceWriter(path)
    writer.write(session._setup.meta)
    for record in records:
        writer.write(record)
    writer.close()
    return session.session_id, path
