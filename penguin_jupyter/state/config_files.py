"""Reading a configuration file whatever it holds (README "Reliability").

Every loader in this package (project config, `system_config.yaml`, the vault, approval rules,
the administrator's policy) reads its file through `read_config_text` and parses it through
`parse_config`, so that what a TOML or YAML parser, a decoder or the nesting of a document can
raise becomes one `ConfigError` line naming the file: bytes that are not UTF-8 (with where), and
a document nested deeper than `MAX_DEPTH` levels (Python's parsers recurse, and so does every
step after them) instead of a `UnicodeDecodeError` with no file name or a `RecursionError`.
What each file means stays with its loader.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import ConfigError

T = TypeVar("T")
MAX_DEPTH = 64  # tables and lists inside one another; no real configuration comes near


def not_utf8(error: UnicodeDecodeError) -> str:
    where = error.object[error.start : error.start + 1]
    byte = f"byte 0x{where[0]:02x}" if where else "a byte"
    return f"is not valid UTF-8 text ({byte} at offset {error.start})"


def read_config_text(path: str | os.PathLike[str], read: Callable[[Any], str]) -> str:
    """`read(path)`, with text that is not UTF-8 as a `ConfigError` naming the file (a missing or
    unreadable file raises what `read` raises)."""
    try:
        return read(path)
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), None, not_utf8(exc)) from None


def nesting_depth(value: Any) -> int:
    """How many dicts and lists deep `value` goes (iteratively: any depth is measured)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_config(file: str, parse: Callable[[str], T], text: str) -> T:
    """`parse(text)`; a document nested deeper than `MAX_DEPTH` is a `ConfigError` (the parser's
    own errors are the caller's to word)."""
    too_deep = ConfigError(file, None, f"is nested more than {MAX_DEPTH} levels deep")
    try:
        data = parse(text)
    except RecursionError:
        raise too_deep from None
    if nesting_depth(data) > MAX_DEPTH:
        raise too_deep
    return data
