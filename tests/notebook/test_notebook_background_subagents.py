"""Background subagents' live messages in the notebook: the feed's attach/detach and backlog
flush against a real SubagentSessionManager, the live and plain views' background cards/lines,
an in-process plain-text `%%penguin` cell and a real-kernel cell (scripted model servers)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
from pathlib import Path

import pytest

from penguin_jupyter.environment.tools.subagent import SubagentSessionManager
from penguin_jupyter.notebook.live.live_view import LiveView
from penguin_jupyter.notebook.live.plain_view import PlainView
from penguin_jupyter.notebook.runtime.background_feed import BackgroundFeed
from penguin_jupyter.omni import assistant_text, partial_text, tool_call, tool_call_output, with_origin
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.live_text import captured_text, descendant_text, widget_states
from tests.support.session import PROVIDER, configure_child_model, configure_model
from tests.support.subagent import child_meta

HOP = "session-bg-0001"
CHILD_TEXT = "Background answer streamed live."


def _bg(message):
    return with_origin(message, HOP)


def _texts(messages) -> list[str]:
    return [m.payload.text for m in messages]


async def _settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


# --- the feed ----------------------------------------------------------------------------------


async def test_feed_flushes_the_backlog_on_attach_and_buffers_again_after_detach():
    manager = SubagentSessionManager()
    received = []
    manager.forward(_bg(partial_text("delta", "before the cell ")))
    feed = BackgroundFeed(manager, asyncio.get_running_loop(), received.append)
    feed.attach()
    assert received == []  # delivered on the loop, not inside set_message_listener
    await _settle()
    assert _texts(received) == ["before the cell "]
    manager.forward(_bg(partial_text("delta", "during ")))
    manager.forward(_bg(partial_text("delta", "the cell")))
    feed.detach()  # what is queued is delivered at detach, before the view finishes
    assert _texts(received) == ["before the cell ", "during ", "the cell"]
    manager.forward(_bg(partial_text("delta", "between cells")))
    await _settle()
    assert len(received) == 3

    later = []
    next_feed = BackgroundFeed(manager, asyncio.get_running_loop(), later.append)
    next_feed.attach()
    await _settle()
    next_feed.detach()
    assert _texts(later) == ["between cells"]


async def test_feed_hops_onto_the_loop_in_batches_from_another_thread():
    manager = SubagentSessionManager()
    loop_thread = threading.get_ident()
    threads: list[int] = []
    received = []

    def sink(message):
        threads.append(threading.get_ident())
        received.append(message)

    feed = BackgroundFeed(manager, asyncio.get_running_loop(), sink)
    feed.attach()

    def produce() -> None:
        for n in range(200):
            manager.forward(_bg(partial_text("delta", f"{n} ")))

    await asyncio.to_thread(produce)
    await _settle()
    feed.detach()
    assert _texts(received) == [f"{n} " for n in range(200)]
    assert set(threads) == {loop_thread}
    assert 1 <= feed.batches < 200  # one loop callback per batch, not one per message


async def test_a_message_racing_detach_goes_back_to_the_backlog():
    manager = SubagentSessionManager()
    received = []
    feed = BackgroundFeed(manager, asyncio.get_running_loop(), received.append)
    feed.attach()
    feed.detach()
    feed.receive(_bg(partial_text("delta", "late")))  # a delivery that read the old listener
    assert received == []
    later = []
    BackgroundFeed(manager, asyncio.get_running_loop(), later.append).attach()
    await _settle()
    assert _texts(later) == ["late"]


# --- the views ---------------------------------------------------------------------------------


async def test_live_view_nests_background_messages_in_a_background_card():
    view = LiveView({"session_id": "s"}, lambda: None)
    view.header.set_status("idle")
    view.handle_background(_bg(partial_text("delta", "streamed ")))
    view.handle_background(_bg(tool_call("read_file", {"file_path": "x"}, "C")))
    view.handle_background(_bg(tool_call_output("x body", "C")))
    view.finish("completed")
    child = view.scope.children[HOP]
    accordion, _ = child.title_holder
    assert accordion.get_title(0) == f"Subagent {HOP} (background)"
    assert set(child.cards) == {"C"} and child.cards["C"].output.text == "x body"
    assert view.scope.cards == {}  # nothing leaked into the main scope


async def test_a_foreground_card_turns_background_when_live_messages_arrive():
    view = LiveView({"session_id": "s"}, lambda: None)
    meta = child_meta(HOP)
    view.handle(_bg(meta))  # the launch yields the child's meta through the main stream
    accordion, _ = view.scope.children[HOP].title_holder
    assert accordion.get_title(0) == f"Subagent {HOP} — p/m"
    view.handle_background(_bg(partial_text("delta", "hi")))
    assert accordion.get_title(0) == f"Subagent {HOP} — p/m (background)"


async def test_a_flushed_backlog_costs_a_few_widget_updates_not_one_per_message(monkeypatch):
    from penguin_jupyter.notebook.live import live_throttle

    sent = []
    original = live_throttle.ThrottledSetter.flush

    def counting_flush(self):
        if self._has_pending:
            sent.append(self)
        original(self)

    monkeypatch.setattr(live_throttle.ThrottledSetter, "flush", counting_flush)
    manager = SubagentSessionManager()
    for n in range(2000):
        manager.forward(_bg(partial_text("delta", f"w{n} ")))
    view = LiveView({"session_id": "s"}, lambda: None)
    feed = BackgroundFeed(manager, asyncio.get_running_loop(), view.handle_background)
    feed.attach()
    await _settle()
    feed.detach()
    view.finish("completed")
    text = view.scope.children[HOP].blocks[0]
    assert feed.delivered == 2000 and feed.batches == 1
    assert text.text == "".join(f"w{n} " for n in range(2000))
    assert len(sent) <= 2 * len(text.widgets) + 2  # per widget: at most its first and last value


def test_plain_view_prints_background_lines_with_the_subagent_prefix():
    out = io.StringIO()
    view = PlainView(
        {"provider": "p", "model_id": "m", "workspace": "/w", "session_id": "s", "approval_mode": "ask"},
        stream=out,
    )
    view.handle(partial_text("delta", "Main text "))
    view.handle_background(_bg(partial_text("delta", "first line\nsec")))
    view.handle(partial_text("delta", "continues"))
    view.handle_background(_bg(partial_text("delta", "ond line")))
    view.handle_background(_bg(assistant_text("first line\nsecond line")))
    view.handle_background(_bg(tool_call("exec_command", {"cmd": "ls"}, "c1")))
    view.handle_background(_bg(tool_call_output("a.txt", "c1")))
    view.handle_background(_bg(assistant_text("unstreamed answer")))
    view.finish("completed")
    assert out.getvalue().splitlines()[1:] == [
        "Main text ",
        f"[{HOP}] background subagent",
        f"[{HOP}] first line",
        "continues",
        f"[{HOP}] second line",
        f"[{HOP}] 🔧 exec_command $ ls",
        f"[{HOP}]   → completed",
        f"[{HOP}] unstreamed answer",
        "— completed",
    ]


# --- end to end --------------------------------------------------------------------------------

RELEASE = "release.flag"
WAIT_FOR_RELEASE = f"while [ ! -e {RELEASE} ]; do sleep 0.05; done; echo released"


def _scripts() -> tuple[list[dict], list[dict]]:
    parent = [
        {
            "tool_calls": [
                {
                    "name": "run_subagent",
                    "id": "p1",
                    "arguments": {
                        "description": "Research in the background.",
                        "prompt": "Research quietly.",
                        "run_in_background": True,
                        "provider": PROVIDER,
                        "model_id": "child-model",
                    },
                }
            ]
        },
        # The parent waits until the test saw the child's text (deterministic, no timing).
        {"tool_calls": [{"name": "exec_command", "id": "p2", "arguments": {"cmd": WAIT_FOR_RELEASE}}]},
        {"text": "Parent done."},
    ]
    child = [{"text": [CHILD_TEXT[:12], CHILD_TEXT[12:]]}]
    return parent, child


def _configure(parent_server: ScriptedModelServer, child_server: ScriptedModelServer) -> None:
    root = Path(os.environ["PENGUIN_HOME"])
    configure_model(root, parent_server)
    configure_child_model(root, child_server)


class _ReleasingStdout(io.StringIO):
    """stdout that lets the parent's waiting command finish once the child's line was printed."""

    def __init__(self, release: Path) -> None:
        super().__init__()
        self.release = release

    def write(self, text: str) -> int:
        written = super().write(text)
        if CHILD_TEXT in self.getvalue() and not self.release.exists():
            self.release.write_text("go")
        return written


async def test_plain_cell_prints_the_background_childs_answer_with_its_prefix(tmp_path, monkeypatch):
    from penguin_jupyter.notebook.runtime.runner import run_cell

    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    out = _ReleasingStdout(workspace / RELEASE)
    monkeypatch.setattr("sys.stdout", out)
    parent, child = _scripts()
    with ScriptedModelServer(parent) as parent_server, ScriptedModelServer(child) as child_server:
        _configure(parent_server, child_server)
        try:
            await asyncio.wait_for(run_cell("--approve allow-all", "Start research in the background."), 120)
        finally:
            (workspace / RELEASE).write_text("go")
    lines = out.getvalue().splitlines()
    prefixed = [line for line in lines if line.startswith("[session-")]
    hop = prefixed[0][1 : prefixed[0].index("]")]
    assert prefixed == [f"[{hop}] background subagent", f"[{hop}] {CHILD_TEXT}"]
    assert "Parent done." in out.getvalue()


def _widget_states(result) -> dict[str, dict]:
    """comm_id → the widget's latest state; an Output's captured stream text shows as its value."""
    states = widget_states(result.messages)
    for comm_id, text in captured_text(result.messages)[0].items():
        states.setdefault(comm_id, {})["value"] = text
    return states


@pytest.mark.kernel
def test_kernel_cell_shows_the_background_childs_text_in_a_background_card(tmp_path):
    notebook_dir = tmp_path / "project" / "notebooks"
    notebook_dir.mkdir(parents=True)
    parent, child = _scripts()
    with ScriptedModelServer(parent) as parent_server, ScriptedModelServer(child) as child_server:
        _configure(parent_server, child_server)
        kernel_cwd = tmp_path / "elsewhere"
        kernel_cwd.mkdir()
        env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb")})
        kernel = KernelHarness(str(kernel_cwd), env)
        released: list[bool] = []

        def on_message(msg, result):
            if released or msg["msg_type"] not in ("comm_open", "comm_msg"):
                return
            if CHILD_TEXT in json.dumps(msg["content"]):
                released.append(True)
                (notebook_dir / RELEASE).write_text("go")

        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            result = kernel.execute(
                "%%penguin --approve allow-all\nStart research in the background.",
                on_message=on_message,
                timeout=120,
            )
        finally:
            (notebook_dir / RELEASE).write_text("go")
            kernel.close()
    assert result.reply["content"]["status"] == "ok", result.stderr
    assert released, "the background child's text never reached the cell's widgets"
    states = _widget_states(result)
    cards = _background_cards(states)
    assert len(cards) == 1, "one background subagent card"
    title = next(str(t) for t in states[cards[0]].get("_titles") or states[cards[0]]["titles"] if t)
    assert title.startswith("Subagent session-") and "child-model" in title
    assert CHILD_TEXT in descendant_text(result.messages, cards[0]).replace("\n", "")
    bundle = result.final_bundles()[-1]["application/vnd.penguin.transcript+json"]
    child_answers = [
        m
        for m in bundle["messages"]
        if m.get("origin") and m["payload"].get("type") == "text" and m["payload"].get("role") == "assistant"
    ]
    assert [m["payload"]["text"] for m in child_answers] == [CHILD_TEXT]
    assert "Parent done." in result.final_bundles()[-1]["text/html"]


WAIT_FOR_CHILD = (
    "import asyncio\n"
    "_m = get_ipython()._penguin_runtime.sessions.session.background_subagents()\n"
    "while _m.has_running():\n"
    "    await asyncio.sleep(0.05)\n"
)


@pytest.mark.kernel
def test_kernel_next_cell_flushes_what_the_child_said_between_cells(tmp_path):
    notebook_dir = tmp_path / "project" / "notebooks"
    notebook_dir.mkdir(parents=True)
    parent, _ = _scripts()
    parent = [parent[0], {"text": "Started it."}, {"text": "Noted the report."}]
    child = [
        {"tool_calls": [{"name": "exec_command", "id": "k1", "arguments": {"cmd": WAIT_FOR_RELEASE}}]},
        {"text": CHILD_TEXT},
    ]
    with ScriptedModelServer(parent) as parent_server, ScriptedModelServer(child) as child_server:
        _configure(parent_server, child_server)
        kernel_cwd = tmp_path / "elsewhere"
        kernel_cwd.mkdir()
        env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb")})
        kernel = KernelHarness(str(kernel_cwd), env)
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            first = kernel.execute("%%penguin --approve allow-all\nStart research.", timeout=120)
            (notebook_dir / RELEASE).write_text("go")  # the child finishes after the first cell
            waited = kernel.execute(WAIT_FOR_CHILD, timeout=120)
            second = kernel.execute("%%penguin --approve allow-all\nAnything new?", timeout=120)
        finally:
            (notebook_dir / RELEASE).write_text("go")
            kernel.close()
    for result in (first, waited, second):
        assert result.reply["content"]["status"] == "ok", result.stderr
    assert CHILD_TEXT not in json.dumps([m["content"] for m in first.messages], default=str)
    states = _widget_states(second)
    cards = _background_cards(states)
    assert len(cards) == 1
    title = next(str(t) for t in states[cards[0]].get("_titles") or states[cards[0]]["titles"] if t)
    assert "child-model" in title  # the meta seen in the first cell names the model here
    shown = descendant_text(second.messages, cards[0])
    assert CHILD_TEXT in shown and "released" in shown  # the child's command output, too
    bundle = second.final_bundles()[-1]["application/vnd.penguin.transcript+json"]
    origins = {tuple(m["origin"]) for m in bundle["messages"] if m.get("origin")}
    assert len(origins) == 1
    metas = [m for m in bundle["messages"] if m.get("origin") and m.get("type") == "session_meta"]
    assert len(metas) == 1 and metas[0]["payload"]["model_id"] == "child-model"


# --- a background child's approval after the cell that launched it ended ----------------------

CHILD_STARTED = "child_started.flag"
CHILD_WROTE = "child_wrote.txt"
CHILD_WAITS = f"touch {CHILD_STARTED}; {WAIT_FOR_RELEASE}"
CHILD_WRITES = f"echo approved-in-cell-two > {CHILD_WROTE}; cat {CHILD_WROTE}"
PARENT_WAITS_FOR_START = f"while [ ! -e {CHILD_STARTED} ]; do sleep 0.05; done; echo child started"
PARENT_WAITS_FOR_WRITE = f"while [ ! -e {CHILD_WROTE} ]; do sleep 0.05; done; cat {CHILD_WROTE}"
DENIED = "Tool call denied by user."
HOLD_MS = 119_000  # the parent's waits hold its cell for the longest yield (not a 60 s default)


def _launch_then_wait_for_the_child() -> list[dict]:
    """Cell 1 of the parent: launch the child, wait until its first command runs, end."""
    launch = _scripts()[0][0]
    wait = {
        "tool_calls": [
            {
                "name": "exec_command",
                "id": "p2",
                "arguments": {"cmd": PARENT_WAITS_FOR_START, "yield_time_ms": HOLD_MS},
            }
        ]
    }
    return [launch, wait, {"text": "Started it."}]


def _child_waits_then_writes() -> list[dict]:
    return [
        {"tool_calls": [{"name": "exec_command", "id": "k1", "arguments": {"cmd": CHILD_WAITS}}]},
        {"tool_calls": [{"name": "exec_command", "id": "k2", "arguments": {"cmd": CHILD_WRITES}}]},
        {"text": CHILD_TEXT},
    ]


def _ever_inside(result, comm_id: str) -> set[str]:
    """Widgets that were at any time below `comm_id` (a decided approval row is replaced)."""
    edges: dict[str, set[str]] = {}
    for msg in result.of_type("comm_open", "comm_msg"):
        data = msg["content"].get("data", {})
        for child in data.get("state", {}).get("children") or []:
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                edges.setdefault(msg["content"]["comm_id"], set()).add(child[len("IPY_MODEL_") :])
    found, pending = set(), [comm_id]
    while pending:
        current = pending.pop()
        if current not in found:
            found.add(current)
            pending.extend(edges.get(current, ()))
    return found


def _background_cards(states: dict[str, dict]) -> list[str]:
    return [
        comm_id
        for comm_id, state in states.items()
        if state.get("_model_name") == "AccordionModel"
        and any("(background)" in str(title) for title in state.get("_titles") or state.get("titles") or [])
    ]


def _start_kernel(tmp_path: Path, notebook_dir: Path) -> KernelHarness:
    kernel_cwd = tmp_path / "elsewhere"
    kernel_cwd.mkdir()
    env = kernel_env({"JPY_SESSION_NAME": str(notebook_dir / "analysis.ipynb")})
    kernel = KernelHarness(str(kernel_cwd), env)
    assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
    return kernel


@pytest.mark.kernel
def test_kernel_a_later_allow_all_cell_shows_buttons_for_an_earlier_read_only_cells_child(tmp_path):
    """The escalation case: the child of a read-only cell asks after that cell ended; the running
    cell is allow-all, yet its mode does not decide: the buttons sit in the child's card there."""
    notebook_dir = tmp_path / "project" / "notebooks"
    notebook_dir.mkdir(parents=True)
    parent = [
        *_launch_then_wait_for_the_child(),
        # Cell 2 (allow-all): the parent's own command holds the cell until the child's command ran.
        {
            "tool_calls": [
                {
                    "name": "exec_command",
                    "id": "p3",
                    "arguments": {"cmd": PARENT_WAITS_FOR_WRITE, "yield_time_ms": HOLD_MS},
                }
            ]
        },
        {"text": "Parent done."},
    ]
    first_cell: list[str] = []
    second_cell: list[str] = []

    with (
        ScriptedModelServer(parent) as parent_server,
        ScriptedModelServer(_child_waits_then_writes()) as child_server,
    ):
        _configure(parent_server, child_server)
        kernel = _start_kernel(tmp_path, notebook_dir)

        def click_in(clicked: list[str]):
            def on_message(msg, result):
                if msg["msg_type"] != "comm_open":
                    return
                if clicked is second_cell:  # cell 2 runs: only now may the child ask again
                    (notebook_dir / RELEASE).write_text("go")
                for comm_id in result.buttons("Approve"):
                    if comm_id not in clicked:
                        clicked.append(comm_id)
                        kernel.click(comm_id)

            return on_message

        try:
            # read-only: the launch, the parent's wait and the child's first command ask here.
            first = kernel.execute(
                "%%penguin --approve read-only\nStart research.", on_message=click_in(first_cell), timeout=240
            )
            assert (notebook_dir / CHILD_STARTED).exists()  # the child waits on the release file
            second = kernel.execute(
                "%%penguin --approve allow-all\nWait for it.", on_message=click_in(second_cell), timeout=240
            )
        finally:
            (notebook_dir / RELEASE).write_text("go")
            kernel.close()
    for result in (first, second):
        assert result.reply["content"]["status"] == "ok", result.stderr
    assert len(first_cell) == 3
    assert len(second_cell) == 1, "one button in cell 2: the child's command (the parent's ran unasked)"
    assert (notebook_dir / CHILD_WROTE).read_text() == "approved-in-cell-two\n"
    states = _widget_states(second)
    cards = _background_cards(states)
    assert len(cards) == 1, "the child's live messages have a background card in cell 2"
    assert second_cell[0] in _ever_inside(second, cards[0])  # the child's row sits in its card
    assert "approved-in-cell-two" in descendant_text(second.messages, cards[0])
    final = second.final_bundles()[-1]
    assert "Parent done." in final["text/html"]
    child_calls = [
        m
        for m in final["application/vnd.penguin.transcript+json"]["messages"]
        if m.get("origin") and m["payload"].get("type") == "tool_call"
    ]
    assert [json.loads(m["payload"]["arguments"])["cmd"] for m in child_calls][-1] == CHILD_WRITES


