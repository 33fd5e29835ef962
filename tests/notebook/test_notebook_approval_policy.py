"""The notebook's approval policy, without a kernel: the router over launching mode × later cell
mode × which cell runs (the launching cell, a later one, none), the escalation cases, "always
allow" per session, the ask channels (real ipywidgets button rows, stdin, none) and the rows a
cell leaves open when it ends or is interrupted."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from penguin_jupyter.interfaces import AbortSignal
from penguin_jupyter.notebook.runtime.approval import (
    CELL_ENDED_NOTE,
    NO_STDIN_NOTE,
    ApprovalRow,
    CellAsker,
    Channel,
)
from penguin_jupyter.notebook.runtime.approval_router import ApprovalRouter, CellApproval, route
from penguin_jupyter.notebook.runtime.options import APPROVAL_MODES
from penguin_jupyter.omni import OmniMessage, tool_call, with_origin

pytestmark = pytest.mark.security

PERMISSIONS = {"read_file": "r", "exec_command": "rw"}
WHERE = contextvars.ContextVar("WHERE", default="nowhere")


class Surface:
    """Records what a cell was asked to show (the real views are tested elsewhere)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ApprovalRow | None, bool, str]] = []
        self.notes: list[str] = []

    def show_approval(self, call: OmniMessage, row: ApprovalRow | None, *, background: bool = False, preview=None) -> None:
        self.asked.append((call.payload.name, row, background, WHERE.get()))

    def show_note(self, text: str) -> None:
        self.notes.append(text)


class FakeCell:
    """A cell's approval side: its mode, its surface and the answers its human gives on stdin."""

    def __init__(
        self,
        mode: str,
        name: str,
        *,
        answers: list[str] | None = None,
        channel: Channel = "stdin",
        always: set[str] | None = None,
    ) -> None:
        self.surface = Surface()
        self.prompts: list[str] = []
        self.signal = AbortSignal()
        answers_left = list(answers or ["y"] * 10)

        def answer(prompt: str) -> str:
            self.prompts.append(prompt)
            return answers_left.pop(0)

        context = contextvars.copy_context()
        context.run(WHERE.set, name)
        asker = CellAsker(
            channel=channel, surface=self.surface, signal=self.signal, context=context, input_fn=answer
        )
        self.approval = CellApproval(
            mode=mode,
            always_allowed=always if always is not None else set(),
            permission_of=lambda tool: PERMISSIONS.get(tool),  # type: ignore[arg-type,return-value]
            asker=asker,
        )

    @property
    def asked(self) -> list[str]:
        return [name for name, _row, _bg, _where in self.surface.asked]


class Kernel:
    """The running-cell pointer the runtime keeps, and the router over it."""

    def __init__(self) -> None:
        self.running: FakeCell | None = None
        self.router = ApprovalRouter(lambda: self.running.approval if self.running is not None else None)

    def start(self, cell: FakeCell) -> None:
        self.running = cell

    def end(self, cell: FakeCell) -> None:
        cell.approval.asker.close_pending(CELL_ENDED_NOTE)
        cell.approval.ended = True
        self.running = None


def _call(name: str, call_id: str = "c1", hop: str | None = None) -> OmniMessage:
    args = {"file_path": "a.txt"} if name == "read_file" else {"cmd": "ls"}
    message = tool_call(name, args, call_id)
    return with_origin(message, hop) if hop else message


def _expected(launching_mode: str, tool: str, situation: str) -> tuple[str, str | None]:
    """(decision, who was asked) — the table in docs/notebook-runtime.md, written out."""
    if launching_mode == "deny-all":
        return "deny", None
    if launching_mode == "allow-all":
        return "allow", None
    if launching_mode in ("read-only", "auto") and PERMISSIONS[tool] == "r":
        return "allow", None  # auto reads as read-only; its commands ask here (no sandbox given)
    if situation == "launching cell running":
        return "allow", "launching"  # its human answers "y"
    if situation == "later cell running":
        return "allow", "later"  # the later cell lends its buttons; its human answers "y"
    return "deny", None  # nobody can answer


