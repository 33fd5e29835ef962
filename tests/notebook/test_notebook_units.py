"""Unit tests of the notebook layer's pure parts: options, workspace, transformer, throttle,
split blocks, live routing and the plain-text view (real ipywidgets objects,
no kernel)."""

from __future__ import annotations

import asyncio
import io
import re

import pytest

from penguin_jupyter.notebook.extension import transform_penguin_cell
from penguin_jupyter.notebook.live.live_blocks import SplitTextBlock
from penguin_jupyter.notebook.live.live_render import pre_html
from penguin_jupyter.notebook.live.live_throttle import (
    MAX_UPDATES_PER_SECOND,
    TEXT_INTERVAL_S,
    ThrottledSetter,
)
from penguin_jupyter.notebook.live.live_view import LiveView
from penguin_jupyter.notebook.live.plain_view import PlainView
from penguin_jupyter.notebook.runtime.options import OptionError, parse_cell_options, parse_line_command
from penguin_jupyter.notebook.runtime.workspace import resolve_workspace
from penguin_jupyter.omni import (
    partial_text,
    partial_tool_call_output,
    tool_call,
    tool_call_output,
    user_text,
    with_origin,
)
from penguin_jupyter.redaction import Redactor

# --- options ------------------------------------------------------------------------------


def test_cell_options_parse_every_flag():
    opts = parse_cell_options(
        "--model openai/gpt-4.1 --approve read-only --thinking high --max-turns 5 --workspace /tmp/w --quiet"
    )
    assert opts.model == ("openai", "gpt-4.1")
    assert (opts.approve, opts.thinking, opts.max_turns, opts.workspace, opts.quiet) == (
        "read-only",
        "high",
        5,
        "/tmp/w",
        True,
    )
    assert parse_cell_options("--new").new and parse_cell_options("--session abc").session_id == "abc"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("--model gpt-4.1", "penguin: --model needs PROVIDER/MODEL_ID (both halves), got 'gpt-4.1'"),
        (
            "--approve maybe",
            "penguin: unknown approval mode 'maybe' (choose from ask, read-only, auto, allow-all, deny-all)",
        ),
        (
            "--thinking lots",
            "penguin: unknown thinking level 'lots' (choose from none, low, medium, high, xhigh, max)",
        ),
        ("--max-turns x", "penguin: --max-turns needs an integer, got 'x'"),
        ("--session", "penguin: option --session needs a value"),
        ("--new --session s1", "penguin: --new and --session cannot be used together"),
    ],
)
def test_bad_cell_options_are_one_line(line, message):
    with pytest.raises(OptionError) as info:
        parse_cell_options(line)
    assert str(info.value) == message
    assert "\n" not in str(info.value)


def test_unknown_option_mentions_usage():
    with pytest.raises(OptionError, match=r"^penguin: unknown option '--fast'; usage: %%penguin"):
        parse_cell_options("--fast")


def test_line_commands():
    assert parse_line_command("").name == "help"
    assert (parse_line_command("resume s-1").name, parse_line_command("resume s-1").arg) == ("resume", "s-1")
    with pytest.raises(OptionError, match="usage: %penguin approve MODE"):
        parse_line_command("approve")
    with pytest.raises(OptionError, match="unknown command 'fly'"):
        parse_line_command("fly")


# --- workspace ------------------------------------------------------------------------------


def test_workspace_resolution_order(tmp_path):
    nb_dir = tmp_path / "nbs"
    nb_dir.mkdir()
    notebook = str(nb_dir / "analysis.ipynb")
    explicit = tmp_path / "explicit"
    assert resolve_workspace(str(explicit), {}, {"JPY_SESSION_NAME": notebook}) == str(explicit)
    assert resolve_workspace(None, {}, {"JPY_SESSION_NAME": notebook}) == str(nb_dir)
    assert resolve_workspace(None, {"__session__": notebook}, {}) == str(nb_dir)
    assert resolve_workspace(None, {"__vsc_ipynb_file__": notebook}, {}) == str(nb_dir)
    assert resolve_workspace(None, {}, {}) == str(__import__("pathlib").Path.cwd().resolve())


# --- transformer ----------------------------------------------------------------------------


