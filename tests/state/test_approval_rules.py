"""Approval rules and the administrator's policy, without a kernel: the command matcher over a
table of commands (compound commands, quoting, substitutions, redirections, newlines, `env X=…`,
`bash -c`), rule files (errors naming file, rule and field; workspace allows ignored), the
policy file, and the router's precedence: policy > deny > command policy > ask/allow rules >
mode, with the reason each decision not made by a click records."""

from __future__ import annotations

import contextvars
import stat
from pathlib import Path

import pytest

from penguin_jupyter.environment.command_policy import wrap_approve_with_command_policy
from penguin_jupyter.environment.command_words import loose_parts, pattern_matches, strict_parts
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.notebook.runtime.cell_rules import ForgetError, capped_mode, cell_rules, forget, listing
from penguin_jupyter.omni import OmniMessage, tool_call
from penguin_jupyter.state.admin_policy import parse_policy
from penguin_jupyter.state.approval_rules import (
    Rule,
    RuleBook,
    parse_rules_text,
    project_rules_path,
    read_workspace_rules,
    save_project_rule,
    suggested_rule,
)
from penguin_jupyter.state.errors import ConfigError
from tests.support.declared import declare_notebook_tools
from tests.support.policy import policy_named

pytestmark = pytest.mark.security

declare_notebook_tools()  # run_python and the notebook tools, as a kernel's session declares them

ALLOW_GIT_STATUS = Rule("allow", "exec_command", command="git status*", source="rules.toml")
ALLOW_LS = Rule("allow", "exec_command", command="ls", source="rules.toml")

# (command, allowed by `git status*` + `ls`?)
ALLOW_TABLE = [
    ("git status", True),
    ("git status --short", True),
    ("  git   status  ", True),
    ("ls -la", True),
    ("git status && ls", True),  # every part allowed
    ("git status; rm -rf ~", False),
    ("git status && curl https://x.example/?d=1", False),
    ("git status || touch x", False),
    ("git status | sh", False),
    ("git status & curl x", False),
    ("git status\ntouch x", False),
    ("git status $(curl x)", False),
    ("git status `id`", False),
    ("git status > out.txt", False),
    ("git status 2>&1", False),
    ("git status < /etc/passwd", False),
    ("cat <(curl x)", False),
    ("env GIT_DIR=/tmp git status", False),
    ("GIT_SSH_COMMAND=evil git status", False),
    ("bash -c 'git status'", False),
    ("sh -c 'git status; rm x'", False),
    ("(git status)", False),
    ("git status 'unbalanced", False),
    ('git commit -m "git status"', False),
    ("git statusx", False),  # `git status*` names only `git`: `statusx` must be known-safe, and is no subcommand
    ('echo "a;b"', False),
]



@pytest.mark.parametrize(("command", "allowed"), ALLOW_TABLE)
def test_allow_rules_match_every_part_and_nothing_the_words_do_not_say(command: str, allowed: bool) -> None:
    book = RuleBook(project=[ALLOW_GIT_STATUS, ALLOW_LS])
    verdict = book.judge("exec_command", {"cmd": command}, "/tmp")
    assert (verdict is not None and verdict.action == "allow") is allowed, command


DENY_CURL = Rule("deny", "exec_command", command="curl*", source="rules.toml")

# (command, denied by `curl*`?)
DENY_TABLE = [
    ("curl https://x", True),
    ("ls; curl x", True),
    ("ls && curl x", True),
    ("echo $(curl x)", True),
    ("echo `curl x`", True),
    ("cat <(curl x)", True),
    ("env A=1 curl x", True),
    ("A=1 curl x", True),
    ("sudo -u root curl x", True),
    ("bash -c 'ls; curl x'", True),
    ("nohup sh -c \"curl x\"", True),
    ("ls\ncurl x", True),
    ("curl x > out.txt", True),
    ("echo curl", False),
    ("ls -la", False),
    ("'curl' x", True),  # quoting does not hide a word
]


@pytest.mark.parametrize(("command", "denied"), DENY_TABLE)
def test_deny_rules_see_through_compounds_substitutions_and_wrappers(command: str, denied: bool) -> None:
    book = RuleBook(project=[DENY_CURL, Rule("allow", "exec_command", source="rules.toml")])
    verdict = book.judge("exec_command", {"cmd": command}, "/tmp")
    assert verdict is not None
    assert (verdict.action == "deny") is denied, command