@pytest.mark.parametrize("tool", ["read_file", "exec_command"])
@pytest.mark.parametrize("situation", ["launching cell running", "later cell running", "no cell running"])
@pytest.mark.parametrize("later_mode", APPROVAL_MODES)
@pytest.mark.parametrize("launching_mode", APPROVAL_MODES)
async def test_policy_matrix(launching_mode: str, later_mode: str, situation: str, tool: str) -> None:
    kernel = Kernel()
    launching, later = FakeCell(launching_mode, "cell 1"), FakeCell(later_mode, "cell 2")
    approve = kernel.router.approve_fn(launching.approval)  # kept by the background subagent
    kernel.start(launching)
    if situation != "launching cell running":
        kernel.end(launching)
    if situation == "later cell running":
        kernel.start(later)

    decision = await approve(_call(tool, hop="session-bg-1"))

    expected, asked = _expected(launching_mode, tool, situation)
    assert decision == expected
    assert launching.asked == ([tool] if asked == "launching" else [])
    assert later.asked == ([tool] if asked == "later" else [])


async def test_escalation_a_later_allow_all_cell_does_not_decide_for_an_earlier_read_only_cell() -> None:
    kernel = Kernel()
    earlier = FakeCell("read-only", "cell 1")
    later = FakeCell("allow-all", "cell 2", answers=["n"])
    approve = kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    kernel.start(later)

    assert await approve(_call("exec_command", hop="session-bg-1")) == "deny"  # the human said no
    assert later.asked == ["exec_command"] and earlier.asked == []
    _name, _row, background, where = later.surface.asked[0]
    assert background is True  # inside the subagent's background card
    assert where == "cell 2"  # rendered in the running cell's context (its output parent)
    assert await approve(_call("read_file", "c2", hop="session-bg-1")) == "allow"  # read-only decides reads
    assert later.asked == ["exec_command"]


async def test_escalation_with_no_cell_running_only_the_launching_mode_decides() -> None:
    kernel = Kernel()
    earlier = FakeCell("read-only", "cell 1")
    approve = kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    assert await approve(_call("read_file", hop="session-bg-1")) == "allow"
    assert await approve(_call("exec_command", "c2", hop="session-bg-1")) == "deny"
    assert earlier.asked == []


async def test_a_later_deny_all_cell_lends_its_buttons_without_denying() -> None:
    kernel = Kernel()
    earlier, later = FakeCell("ask", "cell 1"), FakeCell("deny-all", "cell 2", answers=["y"])
    approve = kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    kernel.start(later)
    assert await approve(_call("exec_command", hop="session-bg-1")) == "allow"
    assert later.asked == ["exec_command"]


async def test_the_later_cells_own_task_is_judged_by_its_own_mode() -> None:
    kernel = Kernel()
    earlier, later = FakeCell("ask", "cell 1"), FakeCell("allow-all", "cell 2")
    kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    kernel.start(later)
    own = kernel.router.approve_fn(later.approval)
    assert await own(_call("exec_command")) == "allow"
    assert later.asked == [] and earlier.asked == []


async def test_always_allow_answered_in_a_later_cell_holds_for_the_session() -> None:
    kernel = Kernel()
    session_set: set[str] = set()
    earlier = FakeCell("ask", "cell 1", always=session_set)
    later = FakeCell("ask", "cell 2", answers=["a"], always=session_set)
    approve = kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    kernel.start(later)
    assert await approve(_call("exec_command", hop="session-bg-1")) == "allow"
    assert session_set == {"exec_command"}
    kernel.end(later)
    assert await approve(_call("exec_command", "c2", hop="session-bg-1")) == "allow"  # no cell: still allowed
    assert later.asked == ["exec_command"]


