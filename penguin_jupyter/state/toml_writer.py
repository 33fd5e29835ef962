"""A small TOML writer for the files this package owns (`.project_config.toml`, `.vault.toml`).

Owns serialization of plain values: strings, booleans, ints, floats, the dates and times tomllib
reads (so a file read can always be written back), inline tables for
`{provider, model_id}` references, `[table]`s and `[[array-of-tables]]`. Reading uses the
standard `tomllib`. Files are written 0600 (they hold credentials), atomically.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..private_files import private_dir

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def _string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL, which JSON leaves as it is and
    TOML forbids raw, is escaped too."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, datetime.date | datetime.time):  # read from the file by tomllib: written back as read
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_scalar(v)}" for k, v in value.items() if v is not None) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def dumps_toml(data: dict[str, Any], *, inline_keys: frozenset[str] = frozenset()) -> str:
    """Top-level scalars (and `inline_keys` tables inline) first, then tables, then table arrays."""
    head: list[str] = []
    tables: list[str] = []
    arrays: list[str] = []
    for name, value in data.items():
        if value is None:
            continue
        if isinstance(value, dict) and name not in inline_keys:
            body = [f"{_key(k)} = {_scalar(v)}" for k, v in value.items() if v is not None]
            tables.append("\n".join([f"[{_key(name)}]", *body]))
        elif _is_table_array(value):
            for item in value:
                body = [f"{_key(k)} = {_scalar(v)}" for k, v in item.items() if v is not None]
                arrays.append("\n".join([f"[[{_key(name)}]]", *body]))
        else:
            head.append(f"{_key(name)} = {_scalar(value)}")
    blocks = ["\n".join(head)] if head else []
    blocks.extend(tables)
    blocks.extend(arrays)
    return "\n\n".join(blocks) + "\n"


def write_private_file(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically, mode 0600 in a 0700 directory: a unique temporary
    file in the same directory (`mkstemp`, so concurrent writers never share one), fsync, then
    `os.replace`. Readers see the old file or the new one, never half of either. Callers that
    read, modify and write hold `file_lock.exclusive(path)` around all three."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            os.fchmod(fd, 0o600)
            data = text.encode("utf-8")
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
