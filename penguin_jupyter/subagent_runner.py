"""The SubagentRunner the Agent injects into a session's Environment (docs/subagents.md "Spawn rules" to docs/subagents.md "The child stream").

Owns spawning child sessions (depth cap 1, same workspace, `source: "subagent"`, the parent's
model pair and thinking level unless overridden, another agent only when its state exists)
and the child handle's origin-tagged stream: the child's `session_meta` once, the prompt as a
`parent_agent` text, then every child message with the child session id prepended to
`origin`; the parent's approval callback sees the child's calls origin-tagged. The
run/input/kill_subagent tools that drive handles live in the Environment.

It knows agents only through `ChildSessionOpener` (what `agent.Agent` provides): opening a
child session and finding a sibling agent by id (the id rule is `state.ids`, applied there),
so this module never imports `agent.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from .interfaces import SUBAGENT_THINKING_LEVELS, AbortSignal, ApprovalDecision, ApproveFn, ThinkingLevelName
from .omni import OmniMessage, user_text, with_origin

if TYPE_CHECKING:
    from .session import Session
    from .spending import SpendMeter

MAX_SUBAGENT_DEPTH = 1
SUBAGENT_TOOL_NAMES = ("run_subagent", "input_subagent", "kill_subagent")


class ChildSessionOpener(Protocol):
    """The agent a subagent runs as (`agent.Agent` is one)."""

    @property
    def agent_id(self) -> str: ...

    async def open_child_session(
        self,
        *,
        workspace_dir: str,
        provider: str,
        model_id: str,
        thinking_level: ThinkingLevelName | None,
        depth: int,
        credentials: Mapping[str, str] | None = None,
        spend: SpendMeter | None = None,
    ) -> Session: ...

    def sibling(self, agent_id: str) -> ChildSessionOpener | None:
        """Another agent of the same project whose state exists, or None (also for a bad id)."""
        ...


@dataclass(frozen=True)
class ParentContext:
    """What a child inherits from the session that spawns it."""

    agent: ChildSessionOpener
    provider: str
    model_id: str
    workspace_dir: str
    thinking_level: ThinkingLevelName | None
    depth: int
    credentials: Mapping[str, str] = field(default_factory=dict)  # model keys of the workspace's .env
    spend: SpendMeter | None = None  # the parent's budgets: a child's requests count in its Task


class SubagentSessionHandle:
    """A spawned child session; `run` may be called again for a follow-up prompt."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.session_id = session.session_id
        self._meta_taken = False

    def take_session_meta(self) -> OmniMessage | None:
        """The child's origin-tagged session_meta, once (a background launch takes it early)."""
        if self._meta_taken:
            return None
        self._meta_taken = True
        return with_origin(self.session.meta, self.session_id)

    async def run(
        self, prompt: str, *, signal: AbortSignal | None = None, approve: ApproveFn | None = None
    ) -> AsyncIterator[OmniMessage]:
        hop = self.session_id
        meta = self.take_session_meta()
        if meta is not None:
            yield meta
        message = user_text(prompt, sender="parent_agent")
        yield with_origin(message, hop)

        async def child_approve(call: OmniMessage) -> ApprovalDecision:
            if approve is None:
                return "deny"
            return await approve(with_origin(call, hop))

        async for msg in self.session.run([message], approve=child_approve, signal=signal):
            yield with_origin(msg, hop)

    def dispose(self) -> None:
        self.session.dispose()


class AgentSubagentRunner:
    """`SubagentRunner` for one parent session."""

    def __init__(self, parent: ParentContext) -> None:
        self._parent = parent

    async def spawn(
        self,
        *,
        agent_id: str | None = None,
        provider: str | None = None,
        model_id: str | None = None,
        thinking_level: ThinkingLevelName | None = None,
    ) -> SubagentSessionHandle:
        parent = self._parent
        if parent.depth >= MAX_SUBAGENT_DEPTH:
            raise RuntimeError(
                f"subagent depth limit {MAX_SUBAGENT_DEPTH} reached; not spawning another subagent"
            )
        if (provider is None) != (model_id is None):
            raise ValueError(
                "`model_id` and `provider` must be given together (a model reference is the pair), "
                "or both omitted to inherit the parent session's model"
            )
        if thinking_level is not None and thinking_level not in SUBAGENT_THINKING_LEVELS:
            raise ValueError(f"invalid `thinking_level` {thinking_level!r}")
        agent = self._child_agent(agent_id)
        session = await agent.open_child_session(
            workspace_dir=parent.workspace_dir,
            provider=provider or parent.provider,
            model_id=model_id or parent.model_id,
            thinking_level=thinking_level or parent.thinking_level,
            depth=parent.depth + 1,
            credentials=parent.credentials,
            spend=parent.spend,
        )
        return SubagentSessionHandle(session)

    def _child_agent(self, agent_id: str | None) -> ChildSessionOpener:
        parent = self._parent.agent
        if agent_id is None or agent_id == parent.agent_id:
            return parent
        sibling = parent.sibling(agent_id)
        if sibling is None:
            raise ValueError(f'subagent error: agent "{agent_id}" does not exist or is not accessible')
        return sibling
