"""`%penguin <command>`: one handler per command in `HANDLERS`, and their printed text.

Owns what each command prints and does: status, new, sessions, resume, model, models, approve,
python-timeout, compact, usage, trace, config (with the administrator's policy), rules (the
approval rules in force; `rules forget N`), undo (the journals are notebook/undo/'s), demo (the
offline scripted model, notebook/demo.py), help.
Parsing is `options.py`'s; the session switches (all-or-nothing: a failed `new` / `resume` / `model`
leaves everything as it was) are
`kernel_sessions.py`'s.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from ...omni import CompactionEndPayload, OmniMessage, TokenUsagePayload
from ...prices import format_usd
from ...state.admin_policy import FIXED_NOTE, POLICY_ENV, load_policy, policy_path
from ...state.errors import ConfigError
from ..link.notebook_place import page_hello
from .cell_rules import ForgetError, cell_rules, forget, listing
from .kernel_runtime import KernelRuntime, kernel_runtime
from .kernel_sessions import NotebookSessions, SessionStartError, config_path_text, one_line
from .options import (
    CELL_USAGE,
    LINE_COMMANDS,
    OptionError,
    parse_budget,
    parse_line_command,
    parse_model_pair,
    parse_python_timeout,
    timeout_text,
)
from .spend_report import spend_lines
from .user_lines import tell
from .workspace import resolve_workspace

if TYPE_CHECKING:
    from ...session import Session

Handler = Callable[[KernelRuntime, str | None], Awaitable[None]]


def help_text() -> str:
    width = max(len(key) for key in LINE_COMMANDS)
    lines = ["%penguin commands:"] + [f"  {key.ljust(width)}  {text}" for key, text in LINE_COMMANDS.items()]
    lines += ["", "%%penguin runs the cell body as one task of the notebook's session:", CELL_USAGE]
    lines += [
        "",
        "No model yet? `%penguin demo` tries it offline (no key); one provider key — exported or in a "
        ".env next to the notebook (OPENAI_API_KEY, ANTHROPIC_API_KEY, …) — is enough for a real model "
        "(%penguin models shows which).",
    ]
    return "\n".join(lines)


def _compaction_summary(result: list[OmniMessage]) -> str:
    """One line from what `session.compact()` returned (its messages)."""
    ends = [m.payload for m in result if isinstance(m.payload, CompactionEndPayload)]
    if not ends:
        return "penguin: nothing to compact"
    end = ends[-1]
    detail = f": {end.error_message}" if end.error_message else ""
    return f"penguin: compaction {end.status} ({end.mode}){detail}"


def _describe_session(item: Mapping[str, object] | object) -> str:
    """`<id>  <date>  <provider/model>  <workspace>  — <first prompt>` from a SessionInfo."""

    def get(key: str) -> object:
        return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)

    parts = [str(get("session_id") or item)]
    if get("date"):
        parts.append(str(get("date")))
    if get("provider") and get("model_id"):
        parts.append(f"{get('provider')}/{get('model_id')}")
    if get("workspace"):
        parts.append(str(get("workspace")))
    prompt = " ".join(str(get("first_prompt") or "").split())
    line = "  ".join(parts)
    return f"{line}  — {prompt[:60]}{'…' if len(prompt) > 60 else ''}" if prompt else line


def _status_lines(state: NotebookSessions) -> list[str]:
    lines = [f"approval mode: {state.approval_mode}"]
    if state.python_timeout_s is not None:
        lines.append(f"run_python time limit: {timeout_text(state.python_timeout_s)}")
    if state.model:
        lines.append(f"model for new sessions: {state.model[0]}/{state.model[1]}")
    session = state.session
    if session is None:
        return [*lines, "session: none yet (the next %%penguin cell starts one)"]
    return [
        *lines,
        f"session: {session.session_id}",
        f"model: {session.provider}/{session.model_id}",
        f"workspace: {session.workspace_dir}",
        f"trace: {session.trace_path}",
        _recording_line(session),
    ]


def _recording_line(session: Session) -> str:
    error = session.recording_error
    if error and not session.recording:
        return f"recording: off — {error}"
    if error:
        return f"recording: on again, some records were lost — {error}"
    return "recording: on"


def _default_workspace(runtime: KernelRuntime) -> str:
    current = runtime.sessions.session
    if current is not None:
        return str(current.workspace_dir)
    shell = runtime.shell
    return resolve_workspace(None, shell.user_ns if shell is not None else {}, hello=page_hello(shell))


# --- handlers -------------------------------------------------------------------------------------


async def _help(runtime: KernelRuntime, arg: str | None) -> None:
    print(help_text())


async def _status(runtime: KernelRuntime, arg: str | None) -> None:
    from ...seams import status_lines

    seams = [f"  {line}" for line in status_lines()]
    text = "\n".join([*_status_lines(runtime.sessions), "seams (docs/seams.md):", *seams])
    # redacted here too: status runs even when the kernel's sink cannot redact (UNREDACTED_COMMANDS)
    print(runtime.sessions.redactor_for(_default_workspace(runtime)).text(text))


async def _new(runtime: KernelRuntime, arg: str | None) -> None:
    state = runtime.sessions
    try:
        session = await state.start_new(_default_workspace(runtime), state.model)
    except SessionStartError as exc:
        tell(str(exc))
        return
    for note in state.take_start_notes():
        print(note)
    print(f"penguin: new session {session.session_id} — the next %%penguin cell runs in it")


async def _resume(runtime: KernelRuntime, arg: str | None) -> None:
    session_id = arg or ""
    try:
        await runtime.sessions.resume(session_id)
    except SessionStartError as exc:
        tell(str(exc))
        return
    print(f"penguin: the next %%penguin cell continues session {session_id}")


async def _model(runtime: KernelRuntime, arg: str | None) -> None:
    provider, model_id = parse_model_pair(arg or "")
    try:
        switched = await runtime.sessions.choose_model((provider, model_id), _default_workspace(runtime))
    except SessionStartError as exc:
        tell(str(exc))
        return
    where = f"; session {switched.session_id} uses it" if switched is not None else " (from the next cell)"
    print(f"penguin: new sessions use {provider}/{model_id}{where}")


async def _approve(runtime: KernelRuntime, arg: str | None) -> None:
    runtime.sessions.approval_mode = arg or "ask"
    print(f"penguin: approval mode is now {runtime.sessions.approval_mode}")
    try:
        policy = load_policy()
    except ConfigError as exc:
        tell(f"penguin: administrator's policy: {exc}")
        return
    note = policy.capped_note(runtime.sessions.approval_mode) if policy is not None else None
    if note:
        tell(note)


async def _rules(runtime: KernelRuntime, arg: str | None) -> None:
    """`%penguin rules` lists the rules in force (numbered, each with its file); `forget N`."""
    try:
        rules = cell_rules(_default_workspace(runtime))
    except ConfigError as exc:
        tell(f"penguin: {exc}")
        return
    state = runtime.sessions
    session_tools = state.allowed_for(state.session) if state.session is not None else set()
    if arg is None:
        for note in rules.notes:
            tell(note)
        print("\n".join(listing(rules.book, session_tools)))
        return
    try:
        print(forget(rules.book, session_tools, int(arg)))
    except ForgetError as exc:
        tell(str(exc))


async def _python_timeout(runtime: KernelRuntime, arg: str | None) -> None:
    runtime.sessions.python_timeout_s = seconds = parse_python_timeout(arg or "")
    print(f"penguin: run_python time limit is now {timeout_text(seconds)}")


async def _sessions(runtime: KernelRuntime, arg: str | None) -> None:
    try:
        agent = await runtime.sessions.get_agent()
        listed = agent.list_sessions()
    except Exception as exc:  # a line command says what failed in one line, never a traceback
        tell(f"penguin: cannot list sessions: {exc}")
        return
    if not listed:
        print("penguin: no sessions yet")
    for item in listed:
        print(_describe_session(item))


async def _models(runtime: KernelRuntime, arg: str | None) -> None:
    from ...state import ConfigError, load_project_config, paths

    try:
        cfg = load_project_config(None, paths.DEFAULT_PROJECT_ID)
    except ConfigError as exc:
        tell(f"penguin: {exc}")
        return
    if not cfg.models:
        print(f"penguin: no models configured in {config_path_text()}")
        print(_key_models_text(runtime))
        return
    default = cfg.default_model
    for entry in cfg.models:
        is_default = default is not None and (default.provider, default.model_id) == (
            entry.provider,
            entry.model_id,
        )
        endpoint = f"  {entry.base_url}" if entry.base_url else ""
        print(f"{entry.provider}/{entry.model_id}{' (default)' if is_default else ''}{endpoint}")


def _key_models_text(runtime: KernelRuntime) -> str:
    """Which model a provider's key selects (the first key set, in this order; docs/state.md)."""
    from ...state.key_models import KEY_MODELS, key_variable, model_for_keys

    state = runtime.sessions
    chosen = model_for_keys(state.model_credentials(_default_workspace(runtime)))
    lines = ["a provider key alone selects a model (the first key set, in this order):"]
    for provider, model_id in KEY_MODELS:
        variable = key_variable(provider)
        mark = ""
        if chosen is not None and chosen.variable == variable:
            mark = f"  ← in use: {variable} is set in {chosen.source}"
        lines.append(f"  {provider}/{model_id}  ({variable}){mark}")
    if chosen is None:
        lines.append("no key is set; %penguin demo tries it offline")
    return "\n".join(lines)