def test_an_unreadable_command_asks_when_a_deny_rule_could_apply() -> None:
    book = RuleBook(project=[DENY_CURL])
    verdict = book.judge("exec_command", {"cmd": "ls 'unbalanced"}, "/tmp")
    assert verdict is not None and verdict.action == "ask"
    assert "could not be checked" in book.label(verdict)


def test_the_matcher_parts() -> None:
    assert strict_parts("a 'b c' ; d") == [["a", "b c"], ["d"]]
    assert strict_parts("a > f") is None and strict_parts("a $(b)") is None
    assert loose_parts("a $(b c) > f") == [["a"], ["b", "c"]]
    assert pattern_matches("git status", ["git", "status", "-s"])
    assert not pattern_matches("git status", ["git", "stash"])
    assert pattern_matches("py*", ["pytest", "-x"])


def test_deny_beats_ask_beats_allow() -> None:
    ask = Rule("ask", "exec_command", command="git*", source="ws.toml")
    deny = Rule("deny", "exec_command", command="git push*", source="ws.toml")
    book = RuleBook(project=[ALLOW_GIT_STATUS], workspace=[ask, deny])
    assert book.judge("exec_command", {"cmd": "git status"}, "/tmp").action == "ask"  # type: ignore[union-attr]
    assert book.judge("exec_command", {"cmd": "git push origin"}, "/tmp").action == "deny"  # type: ignore[union-attr]
    assert book.judge("read_file", {"file_path": "a"}, "/tmp") is None


def test_path_rules_are_globs_relative_to_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "link").symlink_to("/etc")
    allow = Rule("allow", "read_file", path="data/*.csv", source="r")
    everything = Rule("allow", "write_file", path="*", source="r")
    deny = Rule("deny", "write_file", path="data/raw/*", source="r")
    book = RuleBook(project=[allow, everything, deny])
    ws = str(tmp_path)
    assert book.judge("read_file", {"file_path": "data/a.csv"}, ws).action == "allow"  # type: ignore[union-attr]
    assert book.judge("read_file", {"file_path": str(tmp_path / "data/a.csv")}, ws).action == "allow"  # type: ignore[union-attr]
    assert book.judge("read_file", {"file_path": "data/a.txt"}, ws) is None
    assert book.judge("write_file", {"file_path": "data/raw/x.csv", "content": ""}, ws).action == "deny"  # type: ignore[union-attr]
    assert book.judge("write_file", {"file_path": "../outside.txt", "content": ""}, ws) is None
    assert book.judge("write_file", {"file_path": "link/passwd", "content": ""}, ws) is None  # really /etc


def test_bad_rule_files_name_the_file_the_rule_and_the_field() -> None:
    cases = {
        '[[rule]]\naction = "allow"\ntool = "exec_command"\n[[rule]]\naction = "yes"\ntool = "x"\n': "f.toml: rule 2: action:",
        '[[rule]]\naction = "allow"\n': "f.toml: rule 1: tool:",
        '[[rule]]\naction = "allow"\ntool = "run_python"\ncommand = "x"\n': "f.toml: rule 1: command: run_python takes no shell command",
        '[[rule]]\naction = "allow"\ntool = "exec_command"\npath = "x"\n': "f.toml: rule 1: path: exec_command takes no file path",
        '[[rule]]\naction = "allow"\ntool = "exec_command"\ncmd = "x"\n': "f.toml: rule 1: cmd: unknown field",
        "rule = 3\n": "f.toml: rule: must be [[rule]] tables",
        "[[rule]\n": "f.toml: not valid TOML",
    }
    for text, expected in cases.items():
        with pytest.raises(ConfigError) as info:
            parse_rules_text(text, "f.toml")
        assert str(info.value).startswith(expected), str(info.value)
        assert "\n" not in str(info.value)


def test_a_bad_file_applies_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    (ws / ".penguin").mkdir(parents=True)
    (ws / ".penguin" / "approvals.toml").write_text('[[rule]]\naction = "deny"\ntool = "exec_command"\n[[rule]]\nbad = 1\n')
    with pytest.raises(ConfigError, match=r"approvals.toml: rule 2: bad: unknown field"):
        cell_rules(str(ws))


def test_workspace_rules_only_tighten(tmp_path: Path) -> None:
    (tmp_path / ".penguin").mkdir()
    (tmp_path / ".penguin" / "approvals.toml").write_text(
        '[[rule]]\naction = "allow"\ntool = "exec_command"\n'
        '[[rule]]\naction = "deny"\ntool = "exec_command"\ncommand = "curl*"\n'
    )
    rules, note = read_workspace_rules(str(tmp_path))
    assert [rule.action for rule in rules] == ["deny"]
    assert note is not None and "rule 1: allow ignored" in note and "\n" not in note


