"""A workspace's `.env` file as data: the one parser, and the model credentials read from it
(docs/security.md "A folder's `.env` is data").

Owns the grammar (python-dotenv's rules: an optional `export ` prefix; single-quoted values
taken literally except `\\'` and `\\\\`; double-quoted values with backslash escapes; quoted
values may span lines; full-line comments and, outside quotes, ` #` comments after a value;
empty values), and `workspace_credentials`, the one entry point that decides what a folder's
`.env` may supply: model API keys only (names ending in `_API_KEY`); and `read_dotenv`, the one
place a `.env` is opened (a regular file of at most `MAX_DOTENV_BYTES`, never when the
administrator's policy says `read_dotenv = false`). Nothing here writes the
process environment: the credentials travel to the model client inside its config
(`GenerativeModelConfig.credentials`), and a variable the user exported wins over the file.
Which values are redacted is `secrets.py`'s job (it uses this parser).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..regular_files import RefusedFile, read_regular_bytes
from .admin_policy import load_policy
from .errors import ConfigError

DOTENV_NAME = ".env"
MAX_DOTENV_BYTES = 1 << 20  # a real .env is a few lines; anything bigger is not read
KEYS_ONLY = ".env supplies model keys (*_API_KEY) only"

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_MODEL_KEY = re.compile(r"[A-Z][A-Z0-9_]*_API_KEY")
_DOUBLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "a": "\a", "\\": "\\", '"': '"', "'": "'", "$": "$"}


def parse_dotenv(text: str) -> tuple[dict[str, str], list[int]]:
    """(variables, numbers of the lines that could not be read). A later assignment wins."""
    values: dict[str, str] = {}
    bad: list[int] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        start = index
        line = lines[index]
        index += 1
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parsed = _assignment(lines, start)
        if parsed is None:
            bad.append(start + 1)
            continue
        key, value, index = parsed
        values[key] = value
    return values, bad


def _assignment(lines: list[str], start: int) -> tuple[str, str, int] | None:
    """`(key, value, next line index)` of the assignment starting at line `start`, or None."""
    rest = lines[start].lstrip()
    if rest.startswith("export ") or rest.startswith("export\t"):
        rest = rest[len("export") :].lstrip()
    match = _KEY.match(rest)
    if match is None:
        return None
    key = match.group()
    rest = rest[match.end() :].lstrip()
    if not rest.startswith("="):
        return None
    rest = rest[1:].lstrip()
    if rest[:1] in ("'", '"'):
        return _quoted(lines, start, key, rest)
    return key, re.split(r"\s#", rest, maxsplit=1)[0].strip(), start + 1


def _quoted(lines: list[str], start: int, key: str, rest: str) -> tuple[str, str, int] | None:
    quote = rest[0]
    text = rest[1:]
    chars: list[str] = []
    index = start
    while True:
        position = 0
        while position < len(text):
            char = text[position]
            if char == "\\" and position + 1 < len(text):
                following = text[position + 1]
                if quote == '"' and following in _DOUBLE_ESCAPES:
                    chars.append(_DOUBLE_ESCAPES[following])
                    position += 2
                    continue
                if quote == "'" and following in ("'", "\\"):
                    chars.append(following)
                    position += 2
                    continue
            if char == quote:
                tail = text[position + 1 :].strip()
                if tail and not tail.startswith("#"):
                    return None
                return key, "".join(chars), index + 1
            chars.append(char)
            position += 1
        index += 1  # the value goes on: a quoted value may span lines
        if index >= len(lines):
            return None
        chars.append("\n")
        text = lines[index]


def is_model_key_name(name: str) -> bool:
    """The one rule for what a `.env` may supply: an upper-case name ending in `_API_KEY` (every
    provider key variable agenthub reads — OPENAI_API_KEY, ANTHROPIC_API_KEY, … — has this form)."""
    return _MODEL_KEY.fullmatch(name) is not None


@dataclass(frozen=True)
class WorkspaceCredentials:
    """What a folder's `.env` supplied. `keys`: model keys for the model client (never the process
    environment); `read`: their names; `shadowed`: keys in the file that an exported variable
    overrides; `ignored`: every other name in the file; `bad_lines`: lines that could not be read."""

    path: Path | None = None
    keys: Mapping[str, str] = field(default_factory=dict)
    read: tuple[str, ...] = ()
    shadowed: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    bad_lines: tuple[int, ...] = ()
    error: str | None = None

    def notice(self) -> str | None:
        """The one line a cell shows the first time it uses this `.env` (None: no file)."""
        if self.path is None:
            return None
        if self.error is not None:
            return f"penguin: {self.path}: {self.error}; nothing read from it"
        parts = [f"read {', '.join(self.read)}" if self.read else "read no model key"]
        if self.shadowed:
            parts.append(f"used the exported {', '.join(self.shadowed)} instead of the file's")
        if self.ignored:
            parts.append(f"ignored {', '.join(self.ignored)}: {KEYS_ONLY}")
        if self.bad_lines:
            parts.append(f"skipped line {', '.join(str(n) for n in self.bad_lines)}: expected KEY=VALUE")
        return f"penguin: {self.path}: " + "; ".join(parts)


def dotenv_allowed() -> bool:
    """Whether a workspace `.env` may be opened at all: not when the administrator's policy says
    `read_dotenv = false`, nor when the policy cannot be read (cells refuse to run then anyway)."""
    try:
        policy = load_policy()
    except ConfigError:
        return False
    return policy is None or policy.read_dotenv


def read_dotenv(workspace: str | os.PathLike[str]) -> tuple[Path, dict[str, str], list[int]] | None:
    """`(path, variables, bad lines)` of `<workspace>/.env`; None when there is none or the
    administrator's policy turns `.env` files off (then it is not even opened). Raises `ValueError`
    (one line, never the content) when it exists but cannot be read: not a regular file (a symlink
    to one is followed), larger than `MAX_DOTENV_BYTES`, not UTF-8."""
    if not dotenv_allowed():
        return None
    path = Path(workspace) / DOTENV_NAME
    try:
        text = read_regular_bytes(path, MAX_DOTENV_BYTES).decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except RefusedFile as exc:
        raise ValueError(f"cannot read it: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read it ({exc.__class__.__name__})") from None
    values, bad = parse_dotenv(text)
    return path, values, bad


def workspace_credentials(
    workspace: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None
) -> WorkspaceCredentials:
    """The model keys `<workspace>/.env` supplies (the single place a `.env` is used for anything
    but redaction). Names an exported variable already sets are left to the environment."""
    if workspace is None:
        return WorkspaceCredentials()
    environ = os.environ if environ is None else environ
    try:
        found = read_dotenv(workspace)
    except ValueError as exc:
        return WorkspaceCredentials(path=Path(workspace) / DOTENV_NAME, error=str(exc))
    if found is None:
        return WorkspaceCredentials()
    path, values, bad = found
    model_keys = [name for name in values if is_model_key_name(name)]
    shadowed = tuple(name for name in model_keys if environ.get(name) and values[name])
    read = tuple(name for name in model_keys if values[name] and name not in shadowed)
    return WorkspaceCredentials(
        path=path,
        keys={name: values[name] for name in read},
        read=read,
        shadowed=shadowed,
        ignored=tuple(name for name in values if name not in model_keys),
        bad_lines=tuple(bad),
    )
