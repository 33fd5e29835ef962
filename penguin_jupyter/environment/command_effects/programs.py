"""The programs the tables know, by the name a command runs them by (docs/security.md "What a rule
covers").

Owns `PROGRAMS` (one entry per program; each family module owns its tables), `program_named`
(`pip3.11` is pip) and `LEFT_OUT`: programs someone may expect here, decided unknown, with why.
A program given by path (`./cat`, `/bin/cat`) is never one of these: which file a bare name runs
is the PATH check's business.
"""

from __future__ import annotations

import re

from .containers import DOCKER, KUBECTL
from .coreutils import COREUTILS
from .git import GIT
from .gpu import NVIDIA_SMI
from .npm import NPM
from .python_packages import CONDA, PIP
from .search import SEARCH
from .tables import Program

PROGRAMS: dict[str, Program] = {
    **{name: Program(name=name, command=command) for name, command in {**COREUTILS, **SEARCH}.items()},
    "nvidia-smi": Program(name="nvidia-smi", command=NVIDIA_SMI, style="single-dash"),
    "git": GIT,
    "pip": PIP,
    "conda": CONDA,
    "docker": DOCKER,
    "kubectl": KUBECTL,
    "npm": NPM,
}
_PIP = re.compile(r"pip[0-9][0-9.]*")

LEFT_OUT: dict[str, str] = {
    "less / more / most": "pagers run commands (`!cmd`, `|`, `v` opens an editor, LESSOPEN) and `less -o` writes its log",
    "jupyter": "runs `jupyter-<subcommand>` from PATH and loads Python configuration files",
    "python, node, R, julia, … (and python -m …)": "run code: the script, the folder's modules, startup files",
    "make, pytest, tox, nox, npm run, …": "run the folder's code (Makefile, conftest.py, package.json scripts)",
    "find, sed, awk, xargs, env, sudo, bash -c, …": "run other programs or write files (find -exec, sed -i, awk system())",
}


def program_named(word: str) -> Program | None:
    """The table of the program `word` runs, or None when the tables do not know it."""
    if word in PROGRAMS:
        return PROGRAMS[word]
    return PIP if _PIP.fullmatch(word) else None
