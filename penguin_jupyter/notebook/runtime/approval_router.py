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

Every decision not made by a click gets its reason (`allowed by rule 3 (git status) in …`,
`denied by the administrator's policy (…)`), and so does a click that did more than approve once
(`saved as rule 1 (ls) in …`, `exec_command always allowed for this session`), kept by tool
call id (`reasons`) for the card and the saved transcript. A later cell's automatic modes never decide for an earlier cell's agents:
the running cell only lends its buttons. How a cell asks is `approval.CellAsker`'s job; which
cell runs is the kernel runtime's (`running` below).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ...environment.secret_files import credential_read_reason
from ...interfaces import ApprovalDecision, ApproveFn, Permission
from ...omni import OmniMessage, ToolCallPayload
from ...state.approval_rules import Rule, RuleBook, Verdict, credential_argument, suggested_rule
from .approval import CellAsker, RuleOffer, tool_name_of
from .options import APPROVAL_MODES
from .sandbox_approval import (
    CellSandbox,
    auto_allows,
    give_grant,
    kernel_statement,
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
        A read with a `reason` (a credential file, outside the workspace, a URL) is never allowed
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

    def _read_reason(self, launcher: CellApproval, tool_call: OmniMessage) -> str | None:
        """Why a read must be asked (`asked: read of a credential file: ~/.pgpass`, also when a
        command's word names one), or None."""
        try:
            reason = credential_read_reason(tool_call, launcher.workspace_dir, launcher.scratchpad_dir)
        except Exception:
            return None
        if reason is None:
            try:
                workspace = launcher.workspace_dir or "."
                reason = credential_argument(tool_name_of(tool_call), self._arguments(tool_call), workspace)
            except Exception:  # a check that cannot run must not let the call through unasked
                reason = "the command's arguments could not be checked for credential files"
        return None if reason is None else f"asked: {reason}"

    @staticmethod
    def _read_only_decision(launcher: CellApproval, tool_call: OmniMessage) -> ApprovalDecision | None:
        """read-only: tools whose permission is `r` go ahead, everything else asks. Further
        checks of what a read touches (its arguments are in `tool_call`) belong here."""
        name = tool_name_of(tool_call)
        try:
            permission = launcher.permission_of(name)
        except Exception:
            permission = None
        return "allow" if permission == "r" else None

    def _arguments(self, tool_call: OmniMessage) -> dict[str, Any]:
        payload = tool_call.payload
        try:
            parsed = json.loads(payload.arguments) if isinstance(payload, ToolCallPayload) else {}
        except (TypeError, ValueError, RecursionError):
            return {}
        return parsed if isinstance(parsed, dict) else {}

    def _verdict(self, launcher: CellApproval, tool_call: OmniMessage) -> tuple[Verdict | None, str | None]:
        """(the rules' verdict, its label) — a disabled tool is the policy's deny."""
        name = tool_name_of(tool_call)
        if name in launcher.disabled_tools:
            rule = Rule("deny", name, source=launcher.policy_path, from_policy=True)
            return Verdict("deny", rule), f"denied by the administrator's policy ({name} is disabled)"
        try:
            verdict = launcher.rules.judge(name, self._arguments(tool_call), launcher.workspace_dir or ".")
        except Exception:  # rules that cannot be evaluated must not let anything through: ask
            rule = Rule("ask", name, source="")
            return Verdict("ask", rule), "asked: the approval rules could not be evaluated for this call"
        return verdict, launcher.rules.label(verdict) if verdict is not None else None

    def _offer(self, launcher: CellApproval, tool_call: OmniMessage) -> RuleOffer | None:
        if launcher.save_rule is None:
            return None
        try:
            rule = suggested_rule(tool_name_of(tool_call), self._arguments(tool_call), launcher.workspace_dir or ".")
        except Exception:
            return None
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

    async def decide(self, launcher: CellApproval, tool_call: OmniMessage) -> ApprovalDecision:
        """The decision; an allowed command also gets its grant (how it runs), which the card
        and the transcript state when the sandbox is in play."""
        refusal = sandbox_refusal(launcher.sandbox, tool_call)
        if refusal is not None:
            self._remember(tool_call, refusal)
            return "deny"
        decision = await self._decide_call(launcher, tool_call)
        by_rule = _call_id(tool_call) in self._sandboxed_by_rule
        self._sandboxed_by_rule.discard(_call_id(tool_call))
        if decision == "allow":
            grant = give_grant(launcher.sandbox, launcher.mode, tool_call, by_rule=by_rule)
            sandbox = launcher.sandbox
            in_kernel = sandbox is not None and sandbox.kernel is not None  # everything runs sandboxed
            if grant is not None and (by_rule or launcher.mode == "auto" or in_kernel or (sandbox is not None and sandbox.required)):
                self._state(tool_call, sandbox_statement(sandbox, grant))
            elif grant is None and (statement := kernel_statement(sandbox, tool_call)) is not None:
                self._state(tool_call, statement)
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
        verdict, label = self._verdict(launcher, tool_call)
        uncovered = None  # an allow rule's words matched, the call does more: the mode decides, the card says why
        if verdict is not None and verdict.uncovered:
            verdict, uncovered = None, label
        if verdict is not None and verdict.action == "deny" and label:
            self._remember(tool_call, label)
            return "deny"
        reason = None if launcher.mode in ("deny-all", "allow-all") else self._read_reason(launcher, tool_call)
        if reason is not None and runs_sandboxed(launcher.sandbox, launcher.mode, tool_call):
            reason = None  # a credential the command names is hidden from it in the sandbox
        if launcher.mode == "auto":
            asked = sandbox_reason(launcher.sandbox, tool_call)
            reason = "; ".join(text for text in (reason, asked) if text) or None
        if verdict is not None and launcher.mode != "deny-all":
            if verdict.action == "allow" and (reason is None or launcher.mode == "allow-all") and label:
                self._remember(tool_call, label)
                return "allow"
            if verdict.action == "auto":  # run sandboxed with no card, when the sandbox can hold it
                held = rule_sandbox_reason(launcher.sandbox, tool_call, launcher.mode)
                if held is None and reason is None and label:
                    self._remember(tool_call, label)
                    self._sandboxed_by_rule.add(_call_id(tool_call))
                    return "allow"
                reason = "; ".join(text for text in (reason, held) if text) or None
            auto: ApprovalDecision | None = None
            reason = "; ".join(text for text in (label, reason) if text) or None
        else:
            auto = self._auto_decision(launcher, tool_call, reason)
            if auto is not None:
                self._remember(tool_call, self._auto_reason(launcher, tool_call, auto))
            reason = uncovered or reason
        where = route(auto, launching_cell_running, running is not None)
        # a saved allow rule could not change what a matching rule already says: no offer then
        offer = self._offer(launcher, tool_call) if where.startswith("ask") and verdict is None else None
        already_always = tool_name_of(tool_call) in launcher.always_allowed
        if where == "ask-launching-cell":
            return self._clicked(
                tool_call,
                launcher,
                already_always,
                await launcher.asker.ask(tool_call, launcher.always_allowed, reason=reason, offer=offer),
            )
        if where == "ask-running-cell" and running is not None:
            return self._clicked(
                tool_call,
                launcher,
                already_always,
                await running.asker.ask_here(tool_call, launcher.always_allowed, reason, offer=offer),
            )
        if where == "deny" and auto is None:
            self._remember(tool_call, "denied: no cell is running to ask")
        return "allow" if where == "allow" else "deny"
