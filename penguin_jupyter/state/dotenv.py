"""Read a workspace `.env` file into the process environment (provider keys and base URLs).

Owns the small `KEY=VALUE` grammar: comments, blank lines, an optional `export ` prefix and
single or double quotes around the value. Variables already set in the environment win, so
a `.env` never overrides what the user exported. Malformed lines are skipped, and reported
by line number, never by content (they may hold secrets).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def parse_dotenv(text: str) -> tuple[dict[str, str], list[int]]:
    """(variables, line numbers that could not be read)."""
    values: dict[str, str] = {}
    bad: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            bad.append(number)
            continue
        key, value = match.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].rstrip()
        values[key] = value
    return values, bad


def load_dotenv(workspace: str | os.PathLike[str]) -> list[str]:
    """Set the variables of `<workspace>/.env` that are not already set; returns their names."""
    path = Path(workspace) / ".env"
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    values, bad = parse_dotenv(text)
    if bad:
        lines = ", ".join(str(n) for n in bad)
        raise ValueError(f"{path}: line {lines}: expected KEY=VALUE")
    loaded = [key for key in values if key not in os.environ]
    for key in loaded:
        os.environ[key] = values[key]
    return loaded
