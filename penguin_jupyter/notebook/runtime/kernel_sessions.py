"""The notebook's current Session and its per-kernel settings.

Owns which Session a cell talks to: the Agent (created once per kernel), the current Session
(continued across cells), `--new` / `--session` / `--model` / `--workspace`, what
`%penguin new|resume|model|approve|python-timeout` change, the per-session "always allow"
sets, the last token usage, the subagents' `session_meta` (so a background subagent's card
names its model in a later cell), and which model keys a folder's `.env` supplies to a new or
resumed Session (`model_credentials`, the one caller of `state.dotenv.workspace_credentials`)
with the one-line notice its first use queues for the cell; see
docs/security.md "A folder's `.env` is data".

Every switch is all-or-nothing: the new Session is created or resumed first and only then
replaces the current one, so a failure (unknown session id, unknown model, no model at all)
leaves the previous state exactly as it was and says so in one line. Creating and resuming
sessions is the Agent's job; settings of one cell live on the cell (`cell.py`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...environment.sandbox import HostRule, SandboxGrants
from ...environment.sandbox.enclosing import kernel_sandbox
from ...state.dotenv import DOTENV_NAME, workspace_credentials
from ...state.errors import NoModelConfiguredError

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ...agent import Agent
    from ...omni import OmniMessage
    from ...redaction import Redactor
    from ...session import Session
    from ..kernel_tools import SessionTools

MAX_SUBAGENT_METAS = 64

def no_model_text(workspace: str | None = None) -> str:
    """What a cell says when no model is configured and no provider key is set: the three ways
    on, the config path once (docs/state.md "A key is enough"). In a sandboxed kernel a `.env`
    next to the notebook is hidden like every credential file, so it is not offered — and if
    there is one, the text says why its key was not used."""
    export = "export OPENAI_API_KEY=… (or ANTHROPIC_API_KEY, GEMINI_API_KEY, …)"
    kernel = kernel_sandbox()
    if kernel is None or not kernel.confined:
        key = f"a provider key: {export}, or put it in a .env file next to the notebook"
    elif workspace is not None and os.path.lexists(os.path.join(workspace, DOTENV_NAME)):
        key = (
            f"a provider key exported before Jupyter starts: {export}; the .env next to this notebook "
            "is hidden from this sandboxed kernel, as every credential file is, so its key was not used"
        )
    else:
        key = (
            f"a provider key exported before Jupyter starts: {export}; a .env next to the notebook is "
            "hidden from this sandboxed kernel"
        )
    return (
        "penguin: no model yet, so nothing was run. Any one of these is enough:\n"
        f"  • {key}\n"
        "  • try it offline: %penguin demo (a scripted model, no key)\n"
        f"  • a model entry in {config_path_text()} (%penguin help)"
    )


class SessionStartError(Exception):
    """A session could not be created or resumed; `str()` is the text to show (state unchanged)."""


def config_path_text() -> str:
    from ...state import paths

    return str(paths.project_config_path(paths.resolve_root(None), paths.DEFAULT_PROJECT_ID))


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _unchanged(current: Session | None) -> str:
    return f"; still on session {current.session_id}" if current is not None else ""


def default_python_timeout_ms() -> int:
    from ..kernel_tools.run_python import DEFINITION

    return DEFINITION.timeout_ms


@dataclass
class NotebookSessions:
    """Per-kernel session state; `shell` is the IPython shell (its namespace feeds the kernel
    tools), `python_timeout_ms` the run_python limit in force (the runtime's: cell, else kernel)."""

    shell: InteractiveShell | None = None
    python_timeout_ms: Callable[[], int] = default_python_timeout_ms
    approval_mode: str = "ask"
    model: tuple[str, str] | None = None
    agent: Agent | None = None
    session: Session | None = None
    always_allowed: dict[str, set[str]] = field(default_factory=dict)
    last_usage: OmniMessage | None = None
    python_timeout_s: float | None = None  # `%penguin python-timeout`; None = the tool's default
    budget_usd: float | None = None  # `%penguin budget`: each following cell's Task cap; None = none
    subagent_metas: dict[str, OmniMessage] = field(default_factory=dict)
    dotenv_announced: set[str] = field(default_factory=set)  # `.env` files a cell has named
    # path → (line not shown yet, whether it is a problem: the file could not be read)
    dotenv_notices: dict[str, tuple[str, bool]] = field(default_factory=dict)
    start_notes: list[str] = field(default_factory=list)  # e.g. the model a key selected
    # how each allowed command runs, from the approval router to the spawn (environment/sandbox/)
    sandbox_grants: SandboxGrants = field(default_factory=SandboxGrants)
    sandbox_announced: set[str] = field(default_factory=set)  # "no sandbox here" lines shown once

    def sandbox_hosts(self) -> tuple[HostRule, ...]:
        """The project's `[sandbox] allowed_hosts` (what a card need not ask for)."""
        from ...state.sandbox_settings import allowed_hosts

        if self.agent is None:
            return ()
        return allowed_hosts(self.agent.load_project_config(), str(self.agent.project_config_path))

    def model_credentials(self, workspace: str) -> Mapping[str, str]:
        """The model keys of the workspace's `.env` for the model client (never the kernel's
        environment); the first use of each `.env` queues its one-line notice for the cell. The
        administrator's policy may turn `.env` off (`read_dotenv = false`: `dotenv.read_dotenv`)."""
        found = workspace_credentials(workspace)
        notice = found.notice()
        if notice is not None and found.path is not None and str(found.path) not in self.dotenv_announced:
            self.dotenv_notices[str(found.path)] = (notice, found.error is not None)
        return found.keys

    def take_dotenv_notices(self) -> list[tuple[str, bool]]:
        """The notices queued since the last call, each with whether it is a problem (the file
        could not be read) rather than information; each `.env` is announced once per kernel."""
        notices = list(self.dotenv_notices.values())
        self.dotenv_announced.update(self.dotenv_notices)
        self.dotenv_notices.clear()
        return notices

    def remember_subagent_meta(self, hop: str, meta: OmniMessage) -> None:
        """Keep a subagent's origin-tagged session_meta (the newest `MAX_SUBAGENT_METAS`)."""
        self.subagent_metas.pop(hop, None)
        self.subagent_metas[hop] = meta
        while len(self.subagent_metas) > MAX_SUBAGENT_METAS:
            self.subagent_metas.pop(next(iter(self.subagent_metas)))

    async def get_agent(self) -> Agent:
        if self.agent is None:
            from ...agent import create_agent

            self.agent = await create_agent()
            self.agent.sandbox_grants = self.sandbox_grants
        return self.agent

    def redactor_for(self, workspace: str) -> Redactor:
        """The secrets a cell's output is redacted with when no Task runs (a replayed transcript):
        the current Session's; else the agent's configured ones, read without creating anything;
        else the environment's."""
        if self.session is not None:
            return self.session.redactor
        from ...agent import Agent
        from ...state import paths
        from ...state.secrets import collect_secrets

        try:
            agent = self.agent or Agent(
                paths.DEFAULT_AGENT_ID, project_id=paths.DEFAULT_PROJECT_ID, root=paths.resolve_root(None)
            )
            return agent.redactor(workspace)
        except Exception:  # an unreadable data root: redact what the environment configures
            return collect_secrets(workspace=workspace)

    def allowed_for(self, session: Session) -> set[str]:
        return self.always_allowed.setdefault(str(session.session_id), set())

    def drop_session(self) -> None:
        if self.session is not None:
            try:
                self.session.dispose()
            except Exception:  # dispose never throws: the old session is dropped either way
                pass
            from ..undo.undo_stack import undo_stack

            stack = undo_stack(self.shell)
            if stack is not None:  # the session's undo journal goes with it (docs/undo.md)
                stack.session_disposed(str(self.session.session_id))
        self.session = None

    # --- switches: the new Session first, then the swap -------------------------------------------

    async def start_new(self, workspace: str, model: tuple[str, str] | None) -> Session:
        """A new Session becomes the current one; SessionStartError leaves everything as it was."""
        provider, model_id = model if model else (None, None)
        try:
            kernel = await self._kernel_tools()
            agent = await self.get_agent()
            session = await agent.create_session(
                workspace_dir=workspace,
                provider=provider,
                model_id=model_id,
                credentials=self.model_credentials,
                **kernel,
            )
        except NoModelConfiguredError as exc:
            if provider is not None:  # the pair asked for is unknown: say which
                raise SessionStartError(
                    f"penguin: could not start a session: {one_line(exc)}{_unchanged(self.session)}"
                ) from None
            raise SessionStartError(no_model_text(workspace)) from None
        except Exception as exc:
            raise SessionStartError(
                f"penguin: could not start a session: {one_line(exc)}{_unchanged(self.session)}"
            ) from None
        if provider is None:
            self._announce_key_model(agent, session, workspace)
        self._swap(session)
        return session

    def _announce_key_model(self, agent: Agent, session: Session, workspace: str) -> None:
        """The one info line naming the model a provider's key selected (no model configured)."""
        chosen = agent.key_model(self.model_credentials(workspace))
        if chosen is not None and (session.provider, session.model_id) == (
            chosen.entry.provider,
            chosen.entry.model_id,
        ):
            self.start_notes.append(chosen.describe())

    def take_start_notes(self) -> list[str]:
        """The information lines queued by the last session start (shown by the next cell)."""
        notes, self.start_notes = self.start_notes, []
        return notes

    async def has_session(self, session_id: str) -> bool:
        """Whether this kernel's data root holds `session_id` (False when the agent cannot open)."""
        try:
            agent = await self.get_agent()
            return agent.has_session(session_id)
        except Exception:  # an unreadable data root: no such session
            return False

    async def resume(self, session_id: str) -> Session:
        """Session `session_id` becomes the current one; SessionStartError leaves everything as it was."""
        try:
            kernel = await self._kernel_tools()
            agent = await self.get_agent()
            session = await agent.resume_session(session_id, credentials=self.model_credentials, **kernel)
        except Exception as exc:
            raise SessionStartError(
                f"penguin: cannot resume session {session_id}: {one_line(exc)}{_unchanged(self.session)}"
            ) from None
        self._swap(session)
        return session

    async def choose_model(self, pair: tuple[str, str], workspace: str) -> Session | None:
        """`%penguin model`: new sessions use `pair`. A current Session on another model is
        replaced now by a new one on `pair` (in its workspace); without one, the pair is checked
        against the configuration. SessionStartError leaves everything as it was."""
        current = self.session
        if current is not None and (current.provider, current.model_id) == pair:
            self.model = pair
            return current
        if current is not None:
            session = await self.start_new(str(current.workspace_dir), pair)
            self.model = pair
            return session
        try:
            agent = await self.get_agent()
            agent.resolve_model(*pair)
        except Exception as exc:
            raise SessionStartError(
                f"penguin: cannot use model {pair[0]}/{pair[1]}: {one_line(exc)}"
            ) from None
        self.model = pair
        return None

    def _swap(self, session: Session) -> None:
        if session is not self.session:
            self.drop_session()
        self.session = session

    async def _kernel_tools(self) -> SessionTools:
        """What a session started here gets from the kernel: its tools and the notebook note."""
        from ..kernel_tools import session_tools

        return await session_tools(self.shell, self.python_timeout_ms)
