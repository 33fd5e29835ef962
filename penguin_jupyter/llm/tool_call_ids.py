"""Session-scoped tool_call_id uniqueness (docs/model.md "Tool-call ids").

Owns `ToolCallIdAllocator` and `strip_tool_call_id_suffix`. Providers that reuse an id (Gemini
uses the function name) get `#n` suffixes inbound; the suffix is stripped again on everything
sent back to the provider. The translator and the outbound conversion call in here; nothing
else in the package should invent ids.
"""

from __future__ import annotations

import re

_SUFFIX = re.compile(r"#\d+$")


def strip_tool_call_id_suffix(tool_call_id: str) -> str:
    """Remove one trailing `#<digits>`; idempotent on ids that have none (`a#b`, `a#2b` untouched)."""
    return _SUFFIX.sub("", tool_call_id, count=1)


class ToolCallIdAllocator:
    """One instance per session, shared by every model object the session builds."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def mark_used(self, tool_call_id: str) -> None:
        """Reserve an id (idempotent); resume marks every historical tool_call id."""
        self._used.add(tool_call_id)

    def allocate(self, provider_id: str) -> str:
        """`provider_id` when free, else the first free `provider_id#n` for n = 2, 3, …."""
        candidate = provider_id
        n = 2
        while candidate in self._used:
            candidate = f"{provider_id}#{n}"
            n += 1
        self._used.add(candidate)
        return candidate

    @staticmethod
    def strip_suffix(tool_call_id: str) -> str:
        return strip_tool_call_id_suffix(tool_call_id)