async def _compact(runtime: KernelRuntime, arg: str | None) -> None:
    session = runtime.sessions.session
    if session is None:
        print("penguin: no session yet — the next %%penguin cell starts one")
        return
    print(_compaction_summary(await session.compact()))


async def _usage(runtime: KernelRuntime, arg: str | None) -> None:
    usage = runtime.sessions.last_usage
    session = runtime.sessions.session
    if usage is None or not isinstance(usage.payload, TokenUsagePayload):
        print("penguin: no token usage yet in this session")
    else:
        s, r = usage.payload.session, usage.payload.request
        print(f"session: total {s.total}, input {s.cache_write}, cached input {s.cache_read}, output {s.output}")
        print(f"last request: total {r.total}, input {r.cache_write}, cached input {r.cache_read}, output {r.output}")
    meter = session.spend if session is not None else None
    if meter is None:  # no session yet: today's ledger and the budgets a new session would get
        try:
            meter = (await runtime.sessions.get_agent()).spend_meter()
        except Exception as exc:  # a line command says what failed in one line, never a traceback
            tell(f"penguin: cannot read today's spend: {exc}")
    for line in spend_lines(meter, runtime.sessions.budget_usd):
        print(line)


async def _budget(runtime: KernelRuntime, arg: str | None) -> None:
    if arg == "off":
        runtime.sessions.budget_usd = None
        print("penguin: no budget for the following cells (a cell's --budget still applies)")
        return
    runtime.sessions.budget_usd = usd = parse_budget(arg or "")
    print(f"penguin: each following cell's Task may spend at most {format_usd(usd)} on model requests")