def test_saved_rules_are_private_and_listed_and_forgotten(tmp_path: Path) -> None:
    root = Path(__import__("os").environ["PENGUIN_HOME"])
    saved = save_project_rule(root, "default_project", ALLOW_GIT_STATUS)
    path = project_rules_path(root, "default_project")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert 'command = "git status*"' in path.read_text()
    book = cell_rules(str(tmp_path)).book
    assert book.project == [saved]
    header, first, second, footer = listing(book, {"run_python"})
    assert "deny beats ask beats allow" in header and "--approve mode" in header
    assert first.split()[:4] == ["1", "allow", "exec_command", "command"] and f"project: {path}" in first
    assert 'this session ("Always allow" on a card)' in second and "run_python" in second
    assert footer.startswith("%penguin rules forget N removes rule N")
    session = {"run_python"}
    assert "forgot rule 2" in forget(book, session, 2) and session == set()
    assert "forgot rule 1" in forget(book, session, 1)
    assert cell_rules(str(tmp_path)).book.project == []
    with pytest.raises(ForgetError, match="there is no rule 5"):
        forget(book, session, 5)


# (command, the command rule "Save to project" offers or None, neighbours it must not allow)
OFFER_TABLE = [
    ("ls -la", "ls", ["lsof", "lsblk", "ls; rm -r ~"]),
    ("ls", "ls", ["lsof -i"]),
    ("git status -s", "git status", ["git statusx", "git push", "git status; rm -r ~"]),
    ("git ls-files", "git ls-files", ["git ls-filesx", "git reset --hard"]),
    ("git log --oneline", "git log", ["git log --output=out.txt", "git logx"]),  # --output is not covered
    ("sort -o data.csv data.csv", None, []),
    ("gcc -o out main.c", None, []),
    ("uv run script.py", None, []),
    ("pip list", "pip list", ["pip install evil"]),
    ("pip3 show numpy", "pip3 show", ["pip3 install x"]),
    ("kubectl get pods", "kubectl get", ["kubectl delete pods --all", "kubectl exec -it p -- sh"]),
    ("nvidia-smi", "nvidia-smi", ["nvidia-smix"]),
    ("wc -l data.csv", "wc", ["wcx"]),
    ("python -m pip install x", None, ["python -c 'import os'"]),
    ("python3.11 script.py", None, []),
    ("pip install x", None, []),
    ("git push origin main", None, []),
    ("git -C /tmp status", None, []),
    ("git config alias.x '!sh'", None, []),
    ("docker run -it ubuntu", None, []),
    ("npm run build", None, []),
    ("rm -r data", None, ["rm -r ~"]),
    ("rmdir out", None, []),
    ("mv a b", None, []),
    ("cp a b", None, []),
    ("dd if=/dev/zero of=x", None, []),
    ("chmod 600 x", None, []),
    ("chown me x", None, []),
    ("sudo ls", None, []),
    ("bash run.sh", None, []),
    ("sh -c 'ls'", None, []),
    ("zsh", None, []),
    ("node app.js", None, []),
    ("perl -e 1", None, []),
    ("ruby x.rb", None, []),
    ("Rscript x.R", None, []),
    ("julia x.jl", None, []),
    ("pytest -x tests", None, []),
    ("make all", None, []),
    ("find . -name '*.csv'", None, []),
    ("xargs rm", None, []),
    ("curl https://x.example", None, []),
    ("./run.sh", None, []),
    ("/bin/ls", None, []),
    ("env A=1 ls", None, []),
    ("A=1 ls", None, []),
    ("git status; rm x", None, []),
    ("git status && ls", None, []),
    ("ls > out.txt", None, []),
    ("ls $(pwd)", None, []),
    ("ls 'unbalanced", None, []),
]


@pytest.mark.parametrize(("cmd", "offered", "neighbours"), OFFER_TABLE)
def test_the_command_rule_a_card_offers(cmd: str, offered: str | None, neighbours: list[str]) -> None:
    rule = suggested_rule("exec_command", {"cmd": cmd}, "/w")
    assert (rule.command if rule else None) == offered
    if rule is None:
        return
    assert rule == Rule("allow", "exec_command", command=offered) and "*" not in offered
    book = RuleBook(project=[rule])
    assert book.judge("exec_command", {"cmd": cmd}, "/w") is not None  # the approved command itself
    for neighbour in neighbours:
        verdict = book.judge("exec_command", {"cmd": neighbour}, "/w")
        assert verdict is None or verdict.action != "allow", neighbour


