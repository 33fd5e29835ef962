"""`--approve auto` and the administrator's required sandbox in the approval router, without a
kernel (notebook/runtime/sandbox_approval.py; the kernel-level suite is
test_sandbox_escape_kernel.py): what auto allows with no card and the grant each allowed command
carries to its spawn; the exact reason on a card when a call needs more; tools that cannot be
sandboxed keep asking; auto acts as ask, with one line once per kernel, where no sandbox starts;
the required sandbox denies `unsandboxed: true` in every mode (allow-all too) and every command
when it cannot start; max_approve knows auto; a bad `[sandbox]` table is one line."""

from __future__ import annotations

import pytest

from penguin_jupyter.environment.sandbox import CommandCall, SandboxGrants, SandboxSupport, parse_hosts
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.notebook.runtime.sandbox_approval import CellSandbox, cell_sandbox
from penguin_jupyter.omni import tool_call
from penguin_jupyter.state.admin_policy import parse_policy
from penguin_jupyter.state.errors import ConfigError
from penguin_jupyter.state.project_config import parse_project_config
from penguin_jupyter.state.sandbox_settings import allowed_hosts

PERMISSIONS = {"read_file": "r", "exec_command": "rw", "write_file": "rw", "run_python": "rw", "insert_cell": "rw"}
AVAILABLE = SandboxSupport(True, "", "/usr/bin/bwrap")
MISSING = SandboxSupport(False, "bubblewrap is not installed (apt-get install bubblewrap)")


class Surface:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def show_approval(self, call, row, *, background=False, preview=None) -> None:  # type: ignore[no-untyped-def]
        self.asked.append(call.payload.name)

    def show_note(self, text: str) -> None:
        pass


def _cell(mode: str, workspace: str, support: SandboxSupport = AVAILABLE, required_by: str = "", hosts=()):  # type: ignore[no-untyped-def]
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "n"

    surface = Surface()
    asker = CellAsker(channel="stdin", surface=surface, input_fn=answer)
    sandbox = CellSandbox(support, SandboxGrants(), required_by, parse_hosts(hosts))
    approval = CellApproval(
        mode=mode,
        always_allowed=set(),
        permission_of=lambda tool: PERMISSIONS.get(tool),  # type: ignore[arg-type,return-value]
        asker=asker,
        workspace_dir=workspace,
        sandbox=sandbox,
    )
    router = ApprovalRouter(lambda: approval)
    return router, approval, prompts


def _exec(call_id: str, **arguments: object):  # type: ignore[no-untyped-def]
    return tool_call("exec_command", {"cmd": "ls", **arguments}, call_id)


async def test_auto_runs_commands_sandboxed_with_no_card_and_says_so(tmp_path):
    router, approval, prompts = _cell("auto", str(tmp_path), hosts=["pypi.org"])
    assert await router.decide(approval, _exec("c1")) == "allow"
    grant = approval.sandbox.grants.take(CommandCall("c1", "ls"))  # type: ignore[union-attr]
    assert grant is not None and grant.sandboxed and grant.hosts == ()
    assert router.take_reason("c1") == (
        "allowed by the cell's mode (auto); in the sandbox (writes: the workspace and /tmp; network: pypi.org)"
    )
    # a host the project allows already needs no card; it is granted
    assert await router.decide(approval, _exec("c2", network_hosts=["pypi.org"])) == "allow"
    assert prompts == []


async def test_auto_asks_exactly_what_a_command_needs_beyond_the_sandbox(tmp_path):
    router, approval, prompts = _cell("auto", str(tmp_path), hosts=["*.pythonhosted.org"])
    assert await router.decide(approval, _exec("c1", unsandboxed=True)) == "deny"  # the human said n
    assert "asked: runs outside the sandbox (unsandboxed: true) with full access to your files and network" in prompts[0]
    hosts = ["files.pythonhosted.org", "pypi.org", "evil.example:8443"]
    assert await router.decide(approval, _exec("c2", network_hosts=hosts)) == "deny"
    assert "asked: needs network access to pypi.org, evil.example:8443 (not among the project's allowed hosts)" in prompts[1]
    assert approval.sandbox.grants.take(CommandCall("c1", "ls", unsandboxed=True)) is None  # type: ignore[union-attr]  # denied: no grant


async def test_an_approved_unsandboxed_command_runs_outside_and_the_transcript_says_so(tmp_path):
    router, approval, _ = _cell("auto", str(tmp_path))
    approval.asker.input_fn = lambda prompt: "y"
    assert await router.decide(approval, _exec("c1", unsandboxed=True)) == "allow"
    grant = approval.sandbox.grants.take(CommandCall("c1", "ls", unsandboxed=True))  # type: ignore[union-attr]
    assert grant is not None and not grant.sandboxed
    assert router.take_reason("c1") == "approved; outside the sandbox"


