"""`{var}` and `{cell:…}` expansion in a `%%penguin` cell body: each `{name}` of a defined user
variable becomes that variable's compact summary (as `inspect_variables` renders it);
`{cell:-1}` becomes the cell executed before this one and `{cell:ID}` a cell of the notebook
(source and result or error, bounded; the texts come from `cells`, which the runner fills from
cell_history.py and the notebook); `{{` and `}}` are literal braces; any other brace text, and a
cell that cannot be found, is left as written. What an expansion inserts is data (a cell's error,
a frame's values may come from a stranger's file): it goes in as `quoted_data`, every line after
`| `, so it cannot pass for the user's own words or a harness block.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ...omni.markers import quoted_data
from .summaries import summarize_variable

PREVIOUS_CELL = "-1"
_TOKEN = re.compile(r"\{\{|\}\}|\{cell:(-1|[A-Za-z0-9_-]+)\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def cell_references(body: str) -> list[str]:
    """The cells `body` names: "-1" and ids, each once, in order (escaped braces excluded)."""
    found = [m.group(1) for m in _TOKEN.finditer(body) if m.group(1)]
    return list(dict.fromkeys(found))


def expand_variables(body: str, namespace: Mapping[str, object], cells: Mapping[str, str] | None = None) -> str:
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        reference = match.group(1)
        if reference:
            text = (cells or {}).get(reference)
            return token if text is None else "\n" + quoted_data(text) + "\n"
        name = match.group(2)
        if name not in namespace:
            return token
        return "\n" + quoted_data(summarize_variable(name, namespace[name])) + "\n"

    return _TOKEN.sub(replace, body)