def test_the_rule_a_card_offers_for_other_tools(tmp_path: Path) -> None:
    workspace = str(tmp_path)
    assert suggested_rule("read_file", {"file_path": "data/a.csv"}, workspace) == Rule("allow", "read_file", path="data/a.csv")
    assert suggested_rule("write_file", {"file_path": "out/b.csv", "content": "x"}, workspace) == Rule("allow", "write_file", path="out/b.csv")
    assert suggested_rule("read_file", {"file_path": "/etc/passwd"}, workspace) is None
    assert suggested_rule("write_file", {"file_path": ".penguin/approvals.toml", "content": "x"}, workspace) is None
    for tool in ("run_python", "run_cell", "insert_cell", "edit_cell", "delete_cell", "input_command"):
        assert suggested_rule(tool, {"code": "1", "cell": 1}, workspace) is None, tool
    assert suggested_rule("run_subagent", {"prompt": "x"}, workspace) == Rule("allow", "run_subagent")


# --- the policy -------------------------------------------------------------------------------


def test_policy_file() -> None:
    policy = parse_policy(
        'max_approve = "ask"\ndisabled_tools = ["run_subagent"]\nallowed_models = ["openai/gpt-5.5"]\n'
        'deny = [ { tool = "exec_command", command = "curl*" } ]\nread_dotenv = false\n',
        "/etc/penguin/policy.toml",
    )
    assert policy.cap_mode("allow-all") == "ask" and policy.cap_mode("read-only") == "ask"
    assert policy.cap_mode("deny-all") == "deny-all" and policy.cap_mode("ask") == "ask"
    mode, note = capped_mode("allow-all", policy)
    assert mode == "ask" and note is not None and "allows at most --approve ask" in note and "\n" not in note
    assert policy.deny[0].from_policy and policy.read_dotenv is False
    assert policy.describe() == [  # what %penguin config prints
        "administrator's policy: /etc/penguin/policy.toml",
        "  (the path was fixed when the kernel started: later changes to PENGUIN_POLICY in the kernel "
        "are ignored; the file is read again at each cell)",
        "  highest approval mode: ask (a cell asking for more runs under ask)",
        "  disabled tools (never offered to the model): run_subagent",
        "  allowed models: openai/gpt-5.5",
        "  workspace .env files read: no",
        "  model spend a day: no cap",
        '  always denied: exec_command command "curl*"',
    ]
    policy.check_model("openai", "gpt-5.5")
    with pytest.raises(ValueError, match="model openai/gpt-4 is not allowed by the administrator's policy"):
        policy.check_model("openai", "gpt-4")
    for text, field in [
        ('max_approve = "everything"\n', "max_approve"),
        ("allowed_models = [\"gpt\"]\n", "allowed_models"),
        ("read_dotenv = 1\n", "read_dotenv"),
        ("deny = [ { command = \"x\" } ]\n", "deny: rule 1: tool"),
        ("deny = [ { tool = \"exec_command\", action = \"allow\" } ]\n", "deny 1: action"),
        ("colour = 1\n", "colour"),
    ]:
        with pytest.raises(ConfigError) as info:
            parse_policy(text, "p.toml")
        assert f"p.toml: {field}" in str(info.value), str(info.value)


# --- the router: precedence -------------------------------------------------------------------


class Surface:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.notes: list[str] = []

    def show_approval(self, call: OmniMessage, row, *, background: bool = False, preview=None) -> None:
        self.asked.append(call.payload.name)  # type: ignore[union-attr]

    def show_note(self, text: str) -> None:
        self.notes.append(text)


def _cell(mode: str, book: RuleBook, *, disabled: frozenset[str] = frozenset(), answer: str = "n", ws: str = "/tmp") -> tuple[CellApproval, list[str]]:
    prompts: list[str] = []

    def reply(prompt: str) -> str:
        prompts.append(prompt)
        return answer

    asker = CellAsker(channel="stdin", surface=Surface(), signal=AbortSignal(), context=contextvars.copy_context(), input_fn=reply)
    approval = CellApproval(
        mode=mode,
        always_allowed=set(),
        permission_of=lambda tool: "r" if tool == "read_file" else "rw",  # type: ignore[arg-type,return-value]
        asker=asker,
        workspace_dir=ws,
        rules=book,
        disabled_tools=disabled,
        policy_path="/etc/penguin/policy.toml",
        save_rule=lambda rule: rule,
    )
    return approval, prompts


