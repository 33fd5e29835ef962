"""Approval rules: what judging a tool call and reading the rule files cost.

`RuleBook.judge` runs for every tool call a cell's agents make, before anything is asked;
`cell_rules` reads the policy and the rule files once per `%%penguin` cell. Measured for 10,
100 and 1,000 project rules (all `exec_command` command rules, the worst case: every one is
tried), for a plain command (`git status --short` in a git repository: the command analysis
reads the repository's configuration, cached), a file read (`cat data/a.csv`: the path is
checked against the credential list) and a compound one with substitutions, medians over many
runs.
Path rules too: `write_file` against N deny and N allow path rules, each judged by what the call
touches (the path as the tool opens it and the file it reaches, worked out once per call).
Goal: judge ≤ 1 ms per call at 100 rules; reading 1,000 rules ≤ 50 ms.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import print_table  # noqa: E402

COMMANDS = {
    "plain": "git status --short",
    "read": "cat data/a.csv",
    "compound": "git status && ls -la; echo $(date) | tee out.txt; bash -c 'make test'",
}


def _median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    os.environ["PENGUIN_HOME"] = tempfile.mkdtemp(prefix="bench-rules-")
    os.environ.setdefault("PENGUIN_POLICY", str(Path(os.environ["PENGUIN_HOME"]) / "none.toml"))
    Path(os.environ["PENGUIN_POLICY"]).write_text('deny = [ { tool = "exec_command", command = "curl*" } ]\n')
    from penguin_jupyter.notebook.runtime.cell_rules import cell_rules
    from penguin_jupyter.state.approval_rules import Rule, RuleBook, _write_rules, project_rules_path
    from penguin_jupyter.state.paths import resolve_root

    workspace = tempfile.mkdtemp(prefix="bench-ws-")
    subprocess.run(["git", "init", "-q", workspace], check=True)
    os.makedirs(os.path.join(workspace, "data"))
    Path(workspace, "data", "a.csv").write_text("x\n1\n")
    rows = []
    for count in (10, 100, 1000):
        rules = [Rule("allow", "exec_command", command=f"tool{n} sub*", source="p") for n in range(count)]
        rules.append(Rule("allow", "exec_command", command="git status*", source="p"))
        rules.append(Rule("allow", "exec_command", command="cat", source="p"))
        book = RuleBook(project=rules)
        judged = [
            _median_ms(lambda cmd=cmd, book=book: book.judge("exec_command", {"cmd": cmd}, workspace), 200)
            for cmd in COMMANDS.values()
        ]
        _write_rules(project_rules_path(resolve_root(None), "default_project"), rules)
        read = _median_ms(lambda: cell_rules(workspace), 20)
        rows.append([count, *judged, read])
    print_table(
        "approval rules: judge one call, read the files at a cell's start (median ms)",
        ["project rules", "judge plain", "judge read", "judge compound", "cell_rules read"],
        rows,
        ["goal: judge ≤ 1 ms at 100 rules; reading 1,000 rules ≤ 50 ms"],
    )
    path_rules(workspace)


def path_rules(workspace: str) -> None:
    """N deny + N allow `write_file` path rules; the call is allowed by the last allow rule."""
    from penguin_jupyter.state.approval_rules import Rule, RuleBook

    rows = []
    for count in (10, 100, 1000):
        deny = [Rule("deny", "write_file", path=f"data{n}/*", source="p") for n in range(count)]
        allow = [Rule("allow", "write_file", path=f"out{n}/*", source="p") for n in range(count)]
        book = RuleBook(project=[*deny, *allow, Rule("allow", "write_file", path="notes/*", source="p")])
        arguments = {"file_path": "notes/a.md", "content": "x"}
        rows.append([count, _median_ms(lambda book=book, arguments=arguments: book.judge("write_file", arguments, workspace), 200)])
    print_table(
        "path rules: judge one write_file call against N deny and N allow path rules (median ms)",
        ["rules of each", "judge"],
        rows,
        ["goal: judge ≤ 1 ms at 100 rules"],
    )


if __name__ == "__main__":
    main()
