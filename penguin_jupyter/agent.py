"""Agent: one agent's state on disk and the factory of its Sessions (the README's "The core, from Python").

Owns `create_agent`, model selection (the (provider, model_id) pair, the project default, or the
model a provider's key selects when the project names none),
session creation (id, Trace path, assembled system prompt, Environment, model config, the
session lock), resume (take the session lock, locate the latest shard, replay it, close a
dangling compaction, re-check workspace and model) and the session list. State files are
read through `penguin_jupyter.state`; the conversation itself runs in `session.py`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TypeAlias, cast

from .engine import CompactionSettings, effective_context_threshold
from .environment import Environment
from .environment.environment import SANDBOX_KEY
from .environment.environment_config import EnvironmentConfig
from .environment.registry import ToolRegistration
from .environment.sandbox import SandboxGrants
from .environment.secret_files import register_data_root
from .environment.types import BuiltinTool, ToolConfig
from .interfaces import EnvironmentServices, ThinkingLevelName, VisionDescriberService
from .llm import GenerativeModel, GenerativeModelConfig, ToolCallIdAllocator, vision_model_config
from .llm.answer_budget import DEFAULT_ANSWER_BUDGET_MS, DEFAULT_CONNECT_TIMEOUT_MS
from .omni import (
    OmniMessage,
    SessionMetaPayload,
    TextPayload,
    TokenCounts,
    compaction_end,
    payload_as,
    session_meta,
)
from .prices import ModelPrice, cost_usd, list_price
from .private_files import UnsafePathError, read_private_text
from .redaction import Redactor
from .session import Session, SessionSetup
from .spending import Budgets, SpendMeter
from .state import (
    ConfigError,
    ModelEntry,
    ProjectConfig,
    PromptContext,
    SystemConfig,
    assemble_system_prompt,
    ensure_agent_layout,
    list_skills,
    load_project_config,
    load_system_config,
    load_vault,
    paths,
)
from .state.admin_policy import load_policy
from .state.errors import NoModelConfiguredError
from .state.ids import is_valid_id, require_id
from .state.key_models import KeyModel, model_for_keys
from .state.model_catalog import catalogue_entry
from .state.project_config import HOW_TO_ADD_MODEL
from .state.sandbox_settings import sandbox_config
from .state.secrets import collect_secrets
from .subagent_runner import MAX_SUBAGENT_DEPTH, SUBAGENT_TOOL_NAMES, AgentSubagentRunner, ParentContext
from .trace import (
    ReplayState,
    SessionLock,
    TraceFile,
    TraceWriter,
    find_latest_trace_file,
    latest_session_id,
    list_session_files,
    read_trace,
    replay_notes_diagnostic,
    resume_trace,
)
from .trace.writer import trace_file_path

__all__ = ["Agent", "SessionInfo", "create_agent"]

log = logging.getLogger(__name__)

_DEFAULT_THINKING_LEVEL = "medium"

# Given a session's workspace, the model keys its model client may use besides the exported ones
# (the notebook passes `state.dotenv.workspace_credentials`'s keys; docs/security.md).
CredentialSource = Callable[[str], Mapping[str, str]]

# A tool the host registers besides the builtin ones (the notebook's kernel and notebook tools).
ExtraTool: TypeAlias = ToolRegistration | BuiltinTool


@dataclass(frozen=True)
class SessionInfo:
    """One entry of `Agent.list_sessions()` (the latest shard of the session)."""

    session_id: str
    trace_path: Path
    date: str
    provider: str | None
    model_id: str | None
    workspace: str | None
    records: int
    first_prompt: str | None


async def create_agent(
    agent_id: str = paths.DEFAULT_AGENT_ID,
    *,
    project_id: str | None = None,
    root: str | os.PathLike[str] | None = None,
) -> Agent:
    """Open (and on first use seed) `<root>/<project>/agents/<agent_id>`.

    Both ids follow the one id rule (`state.ids`); a bad one raises `InvalidIdError` naming the
    field before anything is created."""
    require_id("agent_id", agent_id)
    project = require_id("project_id", paths.DEFAULT_PROJECT_ID if project_id is None else project_id)
    agent = Agent(agent_id, project_id=project, root=paths.resolve_root(root))
    ensure_agent_layout(agent.root, agent.project_id, agent.agent_id)
    register_data_root(agent.root)  # its vault and project config are credential files for read_file
    agent.load_system_config()  # fail early on a broken system_config.yaml
    return agent


class Agent:
    def __init__(self, agent_id: str, *, project_id: str, root: Path) -> None:
        self.agent_id = require_id("agent_id", agent_id)
        self.project_id = require_id("project_id", project_id)
        self.root = root
        # A host that decides per call how commands run (the notebook's approval router) puts
        # its ledger here; every Environment this agent builds reads it (environment/sandbox/).
        self.sandbox_grants: SandboxGrants | None = None

    # --- paths and state -----------------------------------------------------------------------

    @property
    def agent_dir(self) -> Path:
        return paths.agent_dir(self.root, self.project_id, self.agent_id)

    @property
    def agent_state_dir(self) -> Path:
        return paths.agent_state_dir(self.root, self.project_id, self.agent_id)

    @property
    def traces_dir(self) -> Path:
        return paths.traces_dir(self.root, self.project_id, self.agent_id)

    @property
    def project_config_path(self) -> Path:
        return paths.project_config_path(self.root, self.project_id)

    def load_system_config(self) -> SystemConfig:
        return load_system_config(paths.system_config_path(self.root, self.project_id, self.agent_id))

    def load_project_config(self) -> ProjectConfig:
        return load_project_config(self.root, self.project_id)

    def new_temp_workspace(self) -> Path:
        return paths.new_temp_workspace(self.root, self.project_id, self.agent_id)

    def sibling(self, agent_id: str) -> Agent | None:
        """Another agent of this project whose state exists (a subagent's `agent_id`), or None
        when the id breaks the id rule or no such agent was ever created. Creates nothing."""
        if not is_valid_id(agent_id):
            return None
        if not paths.system_config_path(self.root, self.project_id, agent_id).is_file():
            return None
        sibling = Agent(agent_id, project_id=self.project_id, root=self.root)
        sibling.sandbox_grants = self.sandbox_grants
        return sibling

    def redactor(self, workspace_dir: str | os.PathLike[str] | None = None) -> Redactor:
        """Every configured secret (model api_keys, provider and credential variables of the
        environment and of `<workspace_dir>/.env`, vault values), for redaction (docs/security.md).
        A config or vault that cannot be read contributes nothing here (it fails where it is used)."""
        try:
            cfg: ProjectConfig | None = self.load_project_config()
        except (ConfigError, UnsafePathError):
            cfg = None
        try:
            vault = load_vault(paths.vault_path(self.root, self.project_id, self.agent_id))
        except (ConfigError, UnsafePathError):
            vault = {}
        return collect_secrets(config=cfg, vault=vault, workspace=workspace_dir)

    # --- model selection -----------------------------------------------------------------------

    def resolve_model(
        self, provider: str | None, model_id: str | None, *, keys: Mapping[str, str] | None = None
    ) -> ModelEntry:
        """The configured entry for the pair, or the project default when both are None — and when
        the project names no model at all, the model a provider's key selects (`key_model`; `keys`
        are the workspace `.env`'s model keys). A model the administrator's policy does not allow
        raises `PolicyRefusal` (one line)."""
        entry = self._resolve_model(provider, model_id, keys)
        policy = load_policy()
        if policy is not None:
            policy.check_model(entry.provider, entry.model_id)
        return entry

    def key_model(self, keys: Mapping[str, str] | None = None) -> KeyModel | None:
        """The model a provider's API key selects (state/key_models.py) when the project config
        names none (no default, no models); None otherwise or when no key is set."""
        cfg = self.load_project_config()
        if cfg.default_model is not None or cfg.models:
            return None
        return model_for_keys(keys)

    def _resolve_model(
        self, provider: str | None, model_id: str | None, keys: Mapping[str, str] | None = None
    ) -> ModelEntry:
        if (provider is None) != (model_id is None):
            given = f"provider={provider!r}" if provider is not None else f"model_id={model_id!r}"
            raise ValueError(f"provider and model_id must be given together (got only {given})")
        cfg = self.load_project_config()
        if provider is not None and model_id is not None:
            entry = cfg.get_model(provider, model_id) or catalogue_entry(provider, model_id)
            if entry is None:
                known = ", ".join(f"{m.provider}/{m.model_id}" for m in cfg.models) or "none"
                raise NoModelConfiguredError(
                    f"Model (provider={provider}, model_id={model_id}) is not configured in "
                    f"{self.project_config_path} (configured: {known}), and agenthub's catalogue "
                    f"does not know model id {model_id!r}"
                )
            return entry
        if cfg.default_model is not None:
            entry = cfg.get_model(cfg.default_model.provider, cfg.default_model.model_id)
            if entry is None:
                raise NoModelConfiguredError(
                    f"default_model {cfg.default_model} in {self.project_config_path} is not in models; "
                    + HOW_TO_ADD_MODEL
                    + str(self.project_config_path)
                )
            return entry
        if cfg.models:
            return cfg.models[0]
        by_key = model_for_keys(keys)
        if by_key is not None:
            return by_key.entry
        raise NoModelConfiguredError(
            f"No model is configured for project {self.project_id!r} and no provider key is set "
            f"(OPENAI_API_KEY, ANTHROPIC_API_KEY, …): {HOW_TO_ADD_MODEL}{self.project_config_path}"
        )

    # --- sessions ------------------------------------------------------------------------------

    async def create_session(
        self,
        *,
        workspace_dir: str | os.PathLike[str],
        provider: str | None = None,
        model_id: str | None = None,
        extra_tools: Sequence[ExtraTool] | None = None,
        system_prompt_extra: str | None = None,
        source: str | None = None,
        credentials: CredentialSource | None = None,
    ) -> Session:
        """A new session in `workspace_dir` on the given model pair (or the project default).
        `credentials(workspace)` adds model keys for the model client only (never the environment)."""
        keys = credentials(_existing_workspace(workspace_dir)) if credentials is not None else {}
        return self._open_session(
            workspace_dir=workspace_dir,
            provider=provider,
            model_id=model_id,
            extra_tools=extra_tools,
            system_prompt_extra=system_prompt_extra,
            source=source,
            credentials=keys,
        )

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
    ) -> Session:
        """A subagent session (used by the SubagentRunner): `source: "subagent"`, no subagent
        tools once the depth cap is reached; `credentials` are its parent's model keys, `spend`
        its parent's budgets (its requests count in the parent's Task)."""
        return self._open_session(
            workspace_dir=workspace_dir,
            provider=provider,
            model_id=model_id,
            source="subagent",
            depth=depth,
            thinking_level=thinking_level,
            credentials=credentials or {},
            spend=spend,
        )

    def _open_session(
        self,
        *,
        workspace_dir: str | os.PathLike[str],
        provider: str | None,
        model_id: str | None,
        extra_tools: Sequence[ExtraTool] | None = None,
        system_prompt_extra: str | None = None,
        source: str | None = None,
        depth: int = 0,
        thinking_level: ThinkingLevelName | None = None,
        credentials: Mapping[str, str],
        spend: SpendMeter | None = None,
    ) -> Session:
        workspace = _existing_workspace(workspace_dir)
        ensure_agent_layout(self.root, self.project_id, self.agent_id)  # checked again: a sibling too
        entry = self.resolve_model(provider, model_id, keys=credentials)
        config = self.load_system_config()
        now = datetime.now()
        session_id = paths.new_session_id(now)
        prompt = self._system_prompt(config, entry, session_id, workspace)
        if system_prompt_extra:
            prompt = f"{prompt}\n\n{system_prompt_extra.strip()}"
        meta = session_meta(
            session_id=session_id,
            provider=entry.provider,
            model_id=entry.model_id,
            model_context_window=entry.context_window or "unknown",
            system_prompt=prompt,
            agent_state=str(self.agent_state_dir),
            workspace=workspace,
            source=source,
        )
        trace = TraceWriter(trace_file_path(self.traces_dir, session_id, now.date()))
        lock = self._lock_session(session_id)
        try:
            session = self._build_session(
                session_id,
                entry,
                config,
                workspace,
                prompt,
                meta,
                trace,
                extra_tools,
                replay=None,
                meta_recorded=False,
                depth=depth,
                thinking_level=thinking_level,
                credentials=credentials,
                spend=spend,
            )
        except BaseException:
            lock.release()
            raise
        session.hold_lock(lock)
        return session

    async def resume_session(
        self,
        session_id: str,
        *,
        extra_tools: Sequence[ExtraTool] | None = None,
        system_prompt_extra: str | None = None,
        credentials: CredentialSource | None = None,
    ) -> Session:
        """Continue a recorded session from its latest Trace shard (docs/traces.md "Resume").

        `extra_tools` and `credentials` (called with the recorded workspace) are used as on
        creation. `system_prompt_extra` is accepted for symmetry with `create_session` and
        ignored: the recorded system prompt is reused verbatim.
        """
        del system_prompt_extra
        self._locate_or_fail(session_id)  # a missing session is reported before anything is created
        ensure_agent_layout(self.root, self.project_id, self.agent_id)  # still private, or refused
        lock = self._lock_session(session_id)  # one writer per session: refused if open elsewhere
        try:
            session = self._resume_locked(session_id, extra_tools, credentials)
        except BaseException:
            lock.release()
            raise
        session.hold_lock(lock)
        return session

    def _locate_or_fail(self, session_id: str) -> TraceFile:
        located = find_latest_trace_file(self.traces_dir, session_id)
        if located is None:
            raise ValueError(
                f"Session does not exist: {session_id} (no matching Trace file found under {self.traces_dir})."
            )
        return located

    def _lock_session(self, session_id: str) -> SessionLock:
        """The session's run lock (docs/concurrency.md), in its directory under the data root."""
        session_dir = paths.session_scratchpad_dir(self.root, self.project_id, self.agent_id, session_id)
        return SessionLock.acquire(session_dir, session_id)

    def _resume_locked(
        self, session_id: str, extra_tools: Sequence[ExtraTool] | None, credentials: CredentialSource | None
    ) -> Session:
        """Resume under the session lock: the trace is read only once nobody else can write it."""
        located = self._locate_or_fail(session_id)
        records = read_trace(located.path)
        replay = resume_trace(records)
        if replay.notes:
            log.warning("%s", replay_notes_diagnostic(str(located.path), replay.notes))
        if replay.meta is None:
            raise ValueError(
                f"Cannot resume {session_id}: its Trace has no session_meta record ({located.path})."
            )
        meta = payload_as(replay.meta, SessionMetaPayload)
        if meta is None or not meta.provider:
            raise ValueError(
                f"Cannot resume {session_id}: its Trace was written by an older version "
                "(session_meta has no provider); start a new session."
            )
        workspace = meta.workspace
        if not Path(workspace).is_dir():
            raise ValueError(
                f"The original Session's Workspace no longer exists: {workspace}; cannot resume."
            )
        entry = self.resolve_model(meta.provider, meta.model_id)
        config = self.load_system_config()
        trace = TraceWriter(located.path)
        if replay.dangling_compaction is not None:
            dangling = replay.dangling_compaction
            trace.write(compaction_end(dangling.reason, dangling.mode, "failed"))
        return self._build_session(
            session_id,
            entry,
            config,
            workspace,
            meta.system_prompt,
            replay.meta,
            trace,
            extra_tools,
            replay=replay,
            meta_recorded=True,
            depth=1 if meta.source == "subagent" else 0,
            credentials=credentials(workspace) if credentials is not None else {},
        )

    def list_sessions(self) -> list[SessionInfo]:
        """Every recorded session of this agent, newest first (from each latest shard)."""
        infos: list[SessionInfo] = []
        redactor = self.redactor()
        for file in list_session_files(self.traces_dir):
            try:
                records = read_trace(file.path)
            except OSError:
                continue
            meta = next((p for m in records if (p := payload_as(m, SessionMetaPayload)) is not None), None)
            infos.append(
                SessionInfo(
                    session_id=file.session_id,
                    trace_path=file.path,
                    date=file.date_dir,
                    provider=meta.provider if meta is not None else None,
                    model_id=meta.model_id if meta is not None else None,
                    workspace=meta.workspace if meta is not None else None,
                    records=len(records),
                    first_prompt=redactor.value(_first_prompt(records)),
                )
            )
        return infos

    def has_session(self, session_id: str) -> bool:
        """Whether this agent recorded `session_id` (a trace file names it); reads no trace."""
        return find_latest_trace_file(self.traces_dir, session_id) is not None

    def latest_session_id(self) -> str | None:
        return latest_session_id(self.traces_dir)

    # --- assembly ------------------------------------------------------------------------------

    def _system_prompt(self, config: SystemConfig, entry: ModelEntry, session_id: str, workspace: str) -> str:
        agents_md = paths.agents_md_path(self.root, self.project_id, self.agent_id)
        vault = load_vault(paths.vault_path(self.root, self.project_id, self.agent_id))
        ctx = PromptContext(
            agent_id=self.agent_id,
            project_dir=str(paths.project_dir(self.root, self.project_id)),
            session_id=session_id,
            cwd=workspace,
            provider=entry.provider,
            model_id=entry.model_id,
            agents_md=read_private_text(agents_md) if os.path.lexists(agents_md) else "",
            vault_keys=tuple(sorted(vault)),
            skills=tuple(list_skills(paths.skills_dir(self.root, self.project_id, self.agent_id))),
            today=date.today(),
        )
        return assemble_system_prompt(config, ctx)

    def _thinking_level(self, config: SystemConfig) -> ThinkingLevelName:
        project_level = self.load_project_config().default_chat.get("thinking_level")
        level = config.thinking_level or project_level or _DEFAULT_THINKING_LEVEL
        # GenerativeModelConfig refuses a level outside THINKING_LEVELS with one line naming it.
        return cast(ThinkingLevelName, level)

    def _vision_service(self, credentials: Mapping[str, str], spend: SpendMeter) -> VisionDescriberService:
        cfg = self.load_project_config()
        ref = cfg.vision_model
        entry = cfg.get_model(ref.provider, ref.model_id) if ref is not None else None
        if entry is None:
            return VisionDescriberService(model_id=None)
        base = _model_config(
            entry,
            system_prompt=None,
            max_tokens=None,
            thinking_level=None,
            timeout_ms=120000,
            credentials=credentials,
        )
        base.price, base.spend_gate = _price(entry, self._spend_policy_cap()), spend
        return VisionDescriberService(
            model_id=entry.model_id, create_llm=lambda: GenerativeModel(vision_model_config(base))
        )

    def _build_session(
        self,
        session_id: str,
        entry: ModelEntry,
        config: SystemConfig,
        workspace: str,
        prompt: str,
        meta: OmniMessage,
        trace: TraceWriter,
        extra_tools: Sequence[ExtraTool] | None,
        *,
        replay: ReplayState | None,
        meta_recorded: bool,
        depth: int = 0,
        thinking_level: ThinkingLevelName | None = None,
        credentials: Mapping[str, str],
        spend: SpendMeter | None = None,
    ) -> Session:
        level = thinking_level or self._thinking_level(config)
        builtin = config.builtin_tools
        runner = None
        policy = load_policy()
        disabled = policy.disabled_tools if policy is not None else frozenset()
        if depth >= MAX_SUBAGENT_DEPTH:
            disabled = disabled | frozenset(SUBAGENT_TOOL_NAMES)
        owns_spend = spend is None
        if spend is None:
            spend = self.spend_meter(replay.session_tokens if replay is not None else None, entry)
        if depth < MAX_SUBAGENT_DEPTH:
            runner = AgentSubagentRunner(
                ParentContext(self, entry.provider, entry.model_id, workspace, level, depth, credentials, spend)
            )

        vault = (
            load_vault(paths.vault_path(self.root, self.project_id, self.agent_id))
            if config.vault.enabled
            else {}
        )
        scratchpad = paths.session_scratchpad_dir(self.root, self.project_id, self.agent_id, session_id)
        redactor = self.redactor(workspace)
        trace.redactor = redactor
        cfg = self.load_project_config()
        sandbox = sandbox_config(cfg, str(self.project_config_path), policy, self.sandbox_grants)
        environment = Environment(
            EnvironmentConfig(
                workspace_dir=workspace,
                tool_config=ToolConfig(builtin=builtin, mcp_servers=config.mcp_servers),
                session_scratchpad_dir=str(scratchpad),
                services=EnvironmentServices(
                    subagent_runner=runner,
                    vision_describer=self._vision_service(credentials, spend),
                    extra={SANDBOX_KEY: sandbox},
                ),
                vault=vault or None,
                extra_tools=list(extra_tools or []),
                model_class="vision" if entry.is_vision else "text-only",
                redactor=redactor,
                disabled_tools=disabled,  # never offered to the model (builtin, kernel, MCP alike)
            )
        )
        compaction = CompactionSettings(
            max_context_length=effective_context_threshold(
                config.compaction.max_context_length, entry.context_window
            ),
            max_session_turns=config.compaction.max_session_turns,
            mode=config.compaction.mode,  # type: ignore[arg-type]
            prompt=config.compaction.prompt,
        )
        model_config = _model_config(
            entry,
            system_prompt=prompt,
            max_tokens=entry.max_tokens or config.max_tokens,
            thinking_level=level,
            timeout_ms=config.request_timeout_ms,
            connect_timeout_ms=config.connect_timeout_ms,
            answer_budget_ms=config.answer_budget_ms,
            credentials=credentials,
        )
        model_config.tool_call_ids = ToolCallIdAllocator()
        model_config.price, model_config.spend_gate = _price(entry, policy.max_usd_per_day if policy else None), spend
        return Session(
            SessionSetup(
                session_id=session_id,
                provider=entry.provider,
                model_id=entry.model_id,
                workspace_dir=workspace,
                scratchpad_dir=scratchpad,
                trace=trace,
                meta=meta,
                model_config=model_config,
                environment=environment,
                vision=entry.is_vision,
                max_turns=config.max_turns,
                compaction=compaction,
                mcp_server_names=[s.name for s in config.mcp_servers],
                command_policy=cfg.command_policy,
                redactor=redactor,
                replay=replay,
                meta_recorded=meta_recorded,
                spend=spend,
                owns_spend=owns_spend,
            )
        )

    def _spend_policy_cap(self) -> float | None:
        policy = load_policy()
        return policy.max_usd_per_day if policy is not None else None

    def spend_meter(self, session_tokens: TokenCounts | None = None, entry: ModelEntry | None = None) -> SpendMeter:
        """A new session's budgets (docs/cost.md): the project's per-session and per-day
        budgets and the administrator's daily cap, with today's ledger under this data root; a
        resumed session's spend so far is its trace's token counts at the model's price."""
        cfg = self.load_project_config()
        policy = load_policy()
        cap = policy.max_usd_per_day if policy is not None else None
        meter = SpendMeter(
            self.root,
            Budgets(
                session_usd=cfg.budget_usd_per_session,
                day_usd=cfg.budget_usd_per_day,
                policy_day_usd=cap,
                config_source=str(self.project_config_path),
                policy_source=f"max_usd_per_day in {policy.path}" if policy is not None else "",
            ),
        )
        price = _price(entry, cap) if entry is not None else None
        price = price or (list_price(entry.model_id) if entry is not None else None)
        if session_tokens is not None and price is not None:
            meter.session.usd = cost_usd(session_tokens, price)
        return meter


