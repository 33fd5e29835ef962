"""Which command rule a card's "Save to project" offers (docs/security.md "What Save to project offers").

Owns `offered_command_pattern(cmd, cwd, workspace)`: the pattern of the allow rule the card may
offer for one approved shell command, or None. The offer comes from the program tables
(`command_effects`), the same tables the rule check reads, and only when:

* the call is one simple command whose program the tables know, run by its bare name, with its
  subcommand right after it for a program that has subcommands (`git status -s` → `git status`,
  `pip3 show numpy` → `pip3 show`, `ls -la` → `ls`) — never a whole program penguin does not know,
  never a program given by path or after `X=…`, never a compound command;
* the offered call itself is fully covered by the rule it would save
  (`command_effects.uncovered_reason`): every option known and only changing the output, every
  path read inside the workspace and no credential, nothing reaching the network or running a
  program, and no configuration of the folder that runs (a repository whose `.git/config` sets
  `core.fsmonitor`, an `.npmrc`).

The offer is the command's leading words without `*`, so the matcher's word-prefix mode applies
(`git status` matches `git status -s`, never `git statusx`; `ls` matches `ls -la`, never `lsof`).
Which tools get an offer at all is `state/approval_rules.suggested_rule`'s.
"""

from __future__ import annotations

import shlex

from .command_effects import analyse_command, uncovered_reason


def offered_command_pattern(cmd: str, cwd: str, workspace: str) -> str | None:
    """The word-prefix pattern "Save to project" offers for `cmd` run in `cwd`, or None."""
    analysed = analyse_command(cmd, cwd)
    if analysed is None or len(analysed) != 1:
        return None
    effects = analysed[0]
    if effects.offer_words == 0 or uncovered_reason(effects, 0, workspace) is not None:
        return None  # named=0: what the program or subcommand always does counts too (npm view)
    return shlex.join(effects.words[: effects.offer_words])
