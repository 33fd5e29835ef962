"""`{var}` expansion in a `%%penguin` cell body: each `{name}` of a defined user variable becomes
that variable's compact summary (as `inspect_variables` renders it); `{{` and `}}` are literal
braces; any other brace text is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .summaries import summarize_variable

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_variables(body: str, namespace: Mapping[str, object]) -> str:
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        if name not in namespace:
            return token
        return "\n" + summarize_variable(name, namespace[name]) + "\n"

    return _TOKEN.sub(replace, body)
