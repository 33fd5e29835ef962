"""The notebook's current Session and its per-kernel settings.

Owns which Session a cell talks to: the Agent (created once per kernel), the current Session
(continued across cells), `--new` / `--session` / `%penguin new|resume|model|approve`, the
per-session "always allow" sets, the last token usage and the subagents' `session_meta` (so a
background subagent's card names its model in a later cell). Creating and resuming sessions is the
Agent's job; turning a start failure into the "configure a model" paragraph happens here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..state.dotenv import load_dotenv
from .options import CellOptions

MAX_SUBAGENT_METAS = 64

NO_MODEL_PARAGRAPH = (
    "penguin: could not start a session ({reason}), so nothing was run. To configure a model, edit "
    "the project config "
    "{config_path} (PENGUIN_HOME, default ~/.penguin/data): add a [[models]] entry with provider, "
    "model_id and, for a custom endpoint, base_url and api_key — or from Python: "
    'penguin_jupyter.state.add_model(None, "default_project", provider="openai", model_id="gpt-4.1", '
    "default=True). Credentials may also come from provider environment variables (OPENAI_API_KEY, "
    "ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY, …) or a .env file in the workspace. Then pick "
    "a model with `%%penguin --model PROVIDER/MODEL_ID` or `%penguin model PROVIDER/MODEL_ID`; "
    "`%penguin models` lists what is configured."
)


class SessionStartError(Exception):
    """A session could not be created or resumed; `str()` is the paragraph to show."""


def config_path_text() -> str:
    from ..state import paths

    return str(paths.project_config_path(paths.resolve_root(None), paths.DEFAULT_PROJECT_ID))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text


@dataclass
class NotebookSessions:
    """Per-kernel state; `shell` is the IPython shell (its namespace feeds the kernel tools)."""

    shell: Any = None
    approval_mode: str = "ask"
    model: tuple[str, str] | None = None
    start_new: bool = False
    resume_id: str | None = None
    agent: Any = None
    session: Any = None
    always_allowed: dict[str, set[str]] = field(default_factory=dict)
    last_usage: Any = None
    python_timeout_s: float | None = None  # `%penguin python-timeout`; None = the tool's default
    cell_python_timeout_s: float | None = None  # the running cell's `--python-timeout`
    subagent_metas: dict[str, Any] = field(default_factory=dict)
    active_approver: Any = None  # the running cell's NotebookApprover (background children ask it)

    def remember_subagent_meta(self, hop: str, meta: Any) -> None:
        """Keep a subagent's origin-tagged session_meta (the newest `MAX_SUBAGENT_METAS`)."""
        self.subagent_metas.pop(hop, None)
        self.subagent_metas[hop] = meta
        while len(self.subagent_metas) > MAX_SUBAGENT_METAS:
            self.subagent_metas.pop(next(iter(self.subagent_metas)))

    async def get_agent(self) -> Any:
        if self.agent is None:
            from ..agent import create_agent

            self.agent = await create_agent()
        return self.agent

    def allowed_for(self, session: Any) -> set[str]:
        return self.always_allowed.setdefault(str(getattr(session, "session_id", "")), set())

    def python_timeout_ms(self) -> int:
        """run_python's timeout now: the cell's option, else the kernel's, else the tool default."""
        from .kernel_tools.run_python import DEFINITION, seconds_to_ms

        seconds = self.cell_python_timeout_s
        if seconds is None:
            seconds = self.python_timeout_s
        return DEFINITION.timeout_ms if seconds is None else seconds_to_ms(seconds)

    def _kernel_tool_kwargs(self) -> dict[str, Any]:
        """The kernel tools and the notebook prompt note, when running inside a kernel."""
        if self.shell is None:
            return {}
        from .kernel_tools import kernel_tools, notebook_prompt
        from .kernel_tools.notebook_cells import notebook_tools, notebook_tools_prompt
        from .notebook_link import link_of

        link = link_of(self.shell)
        prompt = "\n\n".join(p for p in (notebook_prompt(self.shell.user_ns), notebook_tools_prompt(link)) if p)
        return {
            "extra_tools": kernel_tools(self.shell, self.python_timeout_ms) + notebook_tools(link),
            "system_prompt_extra": prompt,
        }

    def drop_session(self) -> None:
        if self.session is not None:
            try:
                self.session.dispose()
            except Exception:
                pass
        self.session = None

    def choose_model(self, pair: tuple[str, str]) -> None:
        """`%penguin model`: new sessions use `pair`; the next cell switches if the current differs."""
        self.model = pair
        current = self.session
        if current is not None and (current.provider, current.model_id) != pair:
            self.start_new = True

    async def session_for(self, opts: CellOptions, workspace: str) -> Any:
        """The Session this cell runs in (created, resumed or continued); also takes the cell's
        run_python timeout, read by the kernel tools while the cell runs."""
        self.cell_python_timeout_s = opts.python_timeout_s
        resume_id = opts.session_id or (None if opts.new else self.resume_id)
        wanted_model = opts.model or self.model
        current = self.session
        if resume_id:
            if current is not None and str(current.session_id) == resume_id:
                self.resume_id = None
                return current
            return await self._start(resume_id=resume_id)
        if opts.new or self.start_new or current is None:
            return await self._start(workspace=workspace, model=wanted_model)
        if opts.workspace and str(current.workspace_dir) != workspace:
            return await self._start(workspace=workspace, model=wanted_model)
        if opts.model and (current.provider, current.model_id) != opts.model:
            return await self._start(workspace=workspace, model=wanted_model)
        return current

    async def _start(
        self,
        *,
        workspace: str | None = None,
        model: tuple[str, str] | None = None,
        resume_id: str | None = None,
    ) -> Any:
        from .notebook_link import link_of

        link = link_of(self.shell)
        if link is not None:
            await link.wait_for_frontend()  # the tools offered depend on the frontend's hello
        try:
            agent = await self.get_agent()
            if resume_id:
                session = await agent.resume_session(resume_id, **self._kernel_tool_kwargs())
            else:
                provider, model_id = model if model else (None, None)
                load_dotenv(workspace)
                session = await agent.create_session(
                    workspace_dir=workspace,
                    provider=provider,
                    model_id=model_id,
                    **self._kernel_tool_kwargs(),
                )
        except Exception as exc:
            if resume_id:
                raise SessionStartError(
                    f"penguin: cannot resume session {resume_id}: {_one_line(exc)}"
                ) from None
            reason = _one_line(exc)
            if "model" not in reason.lower():
                raise SessionStartError(f"penguin: could not start a session: {reason}") from None
            raise SessionStartError(
                NO_MODEL_PARAGRAPH.format(config_path=config_path_text(), reason=reason)
            ) from None
        self.drop_session()
        self.session = session
        self.start_new = False
        self.resume_id = None
        return session
