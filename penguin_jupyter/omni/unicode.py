"""Valid Unicode at every boundary (README "Reliability"): text that cannot be encoded as UTF-8.

A Python `str` can hold a lone surrogate (U+D800 to U+DFFF): JSON's `"\\ud800"` escape decodes to
one, and `surrogateescape` turns a stray byte into one. No UTF-8 writer can encode it, so one such
character in a model's answer, a tool's output or a trace line would fail every later write and
request. Owns the repair: surrogate pairs are joined into the character they stand for, any lone
surrogate becomes U+FFFD. Where text enters (the model stream, a tool's close-out, a trace line, a
file) is each caller's business; this module only repairs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def is_valid_unicode(text: str) -> bool:
    """Whether `text` encodes as UTF-8 (it holds no surrogate code point)."""
    return text.isascii() or _SURROGATE.search(text) is None


def repair_surrogates(text: str) -> str:
    """Join surrogate pairs into astral characters; any lone surrogate becomes U+FFFD."""
    if is_valid_unicode(text):
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(REPLACEMENT, joined)


def repair_strings(value: Any) -> Any:
    """`value` (decoded JSON: dicts, lists, strings, numbers) with every string, keys included,
    repaired; the same object when nothing needed repair."""
    if isinstance(value, str):
        return repair_surrogates(value)
    if isinstance(value, Mapping):
        items = [(repair_strings(k), repair_strings(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list):
        repaired = [repair_strings(item) for item in value]
        if all(a is b for a, b in zip(repaired, value, strict=True)):
            return value
        return repaired
    return value


def repair_in_place(value: Any) -> bool:
    """Repair every string inside the dicts and lists of `value` in place, keys included; True
    when something was repaired. For objects another library keeps references to."""
    changed = False
    if isinstance(value, dict):
        for key in [k for k in value if isinstance(k, str) and not is_valid_unicode(k)]:
            value[repair_surrogates(key)] = value.pop(key)
            changed = True
        entries: Any = value.items()
    elif isinstance(value, list):
        entries = enumerate(value)
    else:
        return False
    for key, item in list(entries):
        if isinstance(item, str):
            if not is_valid_unicode(item):
                value[key] = repair_surrogates(item)
                changed = True
        elif isinstance(item, dict | list):
            changed = repair_in_place(item) or changed
    return changed