@pytest.mark.kernel
def test_kernel_background_childs_approval_with_no_cell_running_is_denied(tmp_path):
    notebook_dir = tmp_path / "project" / "notebooks"
    notebook_dir.mkdir(parents=True)
    parent = [*_launch_then_wait_for_the_child(), {"text": "Noted the report."}]
    clicked: list[str] = []
    with (
        ScriptedModelServer(parent) as parent_server,
        ScriptedModelServer(_child_waits_then_writes()) as child_server,
    ):
        _configure(parent_server, child_server)
        kernel = _start_kernel(tmp_path, notebook_dir)

        def approve_all(msg, result):
            if msg["msg_type"] == "comm_open":
                for comm_id in result.buttons("Approve"):
                    if comm_id not in clicked:
                        clicked.append(comm_id)
                        kernel.click(comm_id)

        try:
            # ask: the launch, the parent's wait and the child's first command are approved here.
            first = kernel.execute(
                "%%penguin --approve ask\nStart research.", on_message=approve_all, timeout=240
            )
            (notebook_dir / RELEASE).write_text("go")  # no cell runs when the child asks again
            waited = kernel.execute(WAIT_FOR_CHILD, timeout=240)
            third = kernel.execute("%%penguin --approve allow-all\nAnything new?", timeout=240)
        finally:
            (notebook_dir / RELEASE).write_text("go")
            kernel.close()
    for result in (first, waited, third):
        assert result.reply["content"]["status"] == "ok", result.stderr
    assert len(clicked) == 3
    assert not (notebook_dir / CHILD_WROTE).exists()
    assert not waited.buttons("Approve") and not third.buttons("Approve")
    states = _widget_states(third)
    cards = _background_cards(states)
    assert len(cards) == 1
    assert DENIED in descendant_text(third.messages, cards[0])
    messages = third.final_bundles()[-1]["application/vnd.penguin.transcript+json"]["messages"]
    outputs = [
        m["payload"] for m in messages if m.get("origin") and m["payload"].get("type") == "tool_call_output"
    ]
    by_call = {p["tool_call_id"]: p for p in outputs}
    assert by_call["k1"]["output"] == "released\n"  # approved in cell 1, ran after it
    assert (by_call["k2"]["stop_reason"], by_call["k2"]["output"]) == ("aborted", DENIED)
    assert CHILD_TEXT in json.dumps(messages)  # the child went on after the denial


