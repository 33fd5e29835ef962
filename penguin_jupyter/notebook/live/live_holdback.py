"""Streaming redaction that cannot be split: how much of a growing text is safe to show.

Owns `SecretHoldBack` (secrets shorter than `redaction.MIN_SECRET_LENGTH` are not held back),
which, given the secrets and a growing text, says where the shown part may end: before any
tail that could still become a secret (a suffix of the text that is a prefix of one) and never
inside a complete secret. Whatever is shown up to that end is passed through the caller's
`Redactor`, which replaces complete secrets; so no update ever carries a piece of a
secret cut by a chunk boundary. Where the secrets come from and what the placeholder looks like
are the caller's (see docs/notebook-streaming.md). Pure string logic: no widgets, no kernel.
"""

from __future__ import annotations

from ...redaction import EMPTY, MIN_SECRET_LENGTH, Redactor

# The shortest value treated as a secret. Below it, holding back every text tail that matches
# the start of a value would stall ordinary words, and a redaction of it would blank common
# text. Eight characters is also the leak threshold the tests check (no iopub message carries
# 8 consecutive characters of a secret). Keep equal to the core redaction's constant.


class SecretHoldBack:
    """`safe_end(text)`: the length of `text`'s prefix that may be shown now (see the module)."""

    def __init__(self, redactor: Redactor = EMPTY) -> None:
        self.secrets = sorted({s for s in redactor.values if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def safe_end(self, text: str, start: int = 0) -> int:
        """The largest end ≥ `start` such that `text[start:end]` neither ends inside a complete
        secret nor is followed by a tail that could still grow into one (`text[:start]` was shown
        already and is never revisited)."""
        end = len(text)
        if not self.secrets or end <= start:
            return end
        end -= self._open_prefix(text, start)
        return max(start, self._outside_occurrences(text, start, end))

    def _open_prefix(self, text: str, start: int) -> int:
        """The length of the longest suffix of `text[start:]` that is a proper prefix of a secret."""
        best = 0
        for secret in self.secrets:
            first = secret[0]
            low = max(start, len(text) - len(secret) + 1)
            index = text.find(first, low)
            while index != -1:
                size = len(text) - index
                if size <= best:
                    break
                if secret.startswith(text[index:]):
                    best = size
                    break
                index = text.find(first, index + 1)
        return best

    def cut_is_outside(self, text: str, cut: int) -> bool:
        """True when no complete secret in `text` straddles the index `cut`."""
        return self._outside_occurrences(text, 0, cut) == cut

    def _outside_occurrences(self, text: str, start: int, end: int) -> int:
        """`end` moved back to the start of any complete secret that straddles it."""
        moved = True
        while moved:
            moved = False
            for secret in self.secrets:
                low = max(start, end - len(secret) + 1)
                index = text.find(secret, low, end + len(secret) - 1)
                if index != -1 and index < end < index + len(secret):
                    end, moved = index, True
        return end