async def _trace(runtime: KernelRuntime, arg: str | None) -> None:
    session = runtime.sessions.session
    if session is None:
        print("penguin: no session yet — the next %%penguin cell starts one")
        return
    print(session.trace_path)


async def _config(runtime: KernelRuntime, arg: str | None) -> None:
    from ...state import paths

    root = paths.resolve_root(None)
    source = "PENGUIN_HOME" if os.environ.get("PENGUIN_HOME") else "default ~/.penguin/data"
    print(f"data root: {root} ({source})")
    print(f"models and credentials: {config_path_text()}")
    try:
        policy = load_policy()
    except ConfigError as exc:
        tell(f"penguin: administrator's policy: {exc} (cells will not run until it is fixed)")
        return
    variables = "provider environment variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY, …)"
    if policy is None or policy.read_dotenv:
        print(
            f"also read: {variables} and, for keys not exported, the *_API_KEY names of the workspace's "
            ".env (nothing else from it; it never changes the kernel's environment)"
        )
    else:
        print(f"also read: {variables}; not the workspace's .env (the administrator's policy turns it off)")
    if policy is None:
        print(f"administrator's policy: none ({POLICY_ENV} unset and no {policy_path()[0]})")
        print(f"  {FIXED_NOTE}")
    else:
        print("\n".join(policy.describe()))
    print(_sandbox_line(runtime))


