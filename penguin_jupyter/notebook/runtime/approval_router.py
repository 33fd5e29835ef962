"""The approval router: the one place a notebook decides a tool call.

Owns the policy (the table in docs/notebook-runtime.md "The approval policy"): a tool call is
judged under the approval mode and the rules of the cell that launched the Task or subagent that
made it (`CellApproval`, which outlives its cell: background subagents keep the approve function
bound to it). In order (the command policy's refusals come before all of this, in the session):

1. The rules (`state/approval_rules.RuleBook`: project, workspace, the administrator's policy;
   the policy's disabled tools are denied too): a matching deny denies. deny-all denies.
2. A matching ask rule asks; a matching allow rule allows (a read of a credential file — also
   named by a command's word —, outside the workspace or of a URL still asks, as for "always
   allow"). A command allow rule whose words match a call that does more than they name
   (`approval_rules.Verdict.uncovered`) leaves the call to the mode, and a card says why.
3. No rule: the launching mode decides by itself when it can (`_auto_decision`: allow-all, the
   session's "always allow" set, read-only reads, and what `auto` allows because it runs in the
   sandbox — `sandbox_approval.py`, which also denies what a required sandbox forbids and gives
   every allowed command the grant saying how it runs; in a sandboxed kernel, `run_python` and
   the notebook tools too).
4. Otherwise a human is asked: in the launching cell while it runs; after it ended, in the
   running cell (inside the subagent's background card); with no cell running, denied.

Every check fails closed: an exception anywhere in deciding a call (the rules, what the call
touches, the credential check, the mode's own decision, the offer) means the call is asked about
with the failure as its reason (deny-all, or no cell to ask: denied) — never allowed.

Every decision not made by a click gets its reason (`allowed by rule 3 (git status) in …`,
`denied by the administrator's policy (…)`), and so does a click that did more than approve once
(`saved as rule 1 (ls) in …`, `exec_command always allowed for this session`), kept by tool
call id (`reasons`) for the card and the saved transcript. A later cell's automatic modes never decide for an earlier cell's agents:
the running cell only lends its buttons. How a cell asks is `approval.CellAsker`'s job; which
cell runs is the kernel runtime's (`running` below).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ...environment.call_reasons import own_folders, touch_reason
from ...environment.registry import declaration_of
from ...interfaces import ApprovalDecision, ApproveFn, Permission
from ...omni import OmniMessage, ToolCallPayload, UnreadableArguments, read_call_arguments
from ...state.approval_rules import Rule, RuleBook, Verdict, credential_argument, suggested_rule
from ..live.approval_row import RuleOffer
from .approval import CellAsker, tool_name_of
from .options import APPROVAL_MODES
from .sandbox_approval import (
    CellSandbox,
    auto_allows,
    give_grant,
    kernel_statement,
    open_browser_reason,
    rule_sandbox_reason,
    runs_sandboxed,
    sandbox_reason,
    sandbox_refusal,
    sandbox_statement,
)

MAX_REASONS = 1000
Route = Literal["allow", "deny", "ask-launching-cell", "ask-running-cell"]


@dataclass
class CellApproval:
    """What a cell's agents are judged by: its mode (fixed when the cell starts), its session's
    "always allow" set, the tools' permissions, and how the cell asks while it runs."""

    mode: str
    always_allowed: set[str]
    permission_of: Callable[[str], Permission | None]
    asker: CellAsker
    workspace_dir: str | None = None  # reads outside it (and of credential files) are asked about
    scratchpad_dir: str | None = None  # the session's own scratchpad: the data root's one readable folder
    ended: bool = field(default=False)
    rules: RuleBook = field(default_factory=RuleBook)  # fixed when the cell starts (+ rules saved since)
    disabled_tools: frozenset[str] = frozenset()  # the administrator's policy
    policy_path: str = ""
    save_rule: Callable[[Rule], Rule] | None = None  # "Save to project": writes the project file
    sandbox: CellSandbox | None = None  # how commands run (auto, the administrator's required sandbox)

    def __post_init__(self) -> None:
        if self.mode not in APPROVAL_MODES:
            raise ValueError(f"unknown approval mode {self.mode!r}")


def _call_id(tool_call: OmniMessage) -> str:
    payload = tool_call.payload
    return payload.tool_call_id if isinstance(payload, ToolCallPayload) else ""


