"""The command analysis behind the approval rules (environment/command_effects/): for each program
the tables know, which words are known-safe, which read, write, load, reach the network, run a
program or show credentials, and which are unknown — table-driven, against a real workspace and
a private HOME; git's repository configuration (parser, discovery, bounds, cache); the spellings
a deny rule catches; what a hand-written rule covers; and the credential check of a command's
words under a tool-wide rule and "always allow"."""

from __future__ import annotations

import contextvars
import os
import subprocess
from pathlib import Path

import pytest

from penguin_jupyter.environment.command_effects import (
    analyse_command,
    credential_argument_reason,
    git_config,
    uncovered_reason,
)
from penguin_jupyter.environment.command_effects.describe import FULL_DOC, full_markdown, summary_markdown
from penguin_jupyter.environment.command_effects.git_repository import repository_effects
from penguin_jupyter.environment.command_effects.spellings import spellings
from penguin_jupyter.environment.saved_rule_offer import offered_command_pattern
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.omni import tool_call
from penguin_jupyter.state.approval_rules import Rule, RuleBook


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a few files, a repository, and a private HOME holding credentials."""
    workspace = tmp_path / "ws"
    (workspace / "data").mkdir(parents=True)
    (workspace / "data" / "a.csv").write_text("x\n1\n")
    (workspace / "data" / "b.csv").write_text("x\n2\n")
    (workspace / "README.md").write_text("hello\n")
    for folder in ("objects", "refs"):  # what git's discovery looks for (no subprocess per case)
        (workspace / ".git" / folder).mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
    home = Path.home()
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\nkey = secret\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    return workspace


# (command, what a rule naming its program (and subcommand) says: None = covered, else a part of the reason)
TABLE = [
    # coreutils
    ("cat README.md data/a.csv", None),
    ("cat -n -A README.md", None),
    ("cat --show-a README.md", "--show-a is not an option penguin knows"),  # getopt abbreviations are unknown
    ("cat ~/.aws/credentials", "cat reads a credential file: ~/.aws/credentials"),
    ("cat /etc/hostname", "cat reads outside the workspace: /etc/hostname"),
    ("cat data/../../elsewhere.txt", "cat reads outside the workspace"),
    ("cat .git/../~/.ssh/id_rsa", None),  # a literal `~` folder inside the workspace: bash would not expand it
    ("head -n 5 data/a.csv", None),
    ("head -5 data/a.csv", None),
    ("head -n -5 data/a.csv", None),
    ("head -n --bytes=1 data/a.csv", "is given '--bytes=1' as its value"),
    ("tail -f -n 20 data/a.csv", None),
    ("tail --follow=name data/a.csv", None),
    ("wc -l data/*.csv", None),
    ("wc --files0-from=list.txt", "--files0-from is not an option penguin knows"),
    ("ls -la data", None),
    ("ls", None),
    ("ls -L data", "-L is not an option penguin knows"),
    ("ls ~/.ssh", "ls reads a credential file"),
    ("du -sh data", None),
    ("du -X ~/.aws/credentials data", "du -X reads a credential file"),
    ("df -h .", None),
    ("stat -c %s README.md", None),
    ("file -b data/a.csv", None),
    ("file -C -m magic", "-C is not an option penguin knows"),
    ("diff data/a.csv data/b.csv", None),
    ("diff -u data/a.csv /etc/hostname", "diff reads outside the workspace"),
    ("diff -r data data", "-r is not an option penguin knows"),
    ("diff -l data/a.csv data/b.csv", "-l is not an option penguin knows"),
    ("echo hello world", None),
    ("echo $HOME", "holds a shell expansion"),
    ("echo ${IFS}--output=x", "holds a shell expansion"),
    ("cat data/{a,b}.csv", "holds a brace expansion"),
    ("pwd", None),
    ("which python", None),
    # search
    ("grep -rn hello .", None),
    ("grep -e hello README.md", None),
    ("grep -f ~/.aws/credentials README.md", "grep -f reads a credential file"),
    ("grep key ~/.aws/credentials", "grep reads a credential file"),
    ("grep -R key .", "-R is not an option penguin knows"),
    ("grep -3 hello README.md", None),
    ("rg -n hello", None),
    ("rg --pre ./decode.sh hello", "rg --pre runs a preprocessor program: ./decode.sh"),
    ("rg -z hello", "-z is not an option penguin knows"),
    ("rg -L hello", "-L is not an option penguin knows"),
    ("rg --files data", None),
    # git
    ("git status --short", None),
    ("git status --porcelain=v2 -uno", None),
    ("git log --oneline -5", None),
    ("git log -n 3 --stat --format=%h%x09%an", None),
    ("git log --format=%G?", "git log --format runs gpg"),
    ("git log --show-signature", "git log --show-signature runs gpg"),
    ("git log --output=out.txt", "git log --output writes out.txt"),
    ("git log --output out.txt", "git log --output writes out.txt"),
    ("git log --outp=out.txt", "--outp is not an option penguin knows"),
    ("git diff --stat HEAD", None),
    ("git diff --ext-diff", "git diff --ext-diff runs an external diff program"),
    ("git diff -O ~/.aws/credentials", "git diff -O reads a credential file"),
    ("git show HEAD --name-only", None),
    ("git blame -L 1,2 README.md", None),
    ("git blame --contents ~/.ssh/id_rsa README.md", "git blame --contents reads a credential file"),
    ("git shortlog -sn HEAD", None),
    ("git shortlog --group=format:%GS HEAD", "git shortlog --group runs gpg"),
    ("git ls-files -o --exclude-standard", None),
    ("git ls-files --recurse-submodules", "--recurse-submodules is not an option penguin knows"),
    ("git ls-tree -r HEAD", None),
    ("git rev-parse --show-toplevel", None),
    ("git describe --tags --always", None),
    ("git --no-pager log -1", None),
    ("git -C .. status", "git -C is not an option penguin knows"),
    ("git -c core.pager=evil log", "git -c is not an option penguin knows"),
    ("git --git-dir=/tmp/x status", "--git-dir is not an option penguin knows"),
    ("git -p status", "-p is not an option penguin knows"),
    ("git stash drop", "stash is not a subcommand penguin knows"),
    ("git status --help", "--help is not an option penguin knows"),  # runs man, a browser…
    # python packages
    ("pip list", None),
    ("pip list --format=json --not-required", None),
    ("pip3 show -f numpy", None),
    ("pip freeze --all", None),
    ("pip check", None),
    ("pip list -o", "pip list -o reaches the package index"),
    ("pip list --index-url http://127.0.0.1:9/x/", "pip list --index-url reaches a package index: http://127.0.0.1:9/x/"),
    ("pip list --index=http://x/", "--index is not an option penguin knows"),  # optparse abbreviation
    ("pip list --python ./evil", "pip list --python runs another Python interpreter"),
    ("pip --log out.txt list", "pip list --log writes out.txt"),
    ("pip install x", "install is not a subcommand penguin knows"),
    ("pip freeze -r ~/.aws/credentials", "pip freeze -r reads a credential file"),
    ("conda list numpy", None),
    ("conda list --explicit --auth", "conda list --auth shows channel credentials"),
    ("conda info --envs", None),
    ("conda info --unsafe-channels", "shows channel credentials"),
    ("conda info numpy", "takes no operand"),
    # containers
    ("docker ps -a --format '{{.Names}}'", None),
    ("docker images -q", None),
    ("docker -H tcp://198.51.100.7:2375 ps", "docker ps -H reaches another docker daemon: tcp://198.51.100.7:2375"),
    ("docker --config ./dcfg ps", "docker ps --config loads dcfg (it can run a program)"),
    ("docker inspect web", "docker inspect shows a container's environment"),
    ("docker run -it ubuntu", "run is not a subcommand penguin knows"),
    ("kubectl get pods -n kube-system -o wide", None),
    ("kubectl get pods -n=kube-system --show-labels=true", None),
    ("kubectl -n kube-system get pods", None),
    ("kubectl get pods --kubeconfig ./k.yaml", "kubectl get --kubeconfig loads k.yaml"),
    ("kubectl get pods -s https://203.0.113.9", "kubectl get -s reaches another API server"),
    ("kubectl get pods -o go-template-file=~/.aws/credentials", "kubectl get -o reads a credential file"),
    ("kubectl get secrets -o yaml", "kubectl get shows Secrets from the cluster: secrets"),
    ("kubectl get pods,secret/db", "Secrets from the cluster"),
    ("kubectl get --raw /api/v1/namespaces/default/secrets", "kubectl get --raw shows Secrets from the cluster"),
    ("kubectl get -f pod.yaml", "-f is not an option penguin knows"),
    ("kubectl get pods -v=9", "-v is not an option penguin knows"),
    ("kubectl describe pod web", None),
    ("kubectl logs web -c app --tail=-1 -f", None),
    ("kubectl logs web --tail -1", None),
    ("kubectl top pod -A", None),
    ("kubectl explain pods.spec --recursive", None),
    ("kubectl version --client -o json", None),
    ("kubectl delete pods --all", "delete is not a subcommand penguin knows"),
    ("kubectl exec -it web -- sh", "exec is not a subcommand penguin knows"),
    # npm, nvidia-smi
    ("npm ls --depth=0", None),
    ("npm list --json", None),
    ("npm ls --registry=http://x/", "--registry is not an option penguin knows"),
    ("npm outdated", None),  # the rule names `npm outdated`: asking the registry is what it names
    ("nvidia-smi", None),
    ("nvidia-smi --query-gpu=name,memory.used --format=csv -lms 500", None),
    ("nvidia-smi -f out.txt", "nvidia-smi -f writes out.txt"),
    ("nvidia-smi -pm 1", "-pm is not an option penguin knows"),
    ("nvidia-smi topo -m", "takes no operand"),
    # programs the tables leave out, or given by path
    ("less README.md", "less is not a program penguin knows"),
    ("jupyter kernelspec list", "jupyter is not a program penguin knows"),
    ("python -m pip list", "python is not a program penguin knows"),
    ("./cat README.md", "./cat is not a program penguin knows"),
    ("/bin/cat README.md", "/bin/cat is not a program penguin knows"),
    ("A=1 cat README.md", "A=1 is not a program penguin knows"),
]


@pytest.mark.parametrize(("cmd", "expected"), TABLE)
def test_what_a_rule_naming_the_program_covers(ws: Path, cmd: str, expected: str | None) -> None:
    analysed = analyse_command(cmd, str(ws))
    assert analysed is not None and len(analysed) == 1
    effects = analysed[0]
    reason = uncovered_reason(effects, effects.offer_words, str(ws))
    if expected is None:
        assert reason is None, f"{cmd}: {reason}"
    else:
        assert reason is not None and expected in reason, f"{cmd}: {reason}"


def test_a_glob_is_expanded_and_each_match_checked(ws: Path) -> None:
    (ws / "-n").write_text("")
    (ws / "--output=x").write_text("")
    for cmd in ("cat *", "git log *"):
        effects = analyse_command(cmd, str(ws))[0]  # type: ignore[index]
        reason = uncovered_reason(effects, effects.offer_words, str(ws)) or ""
        assert "which reads as an option" in reason, cmd
    effects = analyse_command("cat ~/.aws/*", str(ws))[0]  # type: ignore[index]
    assert "cat reads a credential file: ~/.aws/credentials" in (uncovered_reason(effects, 1, str(ws)) or "")
    effects = analyse_command("wc -l data/*.csv", str(ws))[0]  # type: ignore[index]
    read = sorted(effect.what for effect in effects.effects if effect.kind == "reads")
    assert str(ws / "data" / "a.csv") in read and str(ws / "data" / "b.csv") in read


def test_a_path_through_a_symlink_is_judged_where_it_lands(ws: Path) -> None:
    (ws / "notes").symlink_to(Path.home() / ".ssh")
    (ws / "out").symlink_to(Path.home())
    effects = analyse_command("cat notes/id_rsa", str(ws))[0]  # type: ignore[index]
    assert "credential" in (uncovered_reason(effects, 1, str(ws)) or "")
    effects = analyse_command("git log --output out/.bashrc", str(ws))[0]  # type: ignore[index]
    assert "git log --output writes ~/.bashrc" in (uncovered_reason(effects, 2, str(ws)) or "")


def test_a_recursive_read_of_the_home_folder_reads_its_credentials(ws: Path) -> None:
    """A notebook in the home folder: `grep -r key .` is a read inside the workspace, and of
    ~/.aws/credentials too; `ls .` only lists it."""
    home = str(Path.home())
    (Path.home() / ".config" / "gh").mkdir(parents=True)
    (Path.home() / ".config" / "gh" / "hosts.yml").write_text("oauth_token: x\n")
    book = RuleBook(project=[Rule("allow", "exec_command", command=program, source="p.toml") for program in ("grep", "rg", "ls")])
    for cmd in ("grep -r key .", "grep -rl key", "rg key", "rg --hidden key .config", "grep -r key .aws"):
        verdict = book.judge("exec_command", {"cmd": cmd}, home)
        assert verdict is not None and verdict.uncovered and "credential" in verdict.note, (cmd, verdict)
    assert book.judge("exec_command", {"cmd": "ls -a ."}, home).action == "allow"  # type: ignore[union-attr]
    assert book.judge("exec_command", {"cmd": "grep -r x data"}, str(ws)).action == "allow"  # type: ignore[union-attr]


def test_a_workdir_outside_the_workspace_reads_outside_it(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    effects = analyse_command("ls", str(elsewhere))[0]  # type: ignore[index]
    assert "ls reads outside the workspace" in (uncovered_reason(effects, 1, str(ws)) or "")
    book = RuleBook(project=[Rule("allow", "exec_command", command="ls", source="p.toml")])
    verdict = book.judge("exec_command", {"cmd": "ls", "workdir": str(elsewhere)}, str(ws))
    assert verdict is not None and verdict.uncovered and "reads outside the workspace" in verdict.note
    assert book.judge("exec_command", {"cmd": "ls", "workdir": "data"}, str(ws)).action == "allow"  # type: ignore[union-attr]


def test_offers_come_only_from_the_tables_and_only_for_a_fully_covered_call(ws: Path) -> None:
    def offered(cmd: str) -> str | None:
        return offered_command_pattern(cmd, str(ws), str(ws))

    assert offered("git status -s") == "git status"
    assert offered("npm ls --depth=0") == "npm ls"
    assert offered("pip3 show numpy") == "pip3 show"
    for cmd in ("npm outdated", "docker inspect web", "cat ~/.aws/credentials", "cat /etc/hostname",
                "git log --output=x", "pytest", "htop", "git --no-pager status", "less README.md"):
        assert offered(cmd) is None, cmd
    (ws / ".npmrc").write_text("registry=http://198.51.100.7/\n")
    assert offered("npm ls") is None
    (ws / ".git" / "config").write_text("[core]\n\tfsmonitor = ./watch.sh\n")
    assert offered("git status") is None


# --- git's repository configuration ------------------------------------------------------------

CONFIGS = [
    ("[core]\n\trepositoryformatversion = 0\n\tbare = false\n", []),
    ("[core]\n\tfsmonitor = /tmp/hook.sh\n", ["core.fsmonitor"]),
    ("[core]\n\tfsmonitor = true\n", []),  # git's own daemon
    ("[core]fsmonitor=./x\n", ["core.fsmonitor"]),  # a key on the header's line
    ("[CORE]\n\tFSMonitor = ./x\n", ["core.fsmonitor"]),  # names are case-insensitive
    ('[diff "csv"]\n\ttextconv = ./conv\n', ["diff.csv.textconv"]),
    ('[filter "lfs"]\n\tclean = ./x %f\n', ["filter.lfs.clean"]),
    ("[pager]\n\tlog = false\n", []),
    ("[pager]\n\tlog = sh -c evil\n", ["pager.log"]),
    ("[include]\n\tpath = ../other.cfg\n", ["include.path"]),
    ('[includeIf "gitdir:~/"]\n\tpath = x\n', ["includeif.gitdir:~/.path"]),
    ("[core]\n\thooksPath = .githooks\n", ["core.hookspath"]),
    ("[core]\n\tsshCommand = ssh -o ProxyCommand=x\n", ["core.sshcommand"]),
    ("[alias]\n\tst = !sh -c x\n", ["alias.st"]),
    ("[core.x]\n\tpager = y\n", ["core.x.pager"]),  # a key in any subsection counts: over-matching is the safe side
    ("[core]\n\tworktree = /home\n", ["core.worktree"]),
    ("[blame]\n\tignoreRevsFile = ~/.ssh/id_rsa\n", ["blame.ignorerevsfile"]),
    ("[log]\n\tshowSignature = true\n", ["log.showsignature"]),
    ('[core]\n\tpager = "less \\\n  -R"\n', ["core.pager"]),  # continuation lines
    ("[core]\n\tfsmonitor = \"unterminated\n", ["reads differently"]),
    ("fsmonitor = x\n", ["reads differently"]),  # a key before any section
    ("[core\n", ["reads differently"]),
]


@pytest.mark.parametrize(("text", "found"), CONFIGS)
def test_the_config_keys_that_run_a_program_or_read_a_file(text: str, found: list[str]) -> None:
    findings = git_config.risky_keys(text)
    assert len(findings) == len(found), findings
    for finding, wanted in zip(findings, found, strict=True):
        assert finding.startswith(wanted) or wanted in finding, findings


def test_the_config_read_is_bounded_regular_and_cached(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to("/dev/zero")
    assert git_config.read_config(str(link)) == ("it is not a regular file",)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert git_config.read_config(str(fifo)) == ("it is not a regular file",)
    big = tmp_path / "big"
    big.write_text("[core]\n" + "#" * git_config.MAX_CONFIG_BYTES)
    assert "larger than" in git_config.read_config(str(big))[0]
    config = tmp_path / "config"
    config.write_text("[core]\n\tbare = false\n")
    assert git_config.read_config(str(config)) == ()
    calls: list[str] = []
    original = git_config._read_uncached

    def counted(path: str, info: os.stat_result) -> tuple[str, ...]:
        calls.append(path)
        return original(path, info)

    git_config._read_uncached = counted  # type: ignore[assignment]
    try:
        git_config.read_config(str(config))
        assert calls == []  # the same file, unchanged: cached
        config.write_text("[core]\n\tpager = x\n")
        assert git_config.read_config(str(config))[0].startswith("core.pager")
        assert calls == [str(config)]
    finally:
        git_config._read_uncached = original  # type: ignore[assignment]


def _folder_effects(cwd: Path) -> list[str]:
    return [effect.what for effect in repository_effects(str(cwd)) if effect.kind == "folder"]


def test_the_repository_is_found_as_git_finds_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub" / "deeper").mkdir(parents=True)
    assert _folder_effects(repo / "sub" / "deeper") == []
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", "./x"], check=True)
    assert "core.fsmonitor" in _folder_effects(repo / "sub" / "deeper")[0]
    # an embedded bare repository: git uses it when run inside it
    bare = repo / "sub" / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "config", "core.pager", "evil"], check=True)
    assert any("core.pager" in found for found in _folder_effects(bare))
    # a .git file points elsewhere; a .git link too
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /somewhere/else\n")
    assert "the repository lives elsewhere" in _folder_effects(worktree)[0]
    # an invalid .git folder does not hide its configuration (git would look further up)
    hiding = repo / "hiding"
    (hiding / ".git").mkdir(parents=True)
    (hiding / ".git" / "config").write_text("[core]\n\tpager = x\n")
    assert any("core.pager" in found and str(hiding) in found for found in _folder_effects(hiding))


def test_hooks_and_submodules_are_configuration_the_folder_controls(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert _folder_effects(repo) == []  # git's sample hooks run nothing
    (repo / ".git" / "hooks" / "post-index-change").write_text("#!/bin/sh\n")
    assert "post-index-change hook" in _folder_effects(repo)[0]
    (repo / ".git" / "hooks" / "post-index-change").unlink()
    (repo / ".gitmodules").write_text('[submodule "x"]\n\tpath = x\n')
    assert "submodules" in _folder_effects(repo)[0]


def test_a_repository_is_judged_by_what_it_holds(tmp_path: Path) -> None:
    """A notebook in a project's subfolder: git reads the project, covered. A dotfiles
    repository in the home folder: git can show ~/.aws, not covered. git run elsewhere (a
    `workdir` outside the workspace): outside."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    ws = tmp_path / "project" / "notebooks"
    ws.mkdir(parents=True)
    effects = analyse_command("git log -1", str(ws))[0]  # type: ignore[index]
    assert uncovered_reason(effects, 2, str(ws)) is None
    home = Path.home()
    (home / ".aws").mkdir()
    subprocess.run(["git", "init", "-q", str(home)], check=True)
    (home / "analysis").mkdir()
    effects = analyse_command("git log -p", str(home / "analysis"))[0]  # type: ignore[index]
    assert "git log reads its repository: " in (uncovered_reason(effects, 2, str(home / "analysis")) or "")
    effects = analyse_command("git status", str(tmp_path))[0]  # type: ignore[index]
    assert "git status reads outside the workspace" in (uncovered_reason(effects, 2, str(ws)) or "")