def _exec(cmd: str, call_id: str = "c1") -> OmniMessage:
    return tool_call("exec_command", {"cmd": cmd}, call_id)


POLICY_DENY = Rule("deny", "exec_command", command="git push*", source="/etc/penguin/policy.toml", from_policy=True)


async def test_precedence_policy_deny_command_policy_rules_mode() -> None:
    allow_all = Rule("allow", "exec_command", source="p.toml")
    book = RuleBook(project=[allow_all, ALLOW_GIT_STATUS], policy=[POLICY_DENY])
    cell, prompts = _cell("allow-all", book, disabled=frozenset({"run_python"}))
    router = ApprovalRouter(lambda: cell)
    approve = wrap_approve_with_command_policy(router.approve_fn(cell))
    # 1. the policy: its deny rule and its disabled tools, whatever the rules and the mode allow
    assert await approve(_exec("git push origin main", "p1")) == "deny"
    assert router.take_reason("p1") == "denied by the administrator's policy (git push*)"
    assert await approve(tool_call("run_python", {"code": "1"}, "p2")) == "deny"
    assert "denied by the administrator's policy" in (router.take_reason("p2") or "")
    # 3. the command policy refuses even what an allow rule covers
    assert await approve(_exec("rm -rf /", "p3")) == "forbidden"
    # 4. an allow rule allows, naming itself
    assert await approve(_exec("git status", "p4")) == "allow"
    assert router.take_reason("p4") == "allowed by rule 1 (exec_command) in p.toml"
    assert prompts == []


async def test_deny_rule_beats_allow_all_and_ask_rule_asks_under_allow_all() -> None:
    deny = Rule("deny", "exec_command", command="curl*", source="ws.toml")
    ask = Rule("ask", "exec_command", command="git*", source="ws.toml")
    cell, prompts = _cell("allow-all", RuleBook(workspace=[deny, ask]), answer="y")
    router = ApprovalRouter(lambda: cell)
    approve = router.approve_fn(cell)
    assert await approve(_exec("ls && curl x", "d1")) == "deny"
    assert router.take_reason("d1") == "denied by rule 1 (curl*) in ws.toml"
    assert await approve(_exec("git status", "a1")) == "allow"  # asked, the human said y
    assert len(prompts) == 1 and "asked by rule 2 (git*) in ws.toml" in prompts[0]
    assert router.take_reason("a1") is None  # a click decided
    assert await approve(_exec("ls", "m1")) == "allow"  # no rule: the mode
    assert router.take_reason("m1") == "allowed by the cell's mode (allow-all)"


async def test_allow_rule_beats_the_ask_mode_but_not_a_compound_command() -> None:
    cell, prompts = _cell("ask", RuleBook(project=[ALLOW_GIT_STATUS]))
    router = ApprovalRouter(lambda: cell)
    approve = router.approve_fn(cell)
    assert await approve(_exec("git status", "r1")) == "allow"
    assert router.take_reason("r1") == "allowed by rule 1 (git status*) in rules.toml"
    assert await approve(_exec("git status; touch x", "r2")) == "deny"  # asked; the human said n
    assert len(prompts) == 1 and "[s]ave rule" not in prompts[0]  # nothing to save for a compound
    assert await approve(_exec("wc -l a.csv", "r3")) == "deny"
    assert 'allow exec_command command "wc"' in prompts[1]
    assert await approve(_exec("pytest -x", "r4")) == "deny"
    assert "[s]ave rule" not in prompts[2]  # pytest runs the folder's code: no saved rule offered


async def test_deny_all_mode_beats_allow_rules_and_an_allowed_credential_read_still_asks(tmp_path: Path) -> None:
    book = RuleBook(project=[Rule("allow", "read_file", source="p.toml")])
    cell, prompts = _cell("deny-all", book, ws=str(tmp_path))
    assert await ApprovalRouter(lambda: cell).approve_fn(cell)(tool_call("read_file", {"file_path": "a"}, "x")) == "deny"
    (tmp_path / ".env").write_text("A=1\n")
    cell, prompts = _cell("ask", book, ws=str(tmp_path))
    router = ApprovalRouter(lambda: cell)
    assert await router.approve_fn(cell)(tool_call("read_file", {"file_path": ".env"}, "e")) == "deny"
    assert len(prompts) == 1 and "asked: read of a credential file" in prompts[0] and "allowed by rule 1" in prompts[0]
    assert await router.approve_fn(cell)(tool_call("read_file", {"file_path": "a.txt"}, "f")) == "allow"


