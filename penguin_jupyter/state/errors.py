"""The one error type for bad agent-state and project files.

Owns `ConfigError`: a one-line message naming the file and the offending field. Raised by
every loader in this package; callers show `str(exc)` without a traceback. Also owns
`NoModelConfiguredError`: no usable model for a session (none configured, or the pair asked for
is unknown), so a host can say how to configure one without matching message text.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """An invalid configuration file or value: `<file>: <field>: <problem>`."""

    def __init__(self, file: str, field: str | None, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {problem}")


class NoModelConfiguredError(ValueError):
    """No model can be resolved for a new session; `str()` says which and where to add one."""
