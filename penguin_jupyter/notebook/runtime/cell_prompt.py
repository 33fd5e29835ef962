"""The prompt a `%%penguin` cell sends: its body with `{…}` expanded, and the notebook context.

`{var}` and `{cell:…}` expansion: each `{name}` of a defined user variable becomes that
variable's compact summary (as `inspect_variables` renders it); `{cell:-1}` becomes the cell
executed before this one and `{cell:ID}` a cell of the notebook (source and result or error,
bounded; the texts come from `cells`, filled from cell_history.py and the notebook); `{{` and
`}}` are literal braces; any other brace text, and a cell that cannot be found, is left as
written. What an expansion inserts is data (a cell's error, a frame's values may come from a
stranger's file): it goes in as `quoted_data`, every line after `| `, so it cannot pass for the
user's own words or a harness block. `cell_prompt` assembles the prompt and the context block
(cell_history.py) a cell sends; `prompt_too_large` refuses one larger than the model's window.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...omni.markers import quoted_data
from ..kernel_tools.summaries import summarize_variable

if TYPE_CHECKING:
    from ...session import Session
    from ..link.notebook_link import NotebookLink

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


async def cell_prompt(
    shell: object, link: NotebookLink | None, body: str, namespace: Mapping[str, object], cell_id: str | None
) -> tuple[str, str]:
    """The prompt a cell sends — its body with its `{name}`, `{cell:-1}` and `{cell:ID}`
    references expanded — and the notebook context block that follows it (the running cell
    `cell_id`, the cell before)."""
    from ..kernel_tools.notebook_cells import cells_by_id
    from .cell_history import previous_cell_text, task_context

    references = cell_references(body)
    cells = await cells_by_id(link, [ref for ref in references if ref != PREVIOUS_CELL])
    if PREVIOUS_CELL in references:
        previous = previous_cell_text(shell)
        if previous is not None:
            cells[PREVIOUS_CELL] = previous
    context = task_context(shell, cell_id)
    return expand_variables(body.strip(), namespace, cells), context


def prompt_too_large(session: Session, prompt: str) -> str | None:
    """The one line refusing a prompt larger than the model's context window (estimated tokens
    against the window, both named), before anything is sent or recorded; None when it fits or
    the window is unknown."""
    from ...llm.limits import estimate_text_tokens, usable_context_window
    from ...omni import SessionMetaPayload

    meta = session.meta.payload
    window = usable_context_window(meta.model_context_window) if isinstance(meta, SessionMetaPayload) else None
    if window is None:
        return None
    tokens = estimate_text_tokens(prompt)
    if tokens <= window:
        return None
    return (
        f"penguin: this prompt is about {tokens:,} tokens (estimated), more than the context window of "
        f"{session.provider}/{session.model_id} ({window:,} tokens), so nothing was sent; shorten it, "
        "or point the agent at a file or a variable ({name}) instead of pasting it"
    )