# --- deny rules: every spelling ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "cmd"),
    [
        ("git push*", "git -C /tmp/x push origin"),
        ("git push*", "git --git-dir=/tmp/x push"),
        ("git push*", "/usr/bin/git push"),
        ("curl*", "/usr/bin/curl https://x"),
        ("pip install*", "python3 -m pip install evil"),
        ("pip install*", "pip3.11 install evil"),
        ("kubectl delete*", "kubectl -n prod delete pod web"),
        ("pytest*", "python -m pytest -x"),
    ],
)
def test_a_deny_rule_catches_every_spelling(pattern: str, cmd: str) -> None:
    book = RuleBook(workspace=[Rule("deny", "exec_command", command=pattern, source="ws.toml")])
    verdict = book.judge("exec_command", {"cmd": cmd}, "/tmp")
    assert verdict is not None and verdict.action == "deny", cmd


def test_spellings_stay_close_to_the_words() -> None:
    assert spellings(["git", "commit", "-m", "push later"]) == [["git", "commit", "-m", "push later"]]
    assert ["git", "push", "origin"] in spellings(["git", "-C", "x", "push", "origin"])


# --- rules written by hand -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "cmd", "covered"),
    [
        ("git log --output=log.txt", "git log --output=log.txt", True),  # named: covered as written
        ("git log --output=log.txt", "git log --output=log.txt -p", True),
        ("git log --output=log.txt", "git log --output=other.txt", False),
        ("pytest", "pytest", True),  # a program penguin does not know: exactly the words named
        ("pytest", "pytest -x tests", False),
        ("git stash", "git stash drop", False),  # after a subcommand the tables do not know, too
        ("pytest*", "pytest", False),  # a glob names nothing it matches by its wildcard
        ("git st*", "git status", True),  # ... but what it matches may be known-safe
        ("git st*", "git stash drop", False),
        ("cat ~/.aws/credentials", "cat ~/.aws/credentials", False),  # a credential is never covered
        ("cat /etc/hostname", "cat /etc/hostname", True),  # named outside the workspace: covered
    ],
)
def test_what_a_hand_written_rule_covers(ws: Path, pattern: str, cmd: str, covered: bool) -> None:
    book = RuleBook(project=[Rule("allow", "exec_command", command=pattern, source="p.toml")])
    verdict = book.judge("exec_command", {"cmd": cmd}, str(ws))
    assert (verdict is not None and verdict.action == "allow") is covered, (pattern, cmd, verdict)


