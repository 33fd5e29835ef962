"""A permission covers what a call does, not what its text looks like (issue 36, the path half):
the approval router, the rules and the credential check judge a call by its declaration's effect —
the paths as the tool opens them and the files those reach — and every check fails closed.

Each test is an attack that worked on 3758335: a `~/..` spelling past the administrator's deny rule
(defect 2), a write through a symlinked workspace folder under "Always allow write_file" (defect
5), and a permission check that raises letting a call through without a reason (defect 13).
Real files, the real router, rules, policy parser and Environment; only the human's answer is
scripted (the stdin channel's `input`).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from pathlib import Path

import pytest

from penguin_jupyter.environment import Environment, EnvironmentConfig
from penguin_jupyter.environment.registry import declaration_of
from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.runtime import approval_router
from penguin_jupyter.notebook.runtime.approval import CellAsker
from penguin_jupyter.notebook.runtime.approval_card import where_lines
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval
from penguin_jupyter.omni import OmniMessage, tool_call
from penguin_jupyter.state.admin_policy import parse_policy
from penguin_jupyter.state.approval_rules import RuleBook
from tests.support.env import final, run_call


class Surface:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def show_approval(self, call: OmniMessage, row, *, background: bool = False, preview=None) -> None:
        self.asked.append(call.payload.name)  # type: ignore[union-attr]

    def show_note(self, text: str) -> None:
        pass


def _cell(mode: str, workspace: Path, book: RuleBook | None = None, always: set[str] | None = None) -> tuple[CellApproval, list[str]]:
    """A cell in `mode` whose human answers "n" on stdin; the prompts it was shown."""
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "n"

    asker = CellAsker(channel="stdin", surface=Surface(), signal=AbortSignal(), context=contextvars.copy_context(), input_fn=answer)
    cell = CellApproval(
        mode=mode,
        always_allowed=set(always or ()),
        permission_of=lambda tool: declaration_of(tool).permission,
        asker=asker,
        workspace_dir=str(workspace),
        rules=book or RuleBook(),
        save_rule=lambda rule: rule,
    )
    return cell, prompts


def _write(path: str, call_id: str) -> OmniMessage:
    return tool_call("write_file", {"description": "save", "file_path": path, "content": "overwritten\n"}, call_id)


# --- defect 2: a path deny rule matches every spelling of the file the tool writes ---------------


async def test_the_administrators_path_deny_stops_every_spelling_of_the_file(tmp_path: Path) -> None:
    """Policy `deny write_file path "data/raw/*"`: on 3758335 `data/raw/measurements.csv` was
    denied and `~/../data/raw/measurements.csv` allowed — and the tool wrote that same file (the
    matcher expanded `~`, the tool joins the text to the workspace). Now the rule is matched
    against the path the tool opens, so every spelling is denied; the file stays as it was."""
    workspace = tmp_path / "ws"
    (workspace / "data" / "raw").mkdir(parents=True)
    target = workspace / "data" / "raw" / "measurements.csv"
    target.write_text("original\n")
    policy = parse_policy('[[deny]]\ntool = "write_file"\npath = "data/raw/*"\n', "/etc/penguin/policy.toml")
    cell, prompts = _cell("allow-all", workspace, RuleBook(policy=list(policy.deny)))
    router = ApprovalRouter(lambda: cell)
    env = Environment(EnvironmentConfig(workspace_dir=str(workspace)))
    spellings = [
        "data/raw/measurements.csv",
        "~/../data/raw/measurements.csv",
        "./data/x/../raw/measurements.csv",
        "~/~/../../data/raw//measurements.csv",
        str(target),
    ]
    try:
        for number, spelling in enumerate(spellings):
            call = _write(spelling, f"w{number}")
            # what the rule is matched against is what the tool opens
            effect = declaration_of("write_file").effect({"file_path": spelling, "content": ""}, str(workspace))
            assert effect.writes[0].resolved == str(target), spelling
            assert await router.approve_fn(cell)(call) == "deny", spelling
            assert router.take_reason(f"w{number}") == "denied by the administrator's policy (data/raw/*)"
        # the spelling the old matcher let through is the file the tool writes once allowed
        allowed, _ = _cell("allow-all", workspace)
        assert await ApprovalRouter(lambda: allowed).approve_fn(allowed)(_write(spellings[1], "x")) == "allow"
        assert target.read_text() == "original\n"
        written = await run_call(env, "write_file", {"file_path": spellings[1], "content": "overwritten\n"})
        assert final(written).stop_reason == "completed" and target.read_text() == "overwritten\n"
    finally:
        env.dispose()
    assert prompts == []


async def test_an_allow_path_rule_covers_only_what_lies_in_the_workspace_where_it_names(tmp_path: Path) -> None:
    """`allow write_file path "notes/*"` covers `notes/a.md`; not a spelling that leaves the
    workspace, nor a symlinked folder inside it that leads out (the file reached must match too)."""
    workspace = tmp_path / "ws"
    (workspace / "notes").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / "notes" / "linked").symlink_to(outside)
    book = RuleBook(project=[*_rules('[[rule]]\naction = "allow"\ntool = "write_file"\npath = "notes/*"\n')])
    cell, prompts = _cell("ask", workspace, book)
    approve = ApprovalRouter(lambda: cell).approve_fn(cell)
    assert await approve(_write("notes/a.md", "a")) == "allow"
    assert await approve(_write("notes/../../ws/notes/b.md", "b")) == "allow"  # the same folder, spelt oddly
    assert await approve(_write("notes/linked/c.md", "c")) == "deny"  # asked, answered no
    assert "outside the workspace" in prompts[-1] and "through the symlink notes/linked" in prompts[-1]


def _rules(text: str) -> list:
    from penguin_jupyter.state.approval_rules import parse_rules_text

    return parse_rules_text(text, "approval_rules.toml")


# --- defect 5: a write through a symlinked workspace folder is outside the workspace -------------


async def test_a_write_through_a_symlinked_folder_asks_even_with_always_allow(tmp_path: Path, monkeypatch) -> None:
    """A cloned repo ships `notes -> ~/.ipython/profile_default/startup`. On 3758335, with "Always
    allow write_file", `write_file notes/00-setup.py` ran with no card (it then runs at every
    IPython start): only reads were checked. Now the write's effect reaches outside the
    workspace, so the call is asked about, with where it lands on the card."""
    home = Path(os.environ["HOME"])
    startup = home / ".ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "notes").symlink_to(startup)
    cell, prompts = _cell("ask", workspace, always={"write_file"})
    router = ApprovalRouter(lambda: cell)
    call = _write("notes/00-setup.py", "s1")
    assert await router.approve_fn(cell)(call) == "deny"  # asked; the human said no
    assert len(prompts) == 1
    landing = "~/.ipython/profile_default/startup/00-setup.py"
    assert f"asked: write outside the workspace: {landing} (through the symlink notes)" in prompts[0]
    assert not (startup / "00-setup.py").exists()
    # the card says where the write lands, from the declaration's effect
    assert where_lines(call, str(workspace)) == [f"writes {landing} (outside the workspace, through the symlink notes)"]
    # read-only and an allow rule do not let it through either; allow-all does (the user chose it)
    for mode, book in (
        ("read-only", RuleBook()),
        ("ask", RuleBook(project=_rules('[[rule]]\naction = "allow"\ntool = "write_file"\n'))),
    ):
        other, asked = _cell(mode, workspace, book)
        assert await ApprovalRouter(lambda other=other: other).approve_fn(other)(call) == "deny"
        assert "write outside the workspace" in asked[0]
    # a write of a credential file is asked about by name
    (workspace / "cfg").symlink_to(home)
    (home / ".netrc").write_text("machine x login y password z\n")
    asked_cell, asked = _cell("ask", workspace, always={"write_file"})
    assert await ApprovalRouter(lambda: asked_cell).approve_fn(asked_cell)(_write("cfg/.netrc", "s2")) == "deny"
    assert "asked: write of a credential file: ~/.netrc" in asked[0]


# --- defect 13: every permission check fails closed ----------------------------------------------


def _boom(*_args, **_kwargs):
    raise RuntimeError("injected failure")


CHECKS = {
    "the rules": ("penguin_jupyter.state.approval_rules.RuleBook.judge", "ask"),
    "what the call touches": ("penguin_jupyter.notebook.runtime.approval_router.touch_reason", "read-only"),
    "the declaration's effect": ("penguin_jupyter.notebook.runtime.approval_router.declaration_of", "read-only"),
    "the data-root folders": ("penguin_jupyter.notebook.runtime.approval_router.own_folders", "read-only"),
    "the arguments": ("penguin_jupyter.notebook.runtime.approval_router.read_call_arguments", "read-only"),
    "the saved-rule offer": ("penguin_jupyter.notebook.runtime.approval_router.suggested_rule", "ask"),
}


@pytest.mark.parametrize("check", sorted(CHECKS))
async def test_a_check_that_raises_asks_with_the_failure_as_its_reason(check: str, tmp_path: Path, monkeypatch) -> None:
    """On 3758335 `_read_reason` returned None on any exception, so read-only allowed the read
    unasked; the offer and the read-only decision swallowed theirs. Now an exception anywhere in
    deciding a call asks, with the failure on the card; with no cell to ask it is denied, saying
    why; deny-all still denies."""
    target, mode = CHECKS[check]
    (tmp_path / "notes.txt").write_text("hello\n")
    monkeypatch.setattr(target, _boom)
    call = tool_call("read_file", {"file_path": "notes.txt"}, "r1")
    cell, prompts = _cell(mode, tmp_path)
    assert await ApprovalRouter(lambda: cell).approve_fn(cell)(call) == "deny"  # asked, answered no
    assert len(prompts) == 1 and "the permission check failed (RuntimeError: injected failure)" in prompts[0], prompts
    # no cell running to ask: denied, and the transcript says why (an offer is only made to a human)
    headless, _ = _cell(mode, tmp_path)
    router = ApprovalRouter(lambda: None)
    assert await router.approve_fn(headless)(call) == "deny"
    if check != "the saved-rule offer":
        assert "the permission check failed (RuntimeError: injected failure)" in str(router.take_reason("r1"))
    denying, asked = _cell("deny-all", tmp_path)
    assert await ApprovalRouter(lambda: denying).approve_fn(denying)(call) == "deny" and asked == []


async def test_a_failing_read_only_decision_asks_with_a_reason(tmp_path: Path) -> None:
    """The mode's own decision (the tool's permission) raising: asked, the failure on the card."""
    cell, prompts = _cell("read-only", tmp_path)
    cell.permission_of = _boom  # type: ignore[assignment]
    assert await ApprovalRouter(lambda: cell).approve_fn(cell)(tool_call("read_file", {"file_path": "x"}, "p")) == "deny"
    assert "the permission check failed (RuntimeError: injected failure)" in prompts[0]


async def test_without_a_failure_the_same_read_goes_ahead_in_read_only(tmp_path: Path) -> None:
    """The control: the read the tests above inject failures into is allowed by read-only."""
    (tmp_path / "notes.txt").write_text("hello\n")
    cell, prompts = _cell("read-only", tmp_path)
    router = ApprovalRouter(lambda: cell)
    assert await router.approve_fn(cell)(tool_call("read_file", {"file_path": "notes.txt"}, "r1")) == "allow"
    assert prompts == [] and router.take_reason("r1") == "allowed by the cell's mode (read-only: a read)"


def test_the_card_line_says_so_when_where_a_path_leads_cannot_be_worked_out(monkeypatch) -> None:
    from penguin_jupyter.notebook.runtime import approval_card

    monkeypatch.setattr(approval_card, "declaration_of", _boom)
    assert where_lines(_write("a", "c"), "/w") == ["where this call's paths lead could not be worked out (RuntimeError)"]


def test_unreadable_arguments_are_asked_about(tmp_path: Path) -> None:
    cell, prompts = _cell("read-only", tmp_path)
    call = tool_call("read_file", "[" * 50_000 + "]" * 50_000, "deep")
    assert asyncio.run(ApprovalRouter(lambda: cell).approve_fn(cell)(call)) == "deny"
    assert "asked: the call's arguments are not valid JSON (RecursionError" in prompts[0]


assert approval_router  # (the module the failures are injected into)


def test_the_command_analysis_plugs_into_the_same_effect(tmp_path: Path) -> None:
    """The typed hook the command analysis fills (`analyse_command(cmd, cwd, workspace)`): what it
    says a command reads and writes joins the call's effect, so the credential check asks about
    `cat ~/.aws/credentials` like a read_file of it — resolved in the command's directory."""
    from dataclasses import dataclass

    from penguin_jupyter.environment.call_reasons import touch_reason

    @dataclass
    class Facts:
        reads: tuple[str, ...] = ()
        writes: tuple[str, ...] = ()

    home = Path(os.environ["HOME"])
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\n")
    (tmp_path / "sub").mkdir()
    exec_command = declaration_of("exec_command")
    seen: list[tuple[str, str, str]] = []

    def analyse(cmd: str, cwd: str, workspace: str) -> Facts:
        seen.append((cmd, cwd, workspace))
        return Facts(reads=(str(home / ".aws" / "credentials"),), writes=("out.txt",))

    effect = exec_command.effect({"cmd": "cat ~/.aws/credentials > out.txt", "workdir": "sub"}, str(tmp_path), analyse_command=analyse)
    assert seen == [("cat ~/.aws/credentials > out.txt", str(tmp_path / "sub"), str(tmp_path))]
    assert effect.writes[0].resolved == str(tmp_path / "sub" / "out.txt")
    assert touch_reason(effect, str(tmp_path)) == "read of a credential file: ~/.aws/"
    # an analyser that knows nothing adds nothing; the one plugged in reads the program tables
    assert exec_command.effect({"cmd": "cat x"}, str(tmp_path), analyse_command=lambda *_: None).paths() == ()
    plugged = exec_command.effect({"cmd": "git blame --output=/tmp/elsewhere.txt notes.txt"}, str(tmp_path))
    assert str(tmp_path / "notes.txt") in [p.resolved for p in plugged.reads]
    assert [p.resolved for p in plugged.writes] == ["/tmp/elsewhere.txt"]
    assert touch_reason(plugged, str(tmp_path)) == "write outside the workspace: /tmp/elsewhere.txt"