async def test_auto_allows_reads_and_asks_for_writes_and_what_cannot_be_sandboxed(tmp_path):
    router, approval, prompts = _cell("auto", str(tmp_path))
    assert await router.decide(approval, tool_call("read_file", {"file_path": "result.csv"}, "r1")) == "allow"
    write = tool_call("write_file", {"file_path": "out/result.csv", "content": "a"}, "w1")
    assert await router.decide(approval, write) == "deny"  # asked: a write runs in the kernel, outside
    for name, arguments in (("run_python", {"code": "1"}), ("insert_cell", {"source": "1"})):
        assert await router.decide(approval, tool_call(name, arguments, name)) == "deny"  # asked, as in ask
    assert len(prompts) == 3


async def test_ask_and_allow_all_commands_run_as_before_with_their_grant(tmp_path):
    for mode in ("ask", "allow-all", "read-only"):
        router, approval, _ = _cell(mode, str(tmp_path))
        approval.asker.input_fn = lambda prompt: "y"
        assert await router.decide(approval, _exec(f"{mode}-1")) == "allow"
        grant = approval.sandbox.grants.take(CommandCall(f"{mode}-1", "ls"))  # type: ignore[union-attr]
        assert grant is not None and not grant.sandboxed, mode
        assert router.take_reason(f"{mode}-1") in (None, "allowed by the cell's mode (allow-all)")


async def test_the_required_sandbox_denies_unsandboxed_runs_in_every_mode_and_sandboxes_allow_all(tmp_path):
    policy = "/etc/penguin/policy.toml"
    for mode in ("ask", "auto", "allow-all"):
        router, approval, prompts = _cell(mode, str(tmp_path), required_by=policy)
        assert await router.decide(approval, _exec("u", unsandboxed=True)) == "deny"
        assert prompts == [], mode  # no card: the policy answers
        assert router.take_reason("u") == (
            f"denied by the administrator's policy ({policy}): the sandbox is required, so unsandboxed: true is refused"
        )
    router, approval, _ = _cell("allow-all", str(tmp_path), required_by=policy)
    assert await router.decide(approval, _exec("a", network_hosts=["pypi.org"])) == "allow"
    grant = approval.sandbox.grants.take(CommandCall("a", "ls", hosts=("pypi.org",)))  # type: ignore[union-attr]
    assert grant is not None and grant.sandboxed and [h.text() for h in grant.hosts] == ["pypi.org"]
    assert router.take_reason("a") == (
        "allowed by the cell's mode (allow-all); in the sandbox (writes: the workspace and /tmp; network: pypi.org)"
    )
    router, approval, prompts = _cell("allow-all", str(tmp_path), support=MISSING, required_by=policy)
    assert await router.decide(approval, _exec("m")) == "deny" and prompts == []
    assert router.take_reason("m") == (
        f"denied by the administrator's policy ({policy}): the sandbox is required and cannot start here "
        "(bubblewrap is not installed (apt-get install bubblewrap))"
    )


def test_auto_acts_as_ask_where_no_sandbox_starts_with_one_line_once_per_kernel(monkeypatch):
    from penguin_jupyter.environment.sandbox import support

    monkeypatch.setattr(support, "_support", MISSING)
    announced: set[str] = set()
    grants = SandboxGrants()
    mode, sandbox, note = cell_sandbox("auto", "", grants, lambda: (), announced)
    assert mode == "ask" and not sandbox.support.available
    assert note == (
        "penguin: no sandbox here (bubblewrap is not installed (apt-get install bubblewrap)): "
        "--approve auto acts as ask (every command asks)"
    )
    assert cell_sandbox("auto", "", grants, lambda: (), announced)[2] is None  # said once
    assert cell_sandbox("ask", "", grants, lambda: (), set()) [0] == "ask"
    mode, _, note = cell_sandbox("allow-all", "/etc/p.toml", grants, lambda: (), announced)
    assert mode == "allow-all" and note is not None and "requires the sandbox, which cannot start here" in note


def test_max_approve_knows_auto_between_read_only_and_allow_all():
    policy = parse_policy('max_approve = "auto"\nsandbox = "required"\n', "/etc/penguin/policy.toml")
    assert policy.cap_mode("allow-all") == "auto" and policy.cap_mode("auto") == "auto"
    assert policy.cap_mode("read-only") == "read-only" and policy.sandbox_required
    assert policy.describe()[-1] == "  sandbox: required (no command runs outside it, in any mode)"
    assert parse_policy('max_approve = "read-only"\n', "p").cap_mode("auto") == "read-only"
    with pytest.raises(ConfigError, match="sandbox"):
        parse_policy('sandbox = "sometimes"\n', "p")


