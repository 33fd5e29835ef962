"""The command policy against the forms the README names (issue 25, defect 7): which shell
texts are refused and which ordinary ones still pass, as one table. Every "refused" row below
the first block passed the policy before line continuations, `$IFS`, command substitution,
backticks and `find -delete` / `-exec rm` were understood. The last test drives a refused form
through the real approval wrapper (the one `Session.run` installs) so the host is never asked."""

from __future__ import annotations

import pytest

from penguin_jupyter.environment.command_policy import (
    evaluate_command_policy,
    wrap_approve_with_command_policy,
)
from penguin_jupyter.omni import tool_call

pytestmark = pytest.mark.security

REFUSED = [
    # caught before this round too (kept so the table is the whole promise)
    ("rm -rf /", "rm-recursive-force"),
    ("bash -c 'rm -rf build'", "rm-recursive-force"),
    ("eval 'rm -rf build'", "rm-recursive-force"),
    ("x=$(rm -rf build)", "rm-recursive-force"),
    ("echo build | xargs rm -rf", "rm-recursive-force"),
    # line continuations and $IFS: the shell joins them back into `rm -rf`
    ("rm -rf\\\n build", "rm-recursive-force"),
    ("r\\\nm -rf build", "rm-recursive-force"),
    ("rm${IFS}-rf${IFS}build", "rm-recursive-force"),
    ("rm$IFS-rf$IFS/", "rm-recursive-force"),
    # backticks as a separator
    ("echo ok; `rm -rf build`", "rm-recursive-force"),
    # a command word the shell computes, with recursive and force flags
    ("$(echo rm) -rf build", "computed-command-recursive-force"),
    ("`echo rm` -rf build", "computed-command-recursive-force"),
    ("$(printf rm) -r -f build", "computed-command-recursive-force"),
    ("$(echo $(echo rm)) -rf build", "computed-command-recursive-force"),
    ('"$(command -v rm)" -rf build', "computed-command-recursive-force"),
    ("RM=rm; $RM -rf build", "computed-command-recursive-force"),
    ("a=r; b=m; $a$b -rf build", "computed-command-recursive-force"),
    ("${RM} --recursive --force build", "computed-command-recursive-force"),
    ('eval "$(echo rm) -rf build"', "computed-command-recursive-force"),
    ('bash -c "`echo rm` -rf build"', "computed-command-recursive-force"),
    # find deleting what it finds
    ("find build -delete", "find-delete"),
    ("find . -name '*.pyc' -delete", "find-delete"),
    ("find build -exec rm {} \\;", "find-delete"),
    ("find build -exec rm -f {} +", "find-delete"),
    ("find build -execdir rm {} \\;", "find-delete"),
    ("find build -type f -exec /bin/rm {} +", "find-delete"),
    ("find build -ok unlink {} \\;", "find-delete"),
    ("sh -c 'find / -delete'", "find-delete"),
]

ALLOWED = [
    "rm -r build",
    "rm -f x.txt",
    "git rm -r --cached build",
    "cp -rf a b",
    "echo \\\n hello",
    "ls `pwd`",
    "$(which python) -m pytest -q",
    "$PYTHON -m pip install -r requirements.txt",
    "grep -r -f patterns.txt .",
    "find . -name '*.py'",
    "find . -name deleted.txt",
    "find . -name '*.log' -print",
    "find . -type f -exec grep -l TODO {} +",
    "find . -newer x -exec ls -l {} +",
]

# Known not caught (the README says so): the policy reads the text, it does not run a shell.
NOT_CAUGHT = [
    "echo cm0gLXJmIGJ1aWxk | base64 -d | sh",
    "python -c 'import shutil; shutil.rmtree(\"build\")'",
    "bash cleanup.sh",
]


@pytest.mark.parametrize(("cmd", "rule"), REFUSED)
def test_refused(cmd: str, rule: str) -> None:
    assert evaluate_command_policy(cmd) == rule


@pytest.mark.parametrize("cmd", ALLOWED)
def test_allowed(cmd: str) -> None:
    assert evaluate_command_policy(cmd) is None


@pytest.mark.parametrize("cmd", NOT_CAUGHT)
def test_documented_gaps_stay_documented(cmd: str) -> None:
    assert evaluate_command_policy(cmd) is None  # if this starts failing, update the README's list


async def test_a_continued_rm_is_forbidden_before_the_host_is_asked() -> None:
    asked: list[str] = []

    async def host(call):
        asked.append(call.payload.name)
        return "allow"

    approve = wrap_approve_with_command_policy(host)
    assert await approve(tool_call("exec_command", {"cmd": "rm -rf\\\n build"}, "c1")) == "forbidden"
    assert await approve(tool_call("exec_command", {"cmd": "$(echo rm) -rf build"}, "c2")) == "forbidden"
    chars = {"process_id": "p", "chars": "find build -delete\n"}
    assert await approve(tool_call("input_command", chars, "c3")) == "forbidden"
    assert asked == []
    assert await approve(tool_call("exec_command", {"cmd": "find . -name '*.py'"}, "c4")) == "allow"
