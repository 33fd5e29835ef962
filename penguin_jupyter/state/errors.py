"""The one error type for bad agent-state and project files.

Owns `ConfigError`: a one-line message naming the file and the offending field (whatever the
file holds: characters that would break the line are written as escapes, `one_line`). Raised by
every loader in this package; callers show `str(exc)` without a traceback. Also owns
`NoModelConfiguredError`: no usable model for a session (none configured, or the pair asked for
is unknown), so a host can say how to configure one without matching message text.
"""

from __future__ import annotations


def one_line(text: str) -> str:
    """`text` with every character that is not printable (newlines, other controls, bidi and
    zero-width characters, lone surrogates) written as its escape, so it shows as one line."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii") for ch in text)


class ConfigError(ValueError):
    """An invalid configuration file or value: `<file>: <field>: <problem>`."""

    def __init__(self, file: str, field: str | None, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{file}: {field}" if field else file
        super().__init__(one_line(f"{where}: {problem}"))


class NoModelConfiguredError(ValueError):
    """No model can be resolved for a new session; `str()` says which and where to add one."""
