"""Shared helpers for the subagent tool tests: a runner whose child handles are driven by a
per-round script (the child side of the SubagentRunner contract: every message already carries
the child session id), a real Environment with the three subagent tools, and call helpers."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from penguin_jupyter.environment import Environment, EnvironmentConfig, ToolConfig
from penguin_jupyter.interfaces import AbortSignal, ApproveFn, EnvironmentServices, ToolExecutionRequest
from penguin_jupyter.omni import OmniMessage, abort, partial_text, session_meta, tool_call, with_origin
from tests.support.env import tool_entry

CHILD_ID = "session-child-12ab34cd"
SUBAGENT_TOOLS = ("run_subagent", "input_subagent", "kill_subagent")

Round = Callable[["ScriptedHandle", str, AbortSignal | None, ApproveFn | None], AsyncIterator[OmniMessage]]


class ScriptedHandle:
    """A SubagentHandle whose rounds run `script(handle, prompt, signal, approve)`."""

    def __init__(self, session_id: str, script: Round) -> None:
        self.session_id = session_id
        self.script = script
        self.prompts: list[str] = []
        self.disposed = 0
        self.gate = asyncio.Event()
        self._meta_taken = False

    def take_session_meta(self) -> OmniMessage | None:
        if self._meta_taken:
            return None
        self._meta_taken = True
        return with_origin(child_meta(self.session_id), self.session_id)

    async def run(
        self, prompt: str, *, signal: AbortSignal | None = None, approve: ApproveFn | None = None
    ) -> AsyncIterator[OmniMessage]:
        self.prompts.append(prompt)
        meta = self.take_session_meta()
        if meta is not None:
            yield meta
        async for message in self.script(self, prompt, signal, approve):
            yield with_origin(message, self.session_id)

    def dispose(self) -> None:
        self.disposed += 1


class ScriptedRunner:
    """Records spawn keyword arguments; hands out ScriptedHandles (or raises `error`)."""

    def __init__(self, script: Round, error: Exception | None = None) -> None:
        self.script = script
        self.error = error
        self.spawns: list[dict[str, Any]] = []
        self.handles: list[ScriptedHandle] = []

    async def spawn(self, **kwargs: Any) -> ScriptedHandle:
        self.spawns.append(kwargs)
        if self.error is not None:
            raise self.error
        session_id = CHILD_ID if not self.handles else f"session-child-{len(self.handles):08x}"
        handle = ScriptedHandle(session_id, self.script)
        self.handles.append(handle)
        return handle


def child_meta(session_id: str) -> OmniMessage:
    return session_meta(
        session_id=session_id,
        provider="p",
        model_id="m",
        model_context_window=1000,
        system_prompt="",
        agent_state="/tmp",
        workspace="/tmp",
        source="subagent",
    )


def text_delta(text: str) -> OmniMessage:
    return partial_text("delta", text)


def child_abort(reason: str = "user") -> OmniMessage:
    return abort(reason)


async def until_aborted(signal: AbortSignal | None) -> None:
    if signal is None:
        await asyncio.Event().wait()
    else:
        await signal.wait()


def subagent_env(workspace: Any, runner: Any = None, **entry_overrides: Any) -> Environment:
    entries = [tool_entry(name, **entry_overrides) for name in SUBAGENT_TOOLS]
    return Environment(
        EnvironmentConfig(
            workspace_dir=str(workspace),
            tool_config=ToolConfig(builtin=entries),
            services=EnvironmentServices(subagent_runner=runner),
        )
    )


async def call(
    env: Environment,
    name: str,
    args: dict[str, Any],
    *,
    approve: ApproveFn | None = None,
    signal: AbortSignal | None = None,
    call_id: str = "call_1",
) -> list[OmniMessage]:
    request = ToolExecutionRequest(tool_call(name, json.dumps(args), call_id), signal=signal, approve=approve)
    return [message async for message in env.execute_tool(request)]


def own(messages: list[OmniMessage]) -> list[OmniMessage]:
    return [m for m in messages if not m.origin]


def forwarded(messages: list[OmniMessage]) -> list[OmniMessage]:
    return [m for m in messages if m.origin]


def output_of(messages: list[OmniMessage]) -> Any:
    last = messages[-1].payload
    assert last.type == "tool_call_output"
    return last


def own_delta_text(messages: list[OmniMessage]) -> str:
    return "".join(
        m.payload.output
        for m in own(messages)
        if m.payload.type == "partial_tool_call_output" and m.payload.event_type == "delta"
    )


def subagent_id_in(text: str) -> str:
    match = re.search(r"subagent_id (subagent-[0-9a-f]+)", text)
    assert match, text
    return match.group(1)


async def wait_for(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)
