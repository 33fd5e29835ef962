"""What one simple command does, as the analysis reports it (docs/security.md "What a rule covers").

Owns the result types: an `Effect` (a path read or written, a config loaded, the network reached,
a program run, credentials shown, configuration the folder controls, or something unknown) tied
to the word that causes it, and `CommandEffects`, the analysis of one simple command. How words
become effects is `analysis.py` and the program tables; whether a rule covers them, `coverage.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# reads / writes / loads / scans carry a resolved path; loads = a config or plugin file that can
# run a program; scans = a repository git reads as a whole (judged only by whether it holds
# credentials: its top may lie above the workspace); secrets = the output shows credentials (no
# path); folder = configuration the folder controls runs (git's core.fsmonitor, an .npmrc):
# never covered by naming words.
EffectKind = Literal["reads", "writes", "loads", "scans", "network", "runs", "secrets", "folder", "unknown"]
EFFECT_KINDS: tuple[EffectKind, ...] = (
    "reads", "writes", "loads", "scans", "network", "runs", "secrets", "folder", "unknown",
)


@dataclass(frozen=True)
class Effect:
    """One thing a command does. `word` is the index of the word that causes it (None: no word
    does — the working directory read by default, the folder's configuration); `option` is how a
    reason names the cause (`--output`, `-o`, or "" for an operand); `what` the object: a
    resolved path for reads/writes/loads, else a short description; `tree` that a folder read is
    read with its whole content (grep -r, rg), not just listed."""

    kind: EffectKind
    word: int | None
    what: str
    option: str = ""
    tree: bool = False  # a folder read with everything under it (grep -r, rg), not just listed


@dataclass(frozen=True)
class CommandEffects:
    """The analysis of one simple command: its words, the program and subcommand the tables know
    it as ("" when unknown), and every effect found. `named` is the number of leading words a saved
    rule would name (program, or program and subcommand); 0 when the tables offer none."""

    words: tuple[str, ...]
    program: str
    subcommand: str
    effects: tuple[Effect, ...]
    offer_words: int = 0

    def title(self) -> str:
        """`git blame`, `cat`, or the first word when the program is unknown."""
        if not self.program:
            return self.words[0] if self.words else ""
        return f"{self.program} {self.subcommand}" if self.subcommand else self.program