def _sandbox_line(runtime: KernelRuntime) -> str:
    """Whether `--approve auto` can sandbox commands here, and the hosts they may reach."""
    from ...environment.sandbox import sandbox_support

    support = sandbox_support()
    if not support.available:
        return f"sandbox: cannot start here ({support.reason}); --approve auto acts as ask"
    if support.kernel is not None:
        kernel = support.kernel
        browser = (
            "hardened"
            if kernel.browser_hardened
            else f"not hardened ({kernel.browser_open}): under auto, run_python and the notebook tools ask"
        )
        return (
            f"sandbox: this kernel runs in it, your own cells too (writes: {kernel.workspace} and /tmp; "
            f"network: {kernel.network_text()}); browser: {browser}"
        )
    try:
        hosts = ", ".join(rule.text() for rule in runtime.sessions.sandbox_hosts()) or "none"
    except Exception as exc:  # a line command says what failed in one line, never a traceback
        hosts = f"unreadable ({one_line(exc)})"
    return f"sandbox: available ({support.bwrap}); allowed hosts ([sandbox] allowed_hosts): {hosts}"


async def _undo(runtime: KernelRuntime, arg: str | None) -> None:
    """`%penguin undo [--task ID]`: one report line here, the transcript marked (docs/undo.md)."""
    from ..link.notebook_link import link_of
    from ..undo.undo_stack import NOTHING_TO_UNDO, UndoRefused, undo_stack

    stack = undo_stack(runtime.shell)
    if stack is None:
        tell(NOTHING_TO_UNDO)
        return
    try:
        task = stack.choose(arg)
    except UndoRefused as exc:
        tell(str(exc))
        return
    link = link_of(runtime.shell)
    bridge = link.bridge if link is not None else None
    namespace = runtime.shell.user_ns if runtime.shell is not None else {}
    line = await stack.undo(task, namespace, bridge, runtime.sessions.session)
    print(line)
    if task.transcript is not None:
        await task.transcript.mark("undone", line, bridge)
    top = stack.top()
    if top is not None and top.transcript is not None:
        await top.transcript.mark("available", "", bridge)


async def _demo(runtime: KernelRuntime, arg: str | None) -> None:
    """`%penguin demo`: the offline scripted model for this kernel; `%penguin demo stop` ends it."""
    from ..demo import start_demo_model, stop_demo_model

    if arg == "stop":
        stopped = stop_demo_model()
        print("penguin: demo stopped" if stopped else "penguin: no demo is running")
        return
    print(start_demo_model(_default_workspace(runtime)).usage())


# What still runs when the kernel's sink cannot redact: the help text, and status (which says why).
UNREDACTED_COMMANDS = ("help", "status")

HANDLERS: dict[str, Handler] = {
    "help": _help,
    "status": _status,
    "new": _new,
    "resume": _resume,
    "model": _model,
    "approve": _approve,
    "python-timeout": _python_timeout,
    "budget": _budget,
    "sessions": _sessions,
    "models": _models,
    "compact": _compact,
    "usage": _usage,
    "trace": _trace,
    "config": _config,
    "rules": _rules,
    "undo": _undo,
    "demo": _demo,
}


async def run_line(line: str) -> None:
    """What `%penguin …` executes (via the input transformer, so async commands can await)."""
    from .runner import current_shell

    try:
        command = parse_line_command(line)
    except OptionError as exc:
        tell(str(exc))
        return
    runtime = kernel_runtime(current_shell())
    from ..output.task_sink import SinkUnavailable, open_task

    # What a line command prints goes out through the kernel's sink like a Task's output
    # (docs/security.md "Threat model"): one redaction choke point for everything penguin shows.
    redactor = runtime.sessions.redactor_for(_default_workspace(runtime))
    try:
        sink = open_task(getattr(runtime.shell, "kernel", None), redactor)
    except SinkUnavailable as exc:  # fail closed: only what says why (and prints no path) runs
        tell(str(exc))
        if command.name not in UNREDACTED_COMMANDS:
            return
        sink = None
    try:
        await HANDLERS[command.name](runtime, command.arg)
    finally:
        if sink is not None:
            sink.close()
