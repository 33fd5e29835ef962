"""Parse `%%penguin` cell options and `%penguin` line commands into plain values.

Owns the option grammar (README "The %%penguin cell") and its one-line error messages: one
parser per option in `OPTION_PARSERS`. It runs nothing: the runner and the line-command
handlers act on what is returned here.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast, get_args

from ...interfaces import THINKING_LEVELS, ThinkingLevelName

ApprovalMode = Literal["ask", "read-only", "auto", "allow-all", "deny-all"]
APPROVAL_MODES: tuple[str, ...] = get_args(ApprovalMode)
CELL_USAGE = (
    "usage: %%penguin [--model PROVIDER/MODEL_ID] [--new] [--session ID] "
    "[--approve ask|read-only|auto|allow-all|deny-all] [--thinking none|low|medium|high|xhigh|max] "
    "[--max-turns N] [--python-timeout SECONDS] [--budget USD] [--workspace DIR] [--quiet] [--rerun]"
)


class OptionError(ValueError):
    """A user's option mistake; its message is the one line shown in the cell."""


@dataclass
class CellOptions:
    model: tuple[str, str] | None = None
    new: bool = False
    session_id: str | None = None
    approve: str | None = None
    thinking: ThinkingLevelName | None = None
    max_turns: int | None = None
    python_timeout_s: float | None = None
    budget_usd: float | None = None  # what this cell's Task may spend on model requests
    workspace: str | None = None
    quiet: bool = False
    rerun: bool = False  # ask the model again even if the cell's saved Task completed


def parse_model_pair(value: str) -> tuple[str, str]:
    """`PROVIDER/MODEL_ID` → (provider, model_id); a half pair is an error."""
    provider, sep, model_id = value.partition("/")
    if not sep or not provider.strip() or not model_id.strip():
        raise OptionError(f"penguin: --model needs PROVIDER/MODEL_ID (both halves), got {value!r}")
    return provider.strip(), model_id.strip()


def parse_approval_mode(value: str) -> str:
    if value not in APPROVAL_MODES:
        raise OptionError(
            f"penguin: unknown approval mode {value!r} (choose from {', '.join(APPROVAL_MODES)})"
        )
    return value


# Numbers are read as the README writes them: ASCII digits (Python's int() and float() would also
# take `1_000`, `1e306`, `inf` and other scripts' digits such as `١٢٠`), within a documented range.
_ASCII_DECIMAL = re.compile(r"[0-9]{1,9}(?:\.[0-9]{0,9})?|\.[0-9]{1,9}")
_ASCII_INTEGER = re.compile(r"-?[0-9]{1,9}")
MAX_PYTHON_TIMEOUT_S = 7 * 24 * 3600  # a week


def shown(value: str) -> str:
    """A user's value in a one-line message: quoted, escaped, cut after 40 characters."""
    return repr(value) if len(value) <= 40 else repr(value[:40]) + "…"


def ascii_int(value: str) -> int | None:
    """`value` as an integer written in ASCII digits (an optional `-`, at most 9 digits), else None."""
    text = value.strip()
    return int(text) if _ASCII_INTEGER.fullmatch(text) else None


def parse_python_timeout(value: str) -> float:
    """`--python-timeout` / `%penguin python-timeout`: seconds from 0 to a week, where 0 means
    no limit."""
    text = value.strip()
    seconds = float(text) if _ASCII_DECIMAL.fullmatch(text) else math.nan
    if not 0 <= seconds <= MAX_PYTHON_TIMEOUT_S:
        raise OptionError(
            f"penguin: python-timeout needs a number of seconds from 0 to {MAX_PYTHON_TIMEOUT_S} "
            f"(0 = no limit), got {shown(value)}"
        )
    return seconds


# The largest budget accepted: more than anyone spends in a day, small enough to print.
MAX_BUDGET_USD = 1_000_000.0


def parse_budget(value: str) -> float:
    """`--budget` / `%penguin budget`: a positive number of USD written in plain ASCII digits
    (`0.50`, `$2`), at most `MAX_BUDGET_USD`."""
    text = value.strip().removeprefix("$")
    usd = float(text) if _ASCII_DECIMAL.fullmatch(text) else math.nan
    if not 0 < usd <= MAX_BUDGET_USD:
        raise OptionError(
            f"penguin: budget needs a positive number of USD up to {MAX_BUDGET_USD:,.0f}, got {shown(value)}"
        )
    return usd


def parse_thinking(value: str) -> ThinkingLevelName:
    if value not in THINKING_LEVELS:
        raise OptionError(
            f"penguin: unknown thinking level {value!r} (choose from {', '.join(THINKING_LEVELS)})"
        )
    return cast(ThinkingLevelName, value)


def parse_max_turns(value: str) -> int:
    turns = ascii_int(value)
    if turns is None:
        raise OptionError(f"penguin: --max-turns needs an integer, got {shown(value)}")
    if turns == 0 or turns < -1:
        raise OptionError(f"penguin: --max-turns must be a positive integer or -1, got {shown(value)}")
    return turns


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise OptionError(f"penguin: cannot parse options ({exc})") from None


def _set_model(opts: CellOptions, value: str) -> None:
    opts.model = parse_model_pair(value)


def _set_session(opts: CellOptions, value: str) -> None:
    opts.session_id = value


def _set_approve(opts: CellOptions, value: str) -> None:
    opts.approve = parse_approval_mode(value)


def _set_thinking(opts: CellOptions, value: str) -> None:
    opts.thinking = parse_thinking(value)


def _set_max_turns(opts: CellOptions, value: str) -> None:
    opts.max_turns = parse_max_turns(value)