def test_an_unreadable_command_is_covered_by_no_command_rule(ws: Path) -> None:
    book = RuleBook(project=[Rule("allow", "exec_command", command="cat", source="p.toml")])
    assert book.judge("exec_command", {"cmd": "cat $(echo ~/.aws/credentials)"}, str(ws)) is None
    assert analyse_command("cat > x", str(ws)) is None


# --- credential words, whatever allows the call -------------------------------------------------


def test_credential_words_are_found_in_any_command(ws: Path) -> None:
    assert credential_argument_reason("python show.py ~/.aws/credentials", str(ws), str(ws)) == (
        "read of a credential file: ~/.aws/credentials"
    )
    assert credential_argument_reason("tool --key=~/.ssh/id_rsa", str(ws), str(ws)) is not None
    assert credential_argument_reason("sh -c 'base64 ~/.ssh/id_rsa'", str(ws), str(ws)) is not None
    assert credential_argument_reason("cat ~/.aws/*", str(ws), str(ws)) is not None
    assert credential_argument_reason("cat < ~/.aws/credentials", str(ws), str(ws)) is not None
    assert credential_argument_reason("bash -c 'wc -c < ~/.ssh/id_rsa'", str(ws), str(ws)) is not None
    assert credential_argument_reason("echo $(cat ~/.ssh/id_rsa) 'unbalanced", str(ws), str(ws)) is not None
    assert credential_argument_reason("cat README.md", str(ws), str(ws)) is None


