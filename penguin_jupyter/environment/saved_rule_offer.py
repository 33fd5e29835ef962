"""Which command rule a card's "Save to project" offers (docs/security.md "What Save to project offers").

Owns `offered_command_pattern(cmd)`: the pattern of the allow rule the card may offer for one
approved shell command, or None when no saved rule is offered. The offer is the command's leading
words without `*`, so the matcher's word-prefix mode applies (`git status` matches `git status -s`,
never `git statusx`; `ls` matches `ls -la`, never `lsof`):

* the program and its subcommand for a known multi-command tool (`git status`, `pip list`,
  `kubectl get`), and only for a subcommand that reads (never `git push`, `pip install`,
  `docker run`, `npm run`): a saved rule allows every option and argument after its words;
* the program alone for any other program (`ls`, `wc`, `nvidia-smi`);
* nothing for a program that deletes or overwrites, changes permissions or owners, runs code it is
  handed or that the folder holds (interpreters, shells, wrappers, `xargs`, `find`, `sed`, `awk`,
  `make`, `pytest`, package installers), moves data over the network (`curl`, `ssh`…), a program
  given by path (`./run.sh`), a leading `X=…`, a compound command, or anything the strict
  allow-reading (`command_words.strict_parts`) cannot read.

How a rule matches is `command_words.pattern_matches`; which tools get an offer at all is
`state/approval_rules.suggested_rule`'s. Rules a user writes by hand (globs included) are not
limited by these tables.
"""

from __future__ import annotations

import re
import shlex

from .command_words import strict_parts

# Programs whose own action is to delete, overwrite, change permissions, escalate, run code (given
# on the line, in a file or in the folder), install packages, or move data over the network.
NEVER_OFFERED = frozenset(
    {
        # delete, overwrite, move, link, change modes and owners
        "rm", "rmdir", "unlink", "shred", "mv", "cp", "dd", "ln", "install", "truncate", "tee",
        "chmod", "chown", "chgrp", "chattr", "setfacl", "mkfs", "mount", "umount", "fdisk",
        "kill", "pkill", "killall", "shutdown", "reboot", "systemctl", "crontab", "at",
        # escalate or wrap another command
        "sudo", "su", "doas", "pkexec", "env", "nohup", "time", "command", "exec", "builtin", "nice",
        "ionice", "stdbuf", "timeout", "xargs", "parallel", "watch", "eval", "source", ".", "trap",
        "find", "sed", "awk", "gawk", "mawk", "nawk",
        # shells and interpreters (versioned names: see _NEVER_NAMED)
        "sh", "bash", "zsh", "dash", "ksh", "csh", "tcsh", "fish", "pwsh", "powershell",
        "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "luajit", "Rscript", "R",
        "julia", "java", "tclsh", "wish", "osascript", "ipython", "jupyter", "papermill", "gdb",
        # runners of the folder's code or of downloaded packages
        "make", "cmake", "ninja", "pytest", "py.test", "tox", "nox", "npx", "pipx", "uvx",
        "go", "cargo", "gradle", "mvn", "apt", "apt-get", "dpkg", "brew", "snap",
        # network transfers and remote shells
        "curl", "wget", "ssh", "scp", "sftp", "ftp", "rsync", "nc", "ncat", "netcat", "socat",
        "telnet", "open", "xdg-open",
        # write or replace the files they are given (`sort -o`, `tar x`, `gzip` removes its input)
        "sort", "uniq", "split", "csplit", "patch", "tar", "zip", "unzip", "gzip", "gunzip", "bzip2",
        "xz", "7z", "openssl", "pandoc", "gcc", "g++", "cc", "c++", "clang", "clang++", "rustc",
        "javac", "nvcc", "gfortran", "ld",
        # editors, databases and terminals: they run what they are told
        "ed", "ex", "vi", "vim", "nvim", "nano", "emacs", "sqlite3", "duckdb", "psql", "mysql",
        "screen", "tmux", "expect",
    }
)
_NEVER_NAMED = re.compile(r"(python|pypy|ipython|ruby|perl|node|php|lua|julia)[0-9.]*[a-z]?|mkfs\..+")

# Multi-command tools: the subcommands a saved rule may be offered for (the ones that read).
READING_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset(
        # not log / diff / show: their `--output=<file>` overwrites any file
        {"status", "blame", "ls-files", "ls-tree", "rev-parse", "describe", "shortlog"}
    ),
    "pip": frozenset({"list", "show", "freeze", "check"}),
    "conda": frozenset({"list", "info", "search"}),
    "mamba": frozenset({"list", "info", "search"}),
    "micromamba": frozenset({"list", "info", "search"}),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version", "info", "stats"}),
    "podman": frozenset({"ps", "images", "logs", "inspect", "version", "info", "stats"}),
    "kubectl": frozenset({"get", "describe", "logs", "version", "top", "explain"}),
    "helm": frozenset({"list", "status", "version"}),
    "npm": frozenset({"ls", "list", "outdated", "view"}),
    "yarn": frozenset({"list", "outdated", "info"}),
    "pnpm": frozenset({"ls", "list", "outdated"}),
    "poetry": frozenset({"show", "check"}),
    "dvc": frozenset({"status", "diff"}),
    # multi-command tools with no subcommand offered (each has a `run`, an install or an upload)
    "uv": frozenset(),
    "pdm": frozenset(),
    "hatch": frozenset(),
    "pipenv": frozenset(),
    "rye": frozenset(),
    "spark-submit": frozenset(),
    "ray": frozenset(),
    "dask": frozenset(),
    "mlflow": frozenset(),
    "kaggle": frozenset(),
    "huggingface-cli": frozenset(),
    "gsutil": frozenset(),
    "ollama": frozenset(),
    "dbt": frozenset(),
    "gh": frozenset(),
    "aws": frozenset(),
    "gcloud": frozenset(),
    "az": frozenset(),
    "terraform": frozenset({"show", "validate", "version"}),
}
_PIP = re.compile(r"pip[0-9.]*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def offered_command_pattern(cmd: str) -> str | None:
    """The word-prefix pattern "Save to project" offers for `cmd`, or None (see the module)."""
    parts = strict_parts(cmd)
    if parts is None or len(parts) != 1:
        return None
    words = parts[0]
    program = words[0]
    if not _WORD.fullmatch(program) or program in NEVER_OFFERED or _NEVER_NAMED.fullmatch(program):
        return None
    tool = "pip" if _PIP.fullmatch(program) else program
    if tool in READING_SUBCOMMANDS:
        sub = words[1] if len(words) > 1 else ""
        if not _SUBCOMMAND.fullmatch(sub) or sub not in READING_SUBCOMMANDS[tool]:
            return None
        return shlex.join([program, sub])
    return program