def _set_python_timeout(opts: CellOptions, value: str) -> None:
    opts.python_timeout_s = parse_python_timeout(value)


def _set_budget(opts: CellOptions, value: str) -> None:
    opts.budget_usd = parse_budget(value)


def _set_workspace(opts: CellOptions, value: str) -> None:
    opts.workspace = value


def _set_new(opts: CellOptions) -> None:
    opts.new = True


def _set_quiet(opts: CellOptions) -> None:
    opts.quiet = True


def _set_rerun(opts: CellOptions) -> None:
    opts.rerun = True


# Options that take a value (`--flag VALUE` or `--flag=VALUE`), and flags that take none.
OPTION_PARSERS: dict[str, Callable[[CellOptions, str], None]] = {
    "--model": _set_model,
    "--session": _set_session,
    "--approve": _set_approve,
    "--thinking": _set_thinking,
    "--max-turns": _set_max_turns,
    "--python-timeout": _set_python_timeout,
    "--budget": _set_budget,
    "--workspace": _set_workspace,
}
FLAG_PARSERS: dict[str, Callable[[CellOptions], None]] = {"--new": _set_new, "--quiet": _set_quiet, "--rerun": _set_rerun}


def parse_cell_options(line: str) -> CellOptions:
    """Parse the text after `%%penguin`; raises OptionError with a one-line message."""
    tokens = _split(line)
    opts = CellOptions()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        flag, has_inline, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if flag in FLAG_PARSERS:
            FLAG_PARSERS[flag](opts)
        elif flag in OPTION_PARSERS:
            if has_inline:
                value = inline
            elif i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                i += 1
                value = tokens[i]
            else:
                raise OptionError(f"penguin: option {flag} needs a value")
            OPTION_PARSERS[flag](opts, value)
        else:
            raise OptionError(f"penguin: unknown option {token!r}; {CELL_USAGE}")
        i += 1
    if opts.new and opts.session_id:
        raise OptionError("penguin: --new and --session cannot be used together")
    return opts


LINE_COMMANDS: dict[str, str] = {
    "status": "show the current session, model, workspace and approval mode",
    "new": "start a new session for the next cell",
    "sessions": "list this agent's sessions",
    "resume ID": "continue session ID in the next cell",
    "model PROVIDER/MODEL_ID": "use this model for new sessions",
    "models": "list the configured models",
    "approve MODE": "set the approval mode (ask, read-only, auto, allow-all, deny-all)",
    "python-timeout SECONDS": "run_python's time limit for the next cells (0 = no limit; default 120)",
    "budget USD|off": "cap what each following cell's Task may spend on model requests (a cell's --budget wins)",
    "compact": "compact the current session's context now",
    "usage": "show the tokens and cost of the last Task, this session and today",
    "trace": "show the path of the current trace file",
    "config": "show where models and credentials are read from, and the administrator's policy",
    "rules [forget N]": "list the approval rules in force, numbered with their file; forget N removes rule N",
    "undo": "undo the most recent Task not yet undone: its cells, variables and files (again: the one before)",
    "demo [stop]": "try it offline: a scripted model for this kernel, no key needed (stop ends it; so does the kernel's exit)",
    "help": "show this help",
}


@dataclass
class LineCommand:
    name: str
    arg: str | None = None


def parse_line_command(line: str) -> LineCommand:
    tokens = _split(line)
    if not tokens:
        return LineCommand("help")
    name, args = tokens[0], tokens[1:]
    needs_arg = {
        "resume": "resume ID",
        "model": "model PROVIDER/MODEL_ID",
        "approve": "approve MODE",
        "python-timeout": "python-timeout SECONDS",
        "budget": "budget USD|off",
    }
    known = {key.split()[0] for key in LINE_COMMANDS}
    if name not in known:
        raise OptionError(f"penguin: unknown command {name!r}; try %penguin help")
    if name == "rules":
        if not args:
            return LineCommand("rules")
        number = ascii_int(args[1]) if len(args) == 2 and args[0] == "forget" else None
        if number is None or number < 0:
            raise OptionError("penguin: usage: %penguin rules [forget N]")
        return LineCommand("rules", args[1])
    if name in ("undo", "demo"):
        return _undo_command(args) if name == "undo" else _demo_command(args)
    if name in needs_arg:
        if len(args) != 1:
            raise OptionError(f"penguin: usage: %penguin {needs_arg[name]}")
        if name == "model":
            parse_model_pair(args[0])
        if name == "approve":
            parse_approval_mode(args[0])
        if name == "python-timeout":
            parse_python_timeout(args[0])
        if name == "budget" and args[0] != "off":
            parse_budget(args[0])
        return LineCommand(name, args[0])
    if args:
        raise OptionError(f"penguin: %penguin {name} takes no arguments")
    return LineCommand(name)


def _undo_command(args: list[str]) -> LineCommand:
    """`undo` or `undo --task ID` (what the transcript's Undo button runs)."""
    if not args:
        return LineCommand("undo")
    if len(args) == 2 and args[0] == "--task" and args[1].strip():
        return LineCommand("undo", args[1])
    if len(args) == 1 and args[0].startswith("--task=") and args[0][7:].strip():
        return LineCommand("undo", args[0][7:])
    raise OptionError("penguin: usage: %penguin undo [--task ID]")


def _demo_command(args: list[str]) -> LineCommand:
    """`demo` (start the offline scripted model) or `demo stop`."""
    if args not in ([], ["stop"]):
        raise OptionError("penguin: usage: %penguin demo [stop]")
    return LineCommand("demo", args[0] if args else None)


def timeout_text(seconds: float) -> str:
    """`120 s`, `2.5 s`, or `no limit` for 0."""
    return "no limit" if seconds == 0 else f"{seconds:g} s"
