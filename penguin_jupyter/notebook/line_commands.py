"""`%penguin <command>`: status, new, sessions, resume, model, models, approve, python-timeout,
compact, usage, trace, config, help (notebook-design.md §1).

Owns the command handlers and their printed text. Parsing lives in `options.py`; the session
bookkeeping in `kernel_sessions.py`.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Any

from .kernel_sessions import NotebookSessions, config_path_text
from .options import (
    CELL_USAGE,
    LINE_COMMANDS,
    OptionError,
    parse_line_command,
    parse_model_pair,
    parse_python_timeout,
    timeout_text,
)


def _current(state: NotebookSessions) -> Any:
    if state.session is None:
        print("penguin: no session yet — the next %%penguin cell starts one")
    return state.session


def help_text() -> str:
    width = max(len(key) for key in LINE_COMMANDS)
    lines = ["%penguin commands:"] + [f"  {key.ljust(width)}  {text}" for key, text in LINE_COMMANDS.items()]
    lines += ["", "%%penguin runs the cell body as one task of the notebook's session:", CELL_USAGE]
    return "\n".join(lines)


def _compaction_summary(result: Any) -> str:
    """One line from what `session.compact()` returned (its messages)."""
    messages = result if isinstance(result, list) else []
    ends = [m for m in messages if getattr(m, "kind", None) == "compaction_end"]
    if not ends:
        return "penguin: nothing to compact"
    end = ends[-1].payload
    detail = f": {end.error_message}" if end.error_message else ""
    return f"penguin: compaction {end.status} ({end.mode}){detail}"


def _describe_session(item: Any) -> str:
    """`<id>  <date>  <provider/model>  <workspace>  — <first prompt>` from a SessionInfo."""
    get = item.get if isinstance(item, dict) else lambda key: getattr(item, key, None)
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


async def run_line(line: str) -> None:
    """What `%penguin …` executes (via the input transformer, so async commands can await)."""
    from .runner import _shell, notebook_state

    state = notebook_state(_shell())
    try:
        command = parse_line_command(line)
    except OptionError as exc:
        print(str(exc), file=sys.stderr)
        return
    name, arg = command.name, command.arg
    if name == "help":
        print(help_text())
    elif name == "status":
        session = state.session
        print(f"approval mode: {state.approval_mode}")
        if state.python_timeout_s is not None:
            print(f"run_python time limit: {timeout_text(state.python_timeout_s)}")
        if state.model:
            print(f"model for new sessions: {state.model[0]}/{state.model[1]}")
        if session is None:
            print("session: none yet (the next %%penguin cell starts one)")
        else:
            print(f"session: {session.session_id}")
            print(f"model: {session.provider}/{session.model_id}")
            print(f"workspace: {session.workspace_dir}")
            print(f"trace: {session.trace_path}")
            error = getattr(session, "recording_error", None)
            if error and not getattr(session, "recording", True):
                print(f"recording: off — {error}")
            elif error:
                print(f"recording: on again, some records were lost — {error}")
            else:
                print("recording: on")
        if state.start_new:
            print("the next cell starts a new session")
        if state.resume_id:
            print(f"the next cell resumes session {state.resume_id}")
    elif name == "new":
        state.drop_session()
        state.start_new, state.resume_id = True, None
        print("penguin: the next %%penguin cell starts a new session")
    elif name == "resume":
        state.resume_id, state.start_new = arg, False
        print(f"penguin: the next %%penguin cell continues session {arg}")
    elif name == "model":
        provider, model_id = parse_model_pair(arg or "")
        state.choose_model((provider, model_id))
        print(f"penguin: new sessions use {provider}/{model_id} (from the next cell)")
    elif name == "approve":
        state.approval_mode = arg or "ask"
        print(f"penguin: approval mode is now {state.approval_mode}")
    elif name == "python-timeout":
        state.python_timeout_s = parse_python_timeout(arg or "")
        print(f"penguin: run_python time limit is now {timeout_text(state.python_timeout_s)}")
    elif name == "sessions":
        await _sessions(state)
    elif name == "models":
        _models()
    elif name == "compact":
        session = _current(state)
        if session is not None:
            result = session.compact()
            if inspect.isawaitable(result):
                result = await result
            print(_compaction_summary(result))
    elif name == "usage":
        usage = state.last_usage
        if usage is None:
            print("penguin: no token usage yet")
        else:
            s, r = usage.payload.session, usage.payload.request
            print(
                f"session: total {s.total}, output {s.output}, cache read {s.cache_read}, cache write {s.cache_write}"
            )
            print(
                f"last request: total {r.total}, output {r.output}, cache read {r.cache_read}, cache write {r.cache_write}"
            )
    elif name == "trace":
        session = _current(state)
        if session is not None:
            print(session.trace_path)
    elif name == "config":
        _config()


async def _sessions(state: NotebookSessions) -> None:
    try:
        agent = await state.get_agent()
        listed = agent.list_sessions()
        if inspect.isawaitable(listed):
            listed = await listed
    except Exception as exc:
        print(f"penguin: cannot list sessions: {exc}", file=sys.stderr)
        return
    if not listed:
        print("penguin: no sessions yet")
    for item in listed:
        print(_describe_session(item))


def _models() -> None:
    from ..state import ConfigError, load_project_config, paths

    try:
        cfg = load_project_config(None, paths.DEFAULT_PROJECT_ID)
    except ConfigError as exc:
        print(f"penguin: {exc}", file=sys.stderr)
        return
    if not cfg.models:
        print(f"penguin: no models configured in {config_path_text()}")
        return
    default = cfg.default_model
    for entry in cfg.models:
        mark = (
            " (default)"
            if default and (default.provider, default.model_id) == (entry.provider, entry.model_id)
            else ""
        )
        endpoint = f"  {entry.base_url}" if entry.base_url else ""
        print(f"{entry.provider}/{entry.model_id}{mark}{endpoint}")


def _config() -> None:
    from ..state import paths

    root = paths.resolve_root(None)
    print(
        f"data root: {root} ({'PENGUIN_HOME' if os.environ.get('PENGUIN_HOME') else 'default ~/.penguin/data'})"
    )
    print(f"models and credentials: {config_path_text()}")
    print(
        "also read: provider environment variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, "
        "DEEPSEEK_API_KEY, …) and a .env file in the workspace"
    )