async def test_deny_all_wins_over_always_allow() -> None:
    kernel = Kernel()
    cell = FakeCell("deny-all", "cell 1", always={"exec_command"})
    kernel.start(cell)
    assert await kernel.router.approve_fn(cell.approval)(_call("exec_command")) == "deny"


def test_route_table() -> None:
    assert route("deny", True, True) == "deny"
    assert route("allow", False, False) == "allow"
    assert route(None, True, True) == "ask-launching-cell"
    assert route(None, False, True) == "ask-running-cell"
    assert route(None, False, False) == "deny"


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown approval mode 'sometimes'"):
        FakeCell("sometimes", "cell 1")


# --- asking: buttons, stdin, none ------------------------------------------------------------------


async def _first_row(surface: Surface) -> ApprovalRow:
    for _ in range(100):
        if surface.asked and surface.asked[-1][1] is not None:
            row = surface.asked[-1][1]
            assert row is not None
            return row
        await asyncio.sleep(0.01)
    raise AssertionError("no button row was shown")


async def test_buttons_in_the_running_cell_answer_an_earlier_cells_subagent() -> None:
    kernel = Kernel()
    earlier = FakeCell("read-only", "cell 1", channel="buttons")
    later = FakeCell("allow-all", "cell 2", channel="buttons")
    approve = kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    kernel.start(later)
    pending = asyncio.ensure_future(approve(_call("exec_command", hop="session-bg-1")))
    row = await _first_row(later.surface)
    assert not pending.done()  # allow-all of the running cell did not decide it
    row.approve_button.click()
    assert await asyncio.wait_for(pending, 5) == "allow"
    assert row.approve_button.disabled and "approved" in row.status.value


async def test_a_row_left_open_when_its_cell_ends_is_denied() -> None:
    kernel = Kernel()
    earlier, later = FakeCell("ask", "cell 1"), FakeCell("ask", "cell 2", channel="buttons")
    approve = kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    kernel.start(later)
    pending = asyncio.ensure_future(approve(_call("exec_command", hop="session-bg-1")))
    row = await _first_row(later.surface)
    kernel.end(later)
    assert await asyncio.wait_for(pending, 5) == "deny"
    assert row.deny_button.disabled and CELL_ENDED_NOTE in row.status.value


async def test_interrupting_the_asking_cell_denies_its_open_row() -> None:
    kernel = Kernel()
    cell = FakeCell("ask", "cell 1", channel="buttons")
    kernel.start(cell)
    pending = asyncio.ensure_future(kernel.router.approve_fn(cell.approval)(_call("exec_command")))
    row = await _first_row(cell.surface)
    cell.signal.abort("user")
    assert await asyncio.wait_for(pending, 5) == "deny"
    assert row.approve_button.disabled and "interrupted" in row.status.value


async def test_no_way_to_ask_denies_with_a_note_in_the_asking_cell() -> None:
    kernel = Kernel()
    earlier, later = FakeCell("ask", "cell 1"), FakeCell("ask", "cell 2", channel="none")
    approve = kernel.router.approve_fn(earlier.approval)
    kernel.start(earlier)
    kernel.end(earlier)
    kernel.start(later)
    assert await approve(_call("exec_command", hop="session-bg-1")) == "deny"
    assert later.surface.notes == [NO_STDIN_NOTE]


async def test_stdin_answers_and_always_allow() -> None:
    kernel = Kernel()
    cell = FakeCell("ask", "cell 1", answers=["n", "always"])
    kernel.start(cell)
    approve = kernel.router.approve_fn(cell.approval)
    assert await approve(_call("exec_command")) == "deny"
    assert await approve(_call("exec_command", "c2")) == "allow"
    assert await approve(_call("exec_command", "c3")) == "allow"  # always: not asked again
    assert len(cell.prompts) == 2 and cell.prompts[0].startswith('Approve exec_command {"cmd": "ls"}?')