def route(auto: ApprovalDecision | None, launching_cell_running: bool, a_cell_running: bool) -> Route:
    """The policy table: who decides, from what the launching mode decided by itself."""
    if auto is not None:
        return "allow" if auto == "allow" else "deny"
    if launching_cell_running:
        return "ask-launching-cell"
    return "ask-running-cell" if a_cell_running else "deny"


class ApprovalRouter:
    """Hands each cell its `ApproveFn` (`approve_fn`) and decides every call they make."""

    def __init__(self, running: Callable[[], CellApproval | None]) -> None:
        self._running = running
        self.reasons: dict[str, str] = {}  # tool_call_id -> why it was decided without a click
        self._sandboxed_by_rule: set[str] = set()  # tool_call_ids an `auto` rule allowed

    def approve_fn(self, launcher: CellApproval) -> ApproveFn:
        """The approve function handed to `session.run` for a cell (and kept by the background
        subagents its Task launches)."""

        async def approve(tool_call: OmniMessage) -> ApprovalDecision:
            return await self.decide(launcher, tool_call)

        return approve

    def _auto_decision(
        self, launcher: CellApproval, tool_call: OmniMessage, reason: str | None
    ) -> ApprovalDecision | None:
        """What the launching cell's mode decides without a human; None when one must be asked.
        A call with a `reason` (a credential file, outside the workspace, a URL) is never allowed
        by read-only or "always allow" alone; allow-all still allows it."""
        mode = launcher.mode
        name = tool_name_of(tool_call)
        if mode == "deny-all":
            return "deny"
        if mode == "allow-all":
            return "allow"
        if reason is not None:
            return None
        if name in launcher.always_allowed:
            return "allow"
        if mode == "read-only":
            return self._read_only_decision(launcher, tool_call)
        if mode == "auto":
            return "allow" if auto_allows(launcher.sandbox, tool_call, launcher.permission_of) else None
        return None

    @staticmethod
    def _touch_reason(launcher: CellApproval, tool_call: OmniMessage) -> str | None:
        """Why the call must be asked about whatever the mode (`asked: read of a credential file:
        ~/.pgpass`, `asked: write outside the workspace: …`), from what it touches (its
        declaration's effect: reads and writes as its tool opens them; a credential file a
        command's word names), or None."""
        payload = tool_call.payload
        if not isinstance(payload, ToolCallPayload):
            return None
        arguments = _arguments(tool_call)
        if isinstance(arguments, UnreadableArguments):
            return f"asked: the call's arguments {arguments.reason}"
        workspace = launcher.workspace_dir or "."
        # a credential file a command's word names, by that word; then everything the call touches
        reason = credential_argument(payload.name, arguments, workspace)
        if reason is None:
            effect = declaration_of(payload.name).effect(arguments, workspace)
            reason = touch_reason(effect, workspace, own_folders(workspace, launcher.scratchpad_dir, tool_call.origin))
        return None if reason is None else f"asked: {reason}"

    @staticmethod
    def _read_only_decision(launcher: CellApproval, tool_call: OmniMessage) -> ApprovalDecision | None:
        """read-only: tools whose permission is `r` go ahead, everything else asks."""
        return "allow" if launcher.permission_of(tool_name_of(tool_call)) == "r" else None

    def _verdict(self, launcher: CellApproval, tool_call: OmniMessage) -> tuple[Verdict | None, str | None]:
        """(the rules' verdict, its label) — a disabled tool is the policy's deny."""
        name = tool_name_of(tool_call)
        if name in launcher.disabled_tools:
            rule = Rule("deny", name, source=launcher.policy_path, from_policy=True)
            return Verdict("deny", rule), f"denied by the administrator's policy ({name} is disabled)"
        arguments = _arguments(tool_call)
        verdict = launcher.rules.judge(name, arguments if isinstance(arguments, dict) else {}, launcher.workspace_dir or ".")
        return verdict, launcher.rules.label(verdict) if verdict is not None else None

    def _offer(self, launcher: CellApproval, tool_call: OmniMessage) -> RuleOffer | None:
        if launcher.save_rule is None:
            return None
        arguments = _arguments(tool_call)
        if isinstance(arguments, UnreadableArguments):
            return None
        rule = suggested_rule(tool_name_of(tool_call), arguments, launcher.workspace_dir or ".")
        if rule is None:
            return None
        save = launcher.save_rule

        def saved(rule: Rule = rule) -> Rule:
            written = save(rule)
            launcher.rules.project.append(written)
            where = f" in {written.source}" if written.source else ""
            number = launcher.rules.number_of(written)
            self._remember(tool_call, f"saved as rule {number} ({written.pattern()}){where}")
            return written

        return RuleOffer(rule, saved)

    def _remember(self, tool_call: OmniMessage, reason: str) -> None:
        payload = tool_call.payload
        if isinstance(payload, ToolCallPayload):
            self.reasons[payload.tool_call_id] = reason
            while len(self.reasons) > MAX_REASONS:
                self.reasons.pop(next(iter(self.reasons)))

    def _clicked(
        self, tool_call: OmniMessage, launcher: CellApproval, already_always: bool, decision: ApprovalDecision
    ) -> ApprovalDecision:
        """A click that does more than approve once says so on the card and in the transcript:
        "Always allow" (the click added the tool to the session's set; "Save to project" says so
        in `_offer`)."""
        payload = tool_call.payload
        name = tool_name_of(tool_call)
        if (
            decision == "allow"
            and not already_always
            and name in launcher.always_allowed
            and isinstance(payload, ToolCallPayload)
            and payload.tool_call_id not in self.reasons
        ):
            self._remember(tool_call, f"{name} always allowed for this session")
        return decision

    def take_reason(self, tool_call_id: str) -> str | None:
        """Why the call with this id was decided without a click (once), or None."""
        return self.reasons.pop(tool_call_id, None)

    def _auto_reason(self, launcher: CellApproval, tool_call: OmniMessage, auto: ApprovalDecision) -> str:
        if launcher.mode in ("deny-all", "allow-all"):
            return f"{'denied' if auto == 'deny' else 'allowed'} by the cell's mode ({launcher.mode})"
        if tool_name_of(tool_call) in launcher.always_allowed:
            return f"allowed for this session (always allow {tool_name_of(tool_call)})"
        if launcher.mode == "auto":
            return "allowed by the cell's mode (auto)"
        return f"allowed by the cell's mode ({launcher.mode}: a read)"

    def _plan(self, launcher: CellApproval, tool_call: OmniMessage, a_cell_can_ask: bool) -> _Plan:
        """Everything about the call that needs no human: the rules, what it touches, the mode,
        the offer. Raises when a check fails (`decide` then asks)."""
        refusal = sandbox_refusal(launcher.sandbox, tool_call)  # what a required sandbox forbids
        if refusal is not None:
            return _Plan("deny", refusal)
        verdict, label = self._verdict(launcher, tool_call)
        uncovered = None  # an allow rule's words matched, the call does more: the mode decides, the card says why
        if verdict is not None and verdict.uncovered:
            verdict, uncovered = None, label
        if verdict is not None and verdict.action == "deny" and label:
            return _Plan("deny", label)
        reason = None if launcher.mode in ("deny-all", "allow-all") else self._touch_reason(launcher, tool_call)
        if reason is not None and runs_sandboxed(launcher.sandbox, launcher.mode, tool_call):
            reason = None  # what the sandbox holds whatever it names (a credential hidden, a write judged by the view)
        if launcher.mode == "auto":
            asked = sandbox_reason(launcher.sandbox, tool_call)
            reason = "; ".join(text for text in (reason, asked) if text) or None
        if verdict is not None and launcher.mode != "deny-all":
            if verdict.action == "allow" and (reason is None or launcher.mode == "allow-all") and label:
                return _Plan("allow", label)
            if verdict.action == "auto":  # run sandboxed with no card, when the sandbox can hold it
                held = rule_sandbox_reason(launcher.sandbox, tool_call, launcher.mode)
                if held is None and reason is None and label:
                    return _Plan("allow", label, sandboxed_by_rule=True)
                reason = "; ".join(text for text in (reason, held) if text) or None
            return _Plan(None, "; ".join(text for text in (label, reason) if text) or None)
        auto = self._auto_decision(launcher, tool_call, reason)
        if auto is not None:
            return _Plan(auto, self._auto_reason(launcher, tool_call, auto))
        # a saved allow rule could not change what a matching rule already says: no offer then
        offer = self._offer(launcher, tool_call) if a_cell_can_ask and verdict is None else None
        if launcher.mode == "auto" and not (uncovered or reason):
            reason = open_browser_reason(launcher.sandbox, tool_call)  # the card says why auto asks
        return _Plan(None, uncovered or reason, offer=offer)

    async def decide(self, launcher: CellApproval, tool_call: OmniMessage) -> ApprovalDecision:
        """The decision; an allowed command also gets its grant (how it runs), which the card
        and the transcript state when the sandbox is in play. Giving the grant fails closed too:
        an allowed call whose grant cannot be given is denied, saying why."""
        decision = await self._decide_call(launcher, tool_call)
        by_rule = _call_id(tool_call) in self._sandboxed_by_rule
        self._sandboxed_by_rule.discard(_call_id(tool_call))
        if decision != "allow":
            return decision
        try:
            grant = give_grant(launcher.sandbox, launcher.mode, tool_call, by_rule=by_rule)
            sandbox = launcher.sandbox
            in_kernel = sandbox is not None and sandbox.kernel is not None  # everything runs sandboxed
            if grant is not None and (by_rule or launcher.mode == "auto" or in_kernel or (sandbox is not None and sandbox.required)):
                self._state(tool_call, sandbox_statement(sandbox, grant))
            elif grant is None and (statement := kernel_statement(sandbox, tool_call)) is not None:
                self._state(tool_call, statement)
        except Exception as exc:  # every check fails closed: a check that raises denies, with its reason
            self._remember(tool_call, f"denied: {_failure(exc)}")
            return "deny"
        return decision

    def _state(self, tool_call: OmniMessage, statement: str) -> None:
        """Add how the command runs to its decision's reason (a click's reason is "approved")."""
        payload = tool_call.payload
        if isinstance(payload, ToolCallPayload):
            reason = self.reasons.get(payload.tool_call_id) or "approved"
            self._remember(tool_call, f"{reason}; {statement}")

    async def _decide_call(self, launcher: CellApproval, tool_call: OmniMessage) -> ApprovalDecision:
        running = self._running()
        launching_cell_running = not launcher.ended and running is launcher
        try:
            plan = self._plan(launcher, tool_call, launching_cell_running or running is not None)
        except Exception as exc:  # every check fails closed: ask (deny-all, or nobody to ask: deny)
            plan = _Plan("deny" if launcher.mode == "deny-all" else None, f"asked: {_failure(exc)}")
        if plan.sandboxed_by_rule:
            self._sandboxed_by_rule.add(_call_id(tool_call))
        if plan.auto is not None and plan.reason:
            self._remember(tool_call, plan.reason)
        if plan.auto is not None:
            return plan.auto
        where = route(None, launching_cell_running, running is not None)
        already_always = tool_name_of(tool_call) in launcher.always_allowed
        if where == "ask-launching-cell":
            return self._clicked(
                tool_call,
                launcher,
                already_always,
                await launcher.asker.ask(tool_call, launcher.always_allowed, reason=plan.reason, offer=plan.offer),
            )
        if where == "ask-running-cell" and running is not None:
            return self._clicked(
                tool_call,
                launcher,
                already_always,
                await running.asker.ask_here(tool_call, launcher.always_allowed, plan.reason, offer=plan.offer),
            )
        why = f"{plan.reason.removeprefix('asked: ')}; " if plan.reason else ""
        self._remember(tool_call, f"denied: {why}no cell is running to ask")
        return "deny"


@dataclass(frozen=True)
class _Plan:
    """What the checks decided: `auto` (None: a human is asked), the reason shown on the card or
    kept for the transcript, the rule "Save to project" offers."""

    auto: ApprovalDecision | None
    reason: str | None
    offer: RuleOffer | None = None
    sandboxed_by_rule: bool = False  # allowed by an `auto` rule: runs in the sandbox, no card


def _arguments(tool_call: OmniMessage) -> dict[str, object] | UnreadableArguments:
    payload = tool_call.payload
    if not isinstance(payload, ToolCallPayload):
        return UnreadableArguments("are missing: not a tool call")
    return read_call_arguments(payload.arguments)


def _failure(exc: BaseException) -> str:
    """The card's reason when a check raised: which failure, in one line."""
    text = " ".join(str(exc).split())[:200]
    return f"the permission check failed ({type(exc).__name__}{': ' + text if text else ''}); nothing was decided automatically"
