"""input_subagent (docs/subagents.md "input_subagent and kill_subagent"): poll a managed subagent (empty prompt) or start a
follow-up round on it when idle, through the collect window. An abort ends only this call; the
session stays registered after a round so it can be continued."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from pydantic import Field

from ...interfaces import EnvironmentServices
from ...omni import OmniMessage
from ..tool_arguments import (
    DESCRIBE,
    YIELD_BOUNDS,
    CallDescription,
    Headline,
    MaybeText,
    Milliseconds,
    ShownInFull,
    Text,
)
from ..tool_declaration import ToolArguments, ToolDeclaration
from ..types import ToolDefinitionConfig, ToolExecutionContext, ToolFailed, ToolResult
from .common import ToolBase, clamp_yield_ms
from .run_subagent import approval_hint
from .subagent import (
    DEFAULT_SUBAGENT_POLL_YIELD_MS,
    DEFAULT_SUBAGENT_YIELD_MS,
    ManagedSubagentSession,
    SubagentSessionManager,
    SubagentStartError,
    collect_window,
    ensure_subagent_sessions,
    result_for_exit,
)


class InputSubagentArguments(ToolArguments):
    description: Annotated[CallDescription, DESCRIBE] = None
    subagent_id: Annotated[Text, Field(description="The subagent_id returned by run_subagent."), Headline()]
    prompt: Annotated[
        MaybeText,
        Field(
            description=(
                "A follow-up task, accepted only while the subagent is idle; empty (the default) only "
                "polls for new output and status."
            )
        ),
        ShownInFull(),
        Headline(),
    ] = None
    yield_time_ms: Annotated[
        Milliseconds,
        Field(
            description=(
                "Milliseconds to wait for new output or the end before returning. Default 300000 "
                f"after a follow-up prompt and 10000 for an empty poll; {YIELD_BOUNDS}."
            )
        ),
    ] = None


INPUT_SUBAGENT = ToolDeclaration(
    name="input_subagent",
    description=(
        "Poll a background subagent for new output, or, once it is idle (its last run finished), send it "
        "a follow-up prompt that continues the same session. The subagent's pending tool approvals are "
        "surfaced while this call waits."
    ),
    arguments=InputSubagentArguments,
    permission="rw",
    timeout_ms=600000,
)


def unknown_subagent(tool_name: str, subagent_id: str) -> str:
    return f"[{tool_name} error: unknown subagent_id {subagent_id} (the session may have finished and been cleared)]"


def no_manager(tool_name: str) -> str:
    return f"[{tool_name} unavailable: no subagent session manager configured]"


def find_subagent_session(
    tool_name: str, manager: SubagentSessionManager | None, subagent_id: str, ctx: ToolExecutionContext
) -> tuple[SubagentSessionManager, ManagedSubagentSession]:
    """(manager, session) for the call's `subagent_id`; `ToolFailed` when there is none."""
    manager = manager or ensure_subagent_sessions(ctx.services)
    if manager is None:
        raise ToolFailed(no_manager(tool_name))
    session = manager.get(subagent_id)
    if session is None:
        raise ToolFailed(unknown_subagent(tool_name, subagent_id))
    return manager, session


class InputSubagentTool(ToolBase[InputSubagentArguments]):
    declaration = INPUT_SUBAGENT

    def __init__(self, definition: ToolDefinitionConfig, services: EnvironmentServices | None = None) -> None:
        super().__init__(definition, services)
        self.manager = ensure_subagent_sessions(services)

    async def run(self, arguments: InputSubagentArguments, ctx: ToolExecutionContext) -> AsyncIterator[OmniMessage | ToolResult]:
        subagent_id = arguments.subagent_id
        _manager, session = find_subagent_session(self.name, self.manager, subagent_id, ctx)
        prompt = arguments.prompt or ""
        poll = not prompt.strip()
        default_ms = DEFAULT_SUBAGENT_POLL_YIELD_MS if poll else DEFAULT_SUBAGENT_YIELD_MS
        yield_ms = clamp_yield_ms(arguments.yield_time_ms, default_ms, self.definition.timeout_ms)
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if not poll:
            if session.running:
                raise ToolFailed(
                    f"[{self.name} error: subagent {subagent_id} is still running; "
                    "poll with an empty prompt to collect progress first]"
                )
            try:
                session.start_run(prompt)
            except SubagentStartError as exc:
                raise ToolFailed(f"[{self.name} error: {exc}]") from None
        async for message in collect_window(session, yield_ms, ctx):
            yield message
        if ctx.signal is not None and ctx.signal.aborted:
            yield ToolResult(stop_reason="aborted")
            return
        if session.running:
            yield ToolResult(
                stop_reason="completed",
                note=f"[subagent still running with subagent_id {subagent_id}]" + approval_hint(session),
            )
            return
        result = result_for_exit(session.exit)
        idle = f"[subagent idle with subagent_id {subagent_id}; send a follow-up prompt to continue]"
        result.note = f"{result.note} {idle}" if result.note else idle
        yield result