def test_transformer_rewrites_cells_into_awaits():
    out = transform_penguin_cell(["%%penguin --new\n", "List files\n", "and 'quote'\n"])
    assert len(out) == 1 and out[0].startswith("await __import__('penguin_jupyter.notebook.runtime.runner'")
    assert "run_cell('--new', \"List files\\nand 'quote'\\n\")" in out[0]
    assert transform_penguin_cell(["x = 1\n", "%penguin status\n"])[1].startswith("await __import__(")
    assert transform_penguin_cell(["%%penguinx\n"]) == ["%%penguinx\n"]
    assert transform_penguin_cell(["print('%%penguin')\n"]) == ["print('%%penguin')\n"]


# --- throttle and split blocks --------------------------------------------------------------


class _Sink:
    def __init__(self):
        self.values = []

    @property
    def value(self):
        return self.values[-1] if self.values else None

    @value.setter
    def value(self, v):
        self.values.append(v)


async def test_throttle_coalesces_and_always_sends_the_last_value():
    sink = _Sink()
    setter = ThrottledSetter(sink)
    for i in range(500):
        setter.set(i)
        if i % 50 == 0:
            await asyncio.sleep(0)
    await asyncio.sleep(0.2)
    assert sink.values[-1] == 499
    assert len(sink.values) <= 3
    assert MAX_UPDATES_PER_SECOND == 20


async def test_throttle_rate_over_time():
    sink = _Sink()
    setter = ThrottledSetter(sink)
    loop = asyncio.get_running_loop()
    end = loop.time() + 0.5
    n = 0
    while loop.time() < end:
        setter.set(n)
        n += 1
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.2)
    assert sink.values[-1] == n - 1
    assert len(sink.values) <= 0.7 * MAX_UPDATES_PER_SECOND + 2


async def test_split_block_freezes_finished_text():
    import ipywidgets as widgets

    box = widgets.VBox([])
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=100)
    lines = [f"line {i:03d}\n" for i in range(60)]
    for i, line in enumerate(lines):
        block.append(line)
        if i % 12 == 11:
            await asyncio.sleep(TEXT_INTERVAL_S + 0.01)  # splits are rate-limited like updates
    block.flush()
    await asyncio.sleep(0.1)
    assert block.text == "".join(lines)
    assert len(block.widgets) > 4
    # every widget holds only its own chunk: no update re-sends finished text
    shown = [re.sub(r"<[^>]+>", "", w.value) for w in block.widgets]
    assert "".join(shown) == "".join(lines)
    assert all(0 < len(chunk) <= 110 for chunk in shown)


async def test_text_blocks_update_at_the_text_rate():
    import ipywidgets as widgets

    block = SplitTextBlock(widgets.VBox([]), pre_html, boundary="\n", chunk_chars=10_000)
    loop = asyncio.get_running_loop()
    end = loop.time() + 0.5
    while loop.time() < end:
        block.append("x")
        await asyncio.sleep(0.001)
    block.flush()
    sent = block._setter.sent_count if block._setter else 0
    assert re.sub(r"<[^>]+>", "", block.widgets[-1].value) == block.text
    assert sent <= 0.5 / TEXT_INTERVAL_S + 2


# --- approval: tests/notebook/test_notebook_approval_policy.py ----------------------------------------


# --- live routing ----------------------------------------------------------------------------


async def test_outputs_route_by_tool_call_id_and_subagents_nest():
    view = LiveView({"session_id": "s"}, lambda: None, redactor=Redactor([("K", "SECRET-VALUE")]))
    view.handle(tool_call("exec_command", {"cmd": "a"}, "A"))
    view.handle(tool_call("exec_command", {"cmd": "b"}, "B"))
    view.handle(partial_tool_call_output("delta", "from B SECRET-VALUE\n", "B"))
    view.handle(partial_tool_call_output("delta", "from A\n", "A"))
    view.handle(tool_call_output("from B SECRET-VALUE\n", "B"))
    child = with_origin(tool_call("read_file", {"file_path": "x"}, "C"), "sub-1")
    view.handle(child)
    view.handle(partial_text("delta", "hello"))
    view.finish("completed")
    cards = view.scope.cards
    assert set(cards) == {"A", "B"}
    assert cards["A"].output.text == "from A\n" and cards["B"].output.text == "from B SECRET-VALUE\n"
    assert "SECRET" not in cards["B"].output.widgets[0].value
    assert "[redacted:K]" in cards["B"].output.widgets[0].value
    assert set(view.scope.children) == {"sub-1"} and set(view.scope.children["sub-1"].cards) == {"C"}
    assert view.header.stop_button.disabled


