"""Invisible characters made visible: what an approval card shows of model-written text.

Owns `visible_controls`: every control character but newline and tab, every format character
(zero-width spaces and joiners, bidi embeddings, overrides and isolates, the BOM, soft hyphens,
tag characters) and the Unicode line and paragraph separators become a visible `⟨U+202E⟩`, so
a Trojan Source line or a hidden word reads as what it is. Live cards (live/live_cards.py),
static cards (transcript_model.py) and the labextension (`visibleControls` in
labextension/src/model.ts) apply it to every string a card shows from a tool call; see
docs/security.md "Approval cards and replayed transcripts".
"""

from __future__ import annotations

import re
import unicodedata

_CANDIDATE = re.compile(r"[^\x20-\x7e\n\t]")  # printable ASCII never needs a look-up
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _shown(match: re.Match[str]) -> str:
    char = match.group(0)
    if unicodedata.category(char) in _HIDDEN_CATEGORIES:
        return f"⟨U+{ord(char):04X}⟩"
    return char


def visible_controls(text: str) -> str:
    """`text` with each invisible or reordering character written as `⟨U+XXXX⟩`."""
    return _CANDIDATE.sub(_shown, text)