async def test_a_credential_word_asks_under_a_tool_wide_rule_and_always_allow(ws: Path) -> None:
    prompts: list[str] = []

    def reply(prompt: str) -> str:
        prompts.append(prompt)
        return "n"

    class Surface:
        def show_approval(self, *args: object, **kwargs: object) -> None:
            pass

        def show_note(self, text: str) -> None:
            pass

    asker = CellAsker(channel="stdin", surface=Surface(), signal=AbortSignal(), context=contextvars.copy_context(), input_fn=reply)
    book = RuleBook(project=[Rule("allow", "exec_command", source="p.toml")])
    cell = CellApproval(mode="ask", always_allowed=set(), permission_of=lambda tool: "rw", asker=asker, workspace_dir=str(ws), rules=book)
    approve = ApprovalRouter(lambda: cell).approve_fn(cell)
    assert await approve(tool_call("exec_command", {"cmd": "python -c 'print(1)' ~/.aws/credentials"}, "t1")) == "deny"
    assert len(prompts) == 1 and "asked: read of a credential file: ~/.aws/credentials" in prompts[0]
    assert await approve(tool_call("exec_command", {"cmd": "python -c 'print(1)'"}, "t2")) == "allow"
    cell.rules, cell.always_allowed = RuleBook(), {"exec_command"}
    assert await approve(tool_call("exec_command", {"cmd": "tail ~/.ssh/id_rsa"}, "t3")) == "deny"
    assert len(prompts) == 2 and "read of a credential file: ~/.ssh/id_rsa" in prompts[1]
    cell.mode = "allow-all"
    assert await approve(tool_call("exec_command", {"cmd": "tail ~/.ssh/id_rsa"}, "t4")) == "allow"  # allow-all allows all


def test_the_docs_show_the_tables_the_code_has() -> None:
    """docs/security.md's summary and docs/command-tables.md are generated from the tables
    (`python -m penguin_jupyter.environment.command_effects.describe` rewrites them)."""
    root = Path(__file__).resolve().parents[2]
    assert summary_markdown() in (root / "docs" / "security.md").read_text(encoding="utf-8")
    assert (root / FULL_DOC).read_text(encoding="utf-8") == full_markdown()