def test_the_project_allowed_hosts_and_their_one_line_errors():
    good = parse_project_config("f", {"sandbox": {"allowed_hosts": ["PyPI.org.", "*.pythonhosted.org", "h:8443"]}})
    assert [rule.text() for rule in allowed_hosts(good, "f")] == ["pypi.org", "*.pythonhosted.org", "h:8443"]
    assert allowed_hosts(parse_project_config("f", {}), "f") == ()
    for table, field in (
        ({"allowed_hosts": ["https://pypi.org/simple"]}, "sandbox.allowed_hosts"),
        ({"allowed_hosts": ["*"]}, "sandbox.allowed_hosts"),
        ({"allowed_hosts": "pypi.org"}, "sandbox.allowed_hosts"),
        ({"hosts": []}, "sandbox.hosts"),
    ):
        with pytest.raises(ConfigError) as caught:
            allowed_hosts(parse_project_config("/p/.project_config.toml", {"sandbox": table}), "/p/.project_config.toml")
        assert field in str(caught.value) and "\n" not in str(caught.value)


async def test_an_auto_rule_runs_its_command_sandboxed_with_no_card_in_ask(tmp_path):
    from penguin_jupyter.state.approval_rules import Rule, RuleBook

    router, approval, prompts = _cell("ask", str(tmp_path))
    approval.rules = RuleBook([Rule("auto", "exec_command", command="pytest", source="/p/approval_rules.toml")])
    call = tool_call("exec_command", {"cmd": "pytest -q"}, "r1")
    assert await router.decide(approval, call) == "allow" and prompts == []
    grant = approval.sandbox.grants.take(CommandCall("r1", "pytest -q"))  # type: ignore[union-attr]
    assert grant is not None and grant.sandboxed
    assert router.take_reason("r1") == (
        "sandboxed by rule 1 (pytest) in /p/approval_rules.toml; "
        "in the sandbox (writes: the workspace and /tmp; network: none)"
    )
    escaping = tool_call("exec_command", {"cmd": "pytest -q", "unsandboxed": True}, "r2")
    assert await router.decide(approval, escaping) == "deny"  # asked (the human said n)
    assert "runs outside the sandbox" in prompts[0]
    other = tool_call("exec_command", {"cmd": "rm data.csv"}, "r3")
    assert await router.decide(approval, other) == "deny" and len(prompts) == 2  # not the rule's: ask mode asks


async def test_an_auto_rule_asks_where_no_sandbox_starts(tmp_path):
    from penguin_jupyter.state.approval_rules import Rule, RuleBook

    router, approval, prompts = _cell("ask", str(tmp_path), support=MISSING)
    approval.rules = RuleBook([Rule("auto", "exec_command", command="pytest", source="/p/approval_rules.toml")])
    assert await router.decide(approval, tool_call("exec_command", {"cmd": "pytest"}, "r1")) == "deny"
    assert "an auto rule matches, but no sandbox can start here" in prompts[0]


def test_auto_rules_are_for_commands_and_a_workspace_file_cannot_loosen(tmp_path):
    from penguin_jupyter.state.approval_rules import parse_rules_text, read_workspace_rules

    with pytest.raises(ConfigError, match="runs no command"):
        parse_rules_text('[[rule]]\naction = "auto"\ntool = "write_file"\n', "f")
    (tmp_path / ".penguin").mkdir()
    (tmp_path / ".penguin" / "approvals.toml").write_text('[[rule]]\naction = "auto"\ntool = "exec_command"\ncommand = "curl*"\n')
    rules, note = read_workspace_rules(str(tmp_path))
    assert rules == [] and note is not None and "rule 1: allow ignored" in note


async def test_a_credential_a_sandboxed_command_names_needs_no_card_it_is_hidden(tmp_path):
    router, approval, prompts = _cell("auto", str(tmp_path))
    call = tool_call("exec_command", {"cmd": "cat ~/.aws/credentials"}, "k1")
    assert await router.decide(approval, call) == "allow" and prompts == []
    escaping = tool_call("exec_command", {"cmd": "cat ~/.aws/credentials", "unsandboxed": True}, "k2")
    assert await router.decide(approval, escaping) == "deny"  # asked: outside the sandbox it would read it
    assert "runs outside the sandbox" in prompts[0] and "credential" in prompts[0]