async def test_save_to_project_answer_writes_the_offered_rule(tmp_path: Path) -> None:
    book = RuleBook()
    cell, prompts = _cell("ask", book, answer="s")
    saved: list[Rule] = []
    cell.save_rule = lambda rule: saved.append(rule) or Rule(rule.action, rule.tool, rule.command, rule.path, "p.toml")  # type: ignore[func-returns-value]
    router = ApprovalRouter(lambda: cell)
    assert await router.approve_fn(cell)(_exec("git status -s", "s1")) == "allow"
    assert saved == [Rule("allow", "exec_command", command="git status")]
    assert await router.approve_fn(cell)(_exec("git status", "s2")) == "allow"  # now by the rule
    assert router.take_reason("s2") == "allowed by rule 1 (git status) in p.toml"
    assert len(prompts) == 1


async def test_code_running_tools_offer_always_allow_but_never_a_saved_rule() -> None:
    cell, prompts = _cell("ask", RuleBook(), answer="n")
    cell.save_rule = lambda rule: rule
    approve = ApprovalRouter(lambda: cell).approve_fn(cell)
    assert await approve(tool_call("run_python", {"code": "1"}, "p1")) == "deny"
    assert await approve(tool_call("run_subagent", {"prompt": "x"}, "p2")) == "deny"
    assert "[a]lways" in prompts[0] and "[s]ave rule" not in prompts[0]
    assert "[s]ave rule" in prompts[1] and 'allow run_subagent' in prompts[1]


async def test_background_subagents_follow_the_rules_of_the_cell_that_launched_them() -> None:
    launching, _ = _cell("ask", RuleBook(project=[ALLOW_GIT_STATUS]))
    later, later_prompts = _cell("ask", RuleBook(workspace=[Rule("deny", "exec_command", source="later.toml")]), answer="y")
    running: list[CellApproval] = [later]
    router = ApprovalRouter(lambda: running[0] if running else None)
    approve = router.approve_fn(launching)  # kept by the background subagent
    launching.ended = True
    assert await approve(_exec("git status", "b1")) == "allow"  # the launcher's rule, not the later deny
    assert router.take_reason("b1") == "allowed by rule 1 (git status*) in rules.toml"
    assert await approve(_exec("ls", "b2")) == "allow"  # no rule: asked in the running cell
    assert len(later_prompts) == 1


async def test_disabled_tools_are_not_offered_and_models_are_restricted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from penguin_jupyter import create_agent
    from penguin_jupyter.state import add_model

    root = Path(__import__("os").environ["PENGUIN_HOME"])
    add_model(root, "default_project", provider="openai", model_id="m1", base_url="http://127.0.0.1:9/v1", api_key="k" * 12, client_type="openai-chat", default=True)
    add_model(root, "default_project", provider="openai", model_id="m2", base_url="http://127.0.0.1:9/v1", api_key="k" * 12, client_type="openai-chat")
    policy = tmp_path / "policy.toml"
    policy.write_text('disabled_tools = ["exec_command", "write_file"]\nallowed_models = ["openai/m1"]\n')
    policy_named(monkeypatch, str(policy))
    agent = await create_agent()
    session = await agent.create_session(workspace_dir=str(tmp_path))
    try:
        assert session.tool_permission("exec_command") is None and session.tool_permission("write_file") is None
        assert session.tool_permission("read_file") == "r"
    finally:
        await session.aclose()
    with pytest.raises(ValueError, match=r"^model openai/m2 is not allowed by the administrator's policy"):
        await agent.create_session(workspace_dir=str(tmp_path), provider="openai", model_id="m2")
    policy_named(monkeypatch, str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match=r"missing\.toml: does not exist"):
        await agent.create_session(workspace_dir=str(tmp_path))


async def test_no_rule_is_offered_when_a_rule_already_decides_the_question() -> None:
    ask = Rule("ask", "exec_command", command="git*", source="ws.toml")
    cell, prompts = _cell("ask", RuleBook(workspace=[ask]))
    await ApprovalRouter(lambda: cell).approve_fn(cell)(_exec("git status", "o1"))
    assert len(prompts) == 1 and "[s]ave rule" not in prompts[0]