def _model_config(
    entry: ModelEntry,
    *,
    system_prompt: str | None,
    max_tokens: int | None,
    thinking_level: ThinkingLevelName | None,
    timeout_ms: int,
    connect_timeout_ms: int | None = None,
    answer_budget_ms: int | None = None,
    credentials: Mapping[str, str] | None = None,
) -> GenerativeModelConfig:
    """The model config of a project model entry; limits left None keep the model's defaults."""
    return GenerativeModelConfig(
        model_id=entry.model_id,
        api_key=entry.resolved_api_key(),
        base_url=entry.resolved_base_url(),
        client_type=entry.client_type,
        system_prompt=system_prompt,
        context_window=entry.context_window,
        max_tokens=max_tokens,
        thinking_level=thinking_level,
        request_timeout_ms=timeout_ms,
        fast_mode=entry.fast_mode is True,
        connect_timeout_ms=DEFAULT_CONNECT_TIMEOUT_MS if connect_timeout_ms is None else connect_timeout_ms,
        answer_budget_ms=DEFAULT_ANSWER_BUDGET_MS if answer_budget_ms is None else answer_budget_ms,
        credentials=dict(credentials or {}),
    )


def _price(entry: ModelEntry, policy_cap_usd: float | None) -> ModelPrice | None:
    """The price a model entry is charged at: its own `price` table, except that under an
    administrator's daily cap a model with a list price is charged at the list price (a user's
    own table cannot lower what the cap counts). None: the model's list price, if any."""
    if entry.price is None or (policy_cap_usd is not None and list_price(entry.model_id) is not None):
        return None
    return entry.price


def _existing_workspace(workspace_dir: str | os.PathLike[str]) -> str:
    path = Path(workspace_dir).expanduser()
    if not path.is_dir():
        raise ValueError(f"Workspace does not exist or is not a directory: {path}")
    return str(path.resolve())


def _first_prompt(records: list[OmniMessage]) -> str | None:
    for msg in records:
        payload = msg.payload
        if isinstance(payload, TextPayload) and payload.role == "user" and payload.sender is None:
            return payload.text
    return None