@pytest.mark.kernel
def test_kernel_a_background_childs_card_is_closed_once_its_cell_ended(tmp_path):
    """The card that showed a background child's work (in the cell after the one that launched
    it) is closed with that cell: the kernel holds no widget model at all after it."""
    notebook_dir = tmp_path / "project" / "notebooks"
    notebook_dir.mkdir(parents=True)
    parent, _ = _scripts()
    parent = [parent[0], {"text": "Started it."}, {"text": "Noted the report."}]
    child = [
        {"tool_calls": [{"name": "exec_command", "id": "k1", "arguments": {"cmd": WAIT_FOR_RELEASE}}]},
        {"text": CHILD_TEXT},
    ]
    with ScriptedModelServer(parent) as parent_server, ScriptedModelServer(child) as child_server:
        _configure(parent_server, child_server)
        kernel = _start_kernel(tmp_path, notebook_dir)
        try:
            first = kernel.execute("%%penguin --approve allow-all\nStart research.", timeout=120)
            (notebook_dir / RELEASE).write_text("go")
            kernel.execute(WAIT_FOR_CHILD, timeout=120)
            second = kernel.execute("%%penguin --approve allow-all\nAnything new?", timeout=120)
            held = kernel.open_widgets()
        finally:
            (notebook_dir / RELEASE).write_text("go")
            kernel.close()
    for result in (first, second):
        assert result.reply["content"]["status"] == "ok", result.stderr
    cards = _background_cards(_widget_states(second))
    assert len(cards) == 1 and CHILD_TEXT in descendant_text(second.messages, cards[0])
    assert held["queued"] == 0 and held["models"] == 0, held  # the card is gone too