def test_plain_view_streams_text():
    out = io.StringIO()
    view = PlainView(
        {"provider": "p", "model_id": "m", "workspace": "/w", "session_id": "s", "approval_mode": "ask"},
        stream=out,
    )
    view.handle(user_text("ignored"))
    view.handle(partial_text("delta", "Hello "))
    view.handle(partial_text("delta", "world"))
    view.handle(tool_call("exec_command", {"cmd": "ls"}, "c1"))
    view.handle(tool_call_output("a.txt", "c1"))
    view.finish("completed")
    assert out.getvalue().splitlines() == [
        "🐧 p/m · workspace /w · session s · approve: ask",
        "Hello world",
        "🔧 exec_command $ ls",
        "  → completed",
        "— completed",
    ]


async def test_retry_countdown_ticks_and_stops_on_the_next_request():
    from penguin_jupyter.omni import abort, request_begin, request_end

    view = LiveView({"session_id": "s"}, lambda: None)
    view.handle(request_end("timeout", error_message="idle timeout", attempt=1, retry_in_ms=2000))
    label = view.body.children[-1]
    assert "request failed: idle timeout — attempt 1, retrying in 2s" in label.value
    await asyncio.sleep(1.2)
    assert "retrying in 1s" in label.value
    view.handle(request_begin())
    assert view.scope.countdown is None
    view.handle(abort("aborted by user"))
    assert "interrupted (aborted by user)" in view.body.children[-1].value


def test_long_output_collapses_to_head_and_tail_with_full_text_on_expand():
    import ipywidgets as widgets

    from penguin_jupyter.notebook.live.live_cards import ToolCardWidget

    card = ToolCardWidget("c1", "exec_command")
    text = "".join(f"row {i}\n" for i in range(100))
    card.append_output(text)
    card.finish(tool_call_output(text, "c1"))
    summary, full = card.output_box.children
    assert "row 0" in summary.value and "row 99" in summary.value and "… 70 more lines …" in summary.value
    assert "row 50" not in summary.value
    assert isinstance(full, widgets.Accordion) and full.selected_index is None
    assert full.get_title(0) == "Full output (100 lines)"
    assert "completed" in card.status.value


def test_quiet_cards_collapse_output():
    from penguin_jupyter.notebook.live.live_cards import ToolCardWidget

    card = ToolCardWidget("c1", "exec_command", quiet=True)
    assert card.output_accordion.selected_index is None
    assert card.output_accordion.children == (card.output_box,)


def test_line_command_summaries():
    from penguin_jupyter.notebook.runtime.line_commands import _compaction_summary, _describe_session
    from penguin_jupyter.omni import compaction_begin, compaction_end

    assert _compaction_summary([]) == "penguin: nothing to compact"
    done = [
        compaction_begin("manual", "summarize", 100, 2),
        compaction_end("manual", "summarize", "completed"),
    ]
    assert _compaction_summary(done) == "penguin: compaction completed (summarize)"
    info = {
        "session_id": "s1",
        "date": "2026-12-02",
        "provider": "openai",
        "model_id": "m",
        "workspace": "/w",
        "first_prompt": "Load the data and plot it",
    }
    assert _describe_session(info) == "s1  2026-12-02  openai/m  /w  — Load the data and plot it"


def test_dollars_never_become_math_in_widget_html():
    from penguin_jupyter.notebook.transcript.markdown_html import markdown_html

    out = markdown_html("North **$3,512.00** vs South $3,169.00 — [link](https://x.test/?a=$b)")
    assert "<strong><span>$</span>3,512.00</strong>" in out
    assert "South <span>$</span>3,169.00" in out
    assert 'href="https://x.test/?a=$b"' in out


async def test_splits_are_rate_limited_too():
    import ipywidgets as widgets

    box = widgets.VBox([])
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=50)
    for i in range(2000):  # a burst far faster than 20 updates per second
        block.append(f"burst line {i:04d}\n")
    block.flush()
    assert len(block.widgets) <= 5
    assert block.text.endswith("burst line 1999\n")
