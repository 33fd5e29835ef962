"""Shared pieces of the property-based (hypothesis) tests: the per-test example bound and the
strategies several fuzz files draw from (hostile text, JSON of any shape, bytes that are not
UTF-8). The profile every fuzz test runs under is registered in tests/conftest.py."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

# `PENGUIN_HYPOTHESIS_PROFILE=explore` multiplies every bound (a local hunt for new failures).
_SCALE = 10 if os.environ.get("PENGUIN_HYPOTHESIS_PROFILE") == "explore" else 1


def bounded(max_examples: int) -> settings:
    """The settings of one fuzz test: at most `max_examples` examples (times 10 when exploring)."""
    return settings(max_examples=max_examples * _SCALE)


# Text a stranger can hand over: any code point, lone surrogates included, plus the characters
# that break naive parsers (newlines, NUL, bidi controls, non-ASCII digits).
HOSTILE_CHARS = "\n\r\t\x00\u202e\u200b²٣߄\ud800\udfff\ufffd\"'\\{}[]#:=-"
hostile_text = st.text(
    alphabet=st.one_of(st.characters(codec=None), st.sampled_from(HOSTILE_CHARS)), max_size=40
)

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(hostile_text, children, max_size=4)
    ),
    max_leaves=12,
)


def nested(depth: int, leaf: str = "0") -> str:
    """JSON text nested `depth` levels deep (lists and objects alternating)."""
    head = "".join('[{"a":' if level % 2 else "[" for level in range(depth))
    tail = "".join("}]" if level % 2 else "]" for level in reversed(range(depth)))
    return head + leaf + tail
