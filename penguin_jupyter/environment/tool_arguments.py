"""The argument types tools declare their arguments with (docs/tools.md "Declaring a tool").

Owns how a model's value is read: leniently where the tools always were (a non-string optional
text is absent, a yield time that is not a finite number falls back to the default, a flag is
set only by `true`) and with one line naming the argument where a value is unusable (`OnBad`,
"Missing required argument" by default). What each value then means is the tool's business;
turning a validation failure into that line is `tool_declaration.argument_error`'s.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BeforeValidator

MISSING = 'Missing required argument "{name}" for {tool}.'


def json_text(value: Any) -> str:
    """`value` as compact JSON (its repr when it has none): how an error line quotes a value."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


class Unusable(ValueError):
    """Raised by an argument reader for a value it cannot use; `shown` replaces the raw value
    in the error line, `message` the field's `OnBad` line, when given."""

    INPUT: Any = object()

    def __init__(self, shown: Any = INPUT, message: str | None = None) -> None:
        super().__init__("unusable argument")
        self.shown = shown
        self.message = message


@dataclass(frozen=True)
class OnBad:
    """Annotated metadata: the one-line error when the argument is missing or unusable.
    Placeholders: {tool}, {name}, {got} (the value as JSON), {got_repr} (its Python repr)."""

    message: str = MISSING

    def text(self, tool: str, name: str, got: Any) -> str:
        return self.message.format(tool=tool, name=name, got=json_text(got), got_repr=repr(got))


@dataclass(frozen=True)
class AskedFor:
    """Annotated metadata: listed as required in the schema, though a call without it is still
    carried out (the call description: the model is asked for it, the user merely sees it)."""


def finite_number(value: Any) -> float | None:
    """Numbers and numeric strings; None for anything else (bools included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and value.strip():
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _non_empty(value: Any) -> str:
    if isinstance(value, str) and value:
        return value
    raise Unusable


def _non_blank(value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise Unusable


def _string(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise Unusable


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _flag(value: Any) -> bool:
    return value is True


def _milliseconds(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return int(value)


# A required string that must not be empty (a path, an id, a command).
Text = Annotated[str, BeforeValidator(_non_empty)]
# A required string with something besides whitespace in it.
NonBlankText = Annotated[str, BeforeValidator(_non_blank)]
# A required string, empty allowed (file content, a replacement).
AnyText = Annotated[str, BeforeValidator(_string)]
# An optional string: anything else counts as not given.
MaybeText = Annotated[str | None, BeforeValidator(_text_or_none)]
# An optional flag: only `true` sets it.
Flag = Annotated[bool, BeforeValidator(_flag)]
# An optional duration: anything but a finite number counts as not given.
Milliseconds = Annotated[int | None, BeforeValidator(_milliseconds)]
# The call description the user sees while the call runs.
CallDescription = Annotated[str | None, BeforeValidator(_text_or_none), AskedFor()]
