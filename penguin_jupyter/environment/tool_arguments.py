"""The argument types and roles tools declare their arguments with (docs/tools.md "Adding a tool").

Owns how a model's value is read (after `omni.read_call_arguments`, the one parser of a call's
JSON arguments, made it an object): leniently where the tools always were (a non-string optional
text is absent, a yield time that is not a finite number falls back to the default, a flag is
set only by `true`) and with one line naming the argument where a value is unusable (`OnBad`, "Missing required argument" by default). Also
the *roles* an argument declares beside its type (`ShellCommand`, `ReadsPath`, `WritesPath`,
`ShownInFull`, `CellRef`, …: what the approval layer, the credential check and the card read)
and the texts every tool shares (`DESCRIBE`, `YIELD_BOUNDS`). What each value then means is the
tool's business; turning a validation failure into that line is `tool_declaration.argument_error`'s.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

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


# --- argument roles: what an argument is, for everything outside the tool -----------------------


@dataclass(frozen=True)
class ShellCommand:
    """The command line the tool runs with `bash -lc` (command rules, the command analysis, the
    administrator's command policy; the card shows it in full as `$ cmd`)."""


@dataclass(frozen=True)
class ShellInput:
    """Text typed into an already running command (the command policy reads it; the card shows
    it in full)."""


@dataclass(frozen=True)
class WorkingDirectory:
    """The directory a `ShellCommand` runs in (a path, resolved like every path argument)."""


@dataclass(frozen=True)
class ReadsPath:
    """A path the tool reads (`may_be_url`: or an http(s) URL it fetches)."""

    may_be_url: bool = False


@dataclass(frozen=True)
class WritesPath:
    """A path the tool writes (created or replaced)."""


@dataclass(frozen=True)
class ShownInFull:
    """The argument whose whole text says what the call does (code, a cell's source, a prompt):
    an approval card shows it in full, never cut."""


@dataclass(frozen=True)
class CellRef:
    """The id of a notebook cell the call acts on: the approval card shows that cell's current
    source (a diff against it when the call also has a `NewText`)."""


@dataclass(frozen=True)
class OldText:
    """The text a call replaces (the card's diff runs from it to the `NewText`)."""


@dataclass(frozen=True)
class NewText:
    """The text a call writes: the card shows it as a diff against the `OldText`, the `CellRef`'s
    source, or nothing (all lines added)."""


@dataclass(frozen=True)
class Headline:
    """Shown on the card's one-line header (several join with ": ", in declaration order)."""


@dataclass(frozen=True)
class CardNote:
    """A flag that, when true, adds `text` to the card: after the header (`where="header"`) or
    below the diff (`where="diff"`)."""

    text: str
    where: Literal["header", "diff"] = "header"


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
# How the yield-time arguments of every waiting tool describe their bounds.
YIELD_BOUNDS = "at least 250, and at most 1 s below the tool's timeout"
# The call description: what the user sees while the call runs (the one text every tool gives it).
DESCRIBE = Field(
    description=(
        "Required; write it first, before every other argument: the user sees it while the call runs. "
        "One short sentence, in the user's language, saying what this call does and why."
    )
)
# The call description the user sees while the call runs.
CallDescription = Annotated[str | None, BeforeValidator(_text_or_none), AskedFor()]
