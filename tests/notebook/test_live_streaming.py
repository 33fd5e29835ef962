"""Live streaming (issue 21) and streaming redaction that cannot be split (issue 16): unit level.

Real ipywidgets without a frontend (comms go nowhere): `StreamTextBlock` records the chunks it
publishes, `SplitTextBlock` its widget values. The kernel-level traffic (iopub bytes, every
split point of a key through a real kernel) is in tests/notebook/test_live_streaming_kernel.py.
"""

from __future__ import annotations

import asyncio
import re

import ipywidgets as widgets
import pytest

from penguin_jupyter.notebook.live.live_blocks import SplitTextBlock
from penguin_jupyter.notebook.live.live_holdback import MIN_SECRET_LENGTH, SecretHoldBack
from penguin_jupyter.notebook.live.live_render import pre_html
from penguin_jupyter.notebook.live.live_stream import StreamOutput, StreamTextBlock
from penguin_jupyter.notebook.live.live_throttle import TEXT_INTERVAL_S
from penguin_jupyter.notebook.live.live_view import LiveView
from penguin_jupyter.notebook.runtime import prewarm as prewarm_module
from penguin_jupyter.omni import (
    assistant_text,
    partial_text,
    partial_thinking,
    partial_tool_call_output,
    tool_call,
    tool_call_output,
)
from penguin_jupyter.redaction import Redactor

KEY = "sk-live-9QbX2mTz7LpW4rVc"
LEAK = 8  # no published piece may hold this many consecutive characters of the key


REDACTOR = Redactor([("KEY", KEY)])


def redact(text: str) -> str:
    return REDACTOR.text(text)


def leaks(piece: str, secret: str = KEY) -> bool:
    return any(secret[i : i + LEAK] in piece for i in range(len(secret) - LEAK + 1))


def test_hold_back_waits_for_a_tail_that_could_be_a_secret():
    hold = SecretHoldBack(REDACTOR)
    assert hold.safe_end("plain text") == len("plain text")
    assert hold.safe_end("the key sk-li") == len("the key ")
    assert hold.safe_end("the key sk-lix") == len("the key sk-lix")  # no longer a prefix
    assert hold.safe_end("s") == 0
    full = f"a {KEY} b"
    assert hold.safe_end(full) == len(full)


def test_hold_back_never_ends_inside_a_complete_secret():
    periodic = "abcdefgh-abcd"  # its own prefix "abcd" is also its tail
    hold = SecretHoldBack(Redactor([periodic]))
    text = "x " + periodic
    end = hold.safe_end(text)
    assert end == 2, "an end inside the secret would show part of it unredacted"
    assert hold.cut_is_outside(text, 2) and not hold.cut_is_outside(text, 5)


def test_values_shorter_than_the_minimum_are_not_secrets():
    short = "s" * (MIN_SECRET_LENGTH - 1)
    hold = SecretHoldBack(Redactor([short, ""]))
    assert not hold
    assert hold.safe_end("ss") == 2


async def _stream(parts: list[str], pause_after: set[int]) -> StreamTextBlock:
    block = StreamTextBlock(
        widgets.VBox([]), redactor=REDACTOR, holdback=SecretHoldBack(REDACTOR), min_interval_s=0.01
    )
    for n, part in enumerate(parts):
        block.append(part)
        if n in pause_after:
            await asyncio.sleep(0.03)  # every throttled update that can go out goes out
    block.flush()
    return block


@pytest.mark.parametrize("cut", range(len(KEY) + 1))
async def test_a_key_cut_anywhere_never_streams_in_pieces(cut):
    text_before, text_after = "Your key is ", " and that is all."
    parts = [text_before + KEY[:cut], KEY[cut:] + text_after]
    block = await _stream(parts, {0})
    assert "".join(block.sent) == f"Your key is [redacted:KEY]{text_after}"
    assert not any(leaks(chunk) for chunk in block.sent)


async def test_a_key_in_five_character_deltas_never_streams_in_pieces():
    text = f"one {KEY} two {KEY[:7]}_not_the_key three {KEY}"
    parts = [text[i : i + 5] for i in range(0, len(text), 5)]
    block = await _stream(parts, set(range(len(parts))))
    assert "".join(block.sent) == redact(text)
    assert not any(leaks(chunk) for chunk in block.sent)
    assert "sk-live_not_the_key" in "".join(block.sent)  # a start that did not become the key is text


async def test_the_stream_sends_each_character_once_whatever_the_shape():
    block = StreamTextBlock(widgets.VBox([]), min_interval_s=0.01)
    paragraph = " ".join(f"word{n}" for n in range(20_000))  # ~130 KB, not one line break
    for i in range(0, len(paragraph), 500):
        block.append(paragraph[i : i + 500])
        if i % 5000 == 0:
            await asyncio.sleep(0.02)
    block.flush()
    assert "".join(block.sent) == paragraph
    assert sum(len(chunk) for chunk in block.sent) == len(paragraph)
    assert [o["text"] for o in block.output.outputs] == block.sent  # (no kernel: the widget's own state)


async def test_replace_extends_or_resends_the_stream():
    block = StreamTextBlock(widgets.VBox([]))
    block.append("Hello wor")
    block.replace("Hello world.")
    block.flush()
    assert "".join(block.sent) == "Hello world." and block.text == "Hello world."
    block.replace("Something else")
    block.flush()
    assert "".join(block.sent) == "Something else"
    assert "".join(o["text"] for o in block.output.outputs) == "Something else"


async def test_live_view_streams_text_thinking_and_tool_output_without_pieces_of_the_key(monkeypatch):
    monkeypatch.setenv("PENGUIN_LIVE_TEXT", "stream")
    view = LiveView({"session_id": "s"}, lambda: None, redactor=REDACTOR)
    cut = 9
    view.handle(partial_thinking("delta", "thinking of " + KEY[:cut]))
    await asyncio.sleep(TEXT_INTERVAL_S + 0.05)
    view.handle(partial_thinking("delta", KEY[cut:] + " now"))
    view.handle(partial_text("delta", "The key: " + KEY[:cut]))
    await asyncio.sleep(TEXT_INTERVAL_S + 0.05)
    view.handle(partial_text("delta", KEY[cut:] + "."))
    view.handle(partial_tool_call_output("delta", "echo " + KEY[:cut], "T"))
    await asyncio.sleep(TEXT_INTERVAL_S + 0.05)
    view.handle(partial_tool_call_output("delta", KEY[cut:] + "\n", "T"))
    view.handle(tool_call_output("echo " + KEY + "\n", "T"))
    view.finish("completed")
    thinking, text = view.scope.blocks[0], view.scope.blocks[1]
    assert "".join(thinking.sent) == "thinking of [redacted:KEY] now"
    assert "".join(text.sent) == "The key: [redacted:KEY]."
    card = view.scope.cards["T"]
    values = [w.value for w in card.output.widgets]
    assert "".join(re.sub(r"<[^>]+>", "", v) for v in values) == "echo [redacted:KEY]\n"
    assert not any(leaks(piece) for piece in [*thinking.sent, *text.sent, *values])


async def test_tool_output_without_line_breaks_is_split_anyway():
    box = widgets.VBox([])
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=1000, min_interval_s=0.01)
    line = "x" * 20_000  # one endless line
    sent = [0]
    watched: set[int] = set()
    for i in range(0, len(line), 400):
        block.append(line[i : i + 400])
        for w in block.widgets:
            if id(w) not in watched:
                watched.add(id(w))
                sent[0] += len(w.value)  # its value at the open
                w.observe(lambda change: sent.__setitem__(0, sent[0] + len(change["new"])), "value")
        await asyncio.sleep(0.015)
    block.flush()
    shown = [re.sub(r"<[^>]+>", "", w.value) for w in block.widgets]
    assert "".join(shown) == line
    assert len(block.widgets) >= 5
    markup = len(pre_html(""))
    assert sent[0] <= 3 * len(line) + markup * 3 * len(block.widgets), "every update re-sent the whole line"


async def test_tool_output_split_never_falls_inside_a_secret():
    box = widgets.VBox([])
    hold = SecretHoldBack(REDACTOR)
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=30, redactor=REDACTOR, holdback=hold)
    text = ("a" * 27 + "\n") + KEY + KEY + "\n" + "tail\n"
    for ch in text:
        block.append(ch)
        await asyncio.sleep(0)
    block.flush()
    values = [re.sub(r"<[^>]+>", "", w.value) for w in block.widgets]
    assert "".join(values) == redact(text)
    assert not any(leaks(v) for v in values)


def test_prewarm_never_raises_and_remembers_why(monkeypatch):
    state = prewarm_module.PrewarmState()
    monkeypatch.setattr(prewarm_module, "PREWARM", state)
    monkeypatch.setattr(prewarm_module, "MODULES", ("penguin_jupyter.no_such_module",))
    prewarm_module.prewarm()
    assert state.done and state.error and "no_such_module" in state.error


def _default_model(client_type: str) -> None:
    """A default model on `client_type` in the test's data root (what the pre-warm reads)."""
    from penguin_jupyter.state import add_model

    add_model(
        None,
        "default_project",
        provider="local",
        model_id="m",
        base_url="http://127.0.0.1:9/v1",
        client_type=client_type,
        default=True,
    )


def test_prewarm_imports_the_default_models_client(monkeypatch, tmp_path):

    _default_model("openai-chat")
    assert prewarm_module.default_client_class().__name__ == "OpenaiChatClient"


def test_prewarm_builds_the_sdk_parser_of_the_default_models_client(monkeypatch, tmp_path):
    """A default model on a Responses client: the pre-warm thread builds the openai SDK's event
    parser (≈ 0.5 s the first Responses request of the kernel used to spend on the event loop)."""
    from penguin_jupyter.seams import llm_sdk

    _default_model("openai-responses")
    built = []
    monkeypatch.setattr(llm_sdk, "build_stream_event_parser", lambda cls: built.append(cls.__name__))
    state = prewarm_module.PrewarmState()
    monkeypatch.setattr(prewarm_module, "PREWARM", state)
    monkeypatch.setattr(prewarm_module, "MODULES", ())
    prewarm_module.prewarm()
    assert state.done and state.error is None
    assert built == ["OpenaiResponsesClient"]


async def test_a_finished_text_is_shown_rendered_once_the_task_goes_on(monkeypatch):
    monkeypatch.setenv("PENGUIN_LIVE_TEXT", "stream")
    view = LiveView({"session_id": "s"}, lambda: None, redactor=REDACTOR)
    view.handle(partial_text("delta", "Plan: **bold** and `code` with " + KEY[:5]))
    view.handle(partial_text("delta", KEY[5:] + "."))
    view.handle(assistant_text("Plan: **bold** and `code` with " + KEY + "."))
    block = view.scope.blocks[0]
    assert block.rendered is None and block.output in view.body.children, "plain until the Task goes on"
    view.handle(tool_call("read_file", {"file_path": "x"}, "C"))
    assert block.rendered is not None and block.output not in view.body.children
    assert view.body.children[0] is block.rendered
    assert "<strong>bold</strong>" in block.rendered.value and "<code>code</code>" in block.rendered.value
    assert "[redacted:KEY]" in block.rendered.value and not leaks(block.rendered.value)


async def test_a_finished_text_at_the_end_of_the_task_stays_plain(monkeypatch):
    monkeypatch.setenv("PENGUIN_LIVE_TEXT", "stream")
    view = LiveView({"session_id": "s"}, lambda: None, redactor=REDACTOR)
    view.handle(partial_text("delta", "All **done**."))
    view.handle(assistant_text("All **done**."))
    view.finish("completed")
    block = view.scope.blocks[0]
    assert block.rendered is None and "".join(block.sent) == "All **done**."


def test_load_ext_starts_the_prewarm_in_a_daemon_thread_and_does_not_wait(monkeypatch):
    from penguin_jupyter.notebook import extension

    state = prewarm_module.PrewarmState()
    monkeypatch.setattr(prewarm_module, "PREWARM", state)
    release = __import__("threading").Event()
    monkeypatch.setattr(prewarm_module, "prewarm", lambda delay_s=0.0: release.wait(10))

    class Shell:
        def __init__(self) -> None:
            self.input_transformers_cleanup: list = []

        def register_magic_function(self, *args, **kwargs):
            pass

    extension.load_ipython_extension(Shell())
    thread = state.thread
    assert thread is not None and thread.daemon and thread.is_alive(), "%load_ext returned before the prewarm"
    release.set()
    thread.join(5)
    assert extension.start_prewarm() is thread  # once per process


def _frontend_sync(output: widgets.Output, text: str) -> list[dict]:
    """What the kernel sends back when a frontend syncs `outputs` (as JupyterLab does after each
    captured message)."""
    sent: list[dict] = []
    output._send = lambda msg, buffers=None: sent.append(msg)  # type: ignore[method-assign]
    state = {"outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}
    output._handle_msg(
        {"content": {"data": {"method": "update", "state": state, "buffer_paths": []}}, "buffers": []}
    )
    return sent


def test_outputs_synced_back_by_the_frontend_are_not_echoed_on_iopub():
    assert any(m.get("method") == "echo_update" for m in _frontend_sync(widgets.Output(), "x" * 100))
    assert _frontend_sync(StreamOutput(), "x" * 100) == []


async def test_a_long_stream_moves_on_to_fresh_outputs_preferably_at_line_breaks(monkeypatch):
    from penguin_jupyter.notebook.live import live_stream

    factor = 25  # (a smaller factor than the default, so a short test sees several segments)
    monkeypatch.setattr(live_stream, "SEGMENT_SYNC_FACTOR", factor)
    monkeypatch.setattr(live_stream, "GROWTH_FREE_CHARS", 10**9)  # every paced update goes out
    box = widgets.VBox([])
    block = StreamTextBlock(box, min_interval_s=0.01)
    lines = [f"line {n:04d} " + "word " * 30 + "\n" for n in range(400)]
    for n, line in enumerate(lines):
        block.append(line)
        if n % 2:
            await asyncio.sleep(0.055)  # one update per two lines
    block.flush()
    texts = ["".join(o["text"] for o in segment.outputs) for segment in block.segments]
    assert "".join(texts) == "".join(lines) == "".join(block.sent)
    assert len(block.segments) >= 3 and list(box.children) == block.segments
    assert all(text.endswith("\n") for text in texts[:-1]), "a segment ends at a line break"
    for text in texts:  # what a frontend syncs back for a segment: its size after each update
        updates = len(text) // (2 * len(lines[0]))
        assert updates <= 2 * factor + 2


def test_text_streams_only_where_the_frontend_is_known_to_capture(monkeypatch):
    from penguin_jupyter.notebook.live.live_stream import streaming_available

    assert not streaming_available({})  # no kernel here (unit test)
    assert streaming_available({"PENGUIN_LIVE_TEXT": "stream"})
    assert not streaming_available({"PENGUIN_LIVE_TEXT": "widgets", "JPY_SESSION_NAME": "/x/a.ipynb"})


async def test_without_streaming_the_text_splits_into_widgets_even_in_one_long_paragraph(monkeypatch):
    monkeypatch.setenv("PENGUIN_LIVE_TEXT", "widgets")
    view = LiveView({"session_id": "s"}, lambda: None, redactor=REDACTOR)
    paragraph = " ".join(f"word{n}" for n in range(3000))  # ~20 KB, no line break
    for i in range(0, len(paragraph), 700):
        view.handle(partial_text("delta", paragraph[i : i + 700]))
        await asyncio.sleep(TEXT_INTERVAL_S + 0.01)
    view.handle(assistant_text(paragraph))
    view.finish("completed")
    block = view.scope.blocks[0]
    assert isinstance(block, SplitTextBlock) and len(block.widgets) >= 5
    shown = [re.sub(r"<[^>]+>", "", w.value).strip() for w in block.widgets]
    assert " ".join(shown) == paragraph, "cut at word boundaries, nothing lost"


def test_load_ext_imports_nothing_heavy():
    """`%load_ext` stays light (≤ 50 ms goal, benchmarks/bench_render.py "First cell"): it imports
    the notebook link but not the message models, the core, agenthub or ipywidgets — those are
    the pre-warm thread's work. (A fresh interpreter; the pre-warm is switched off.)"""
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "import penguin_jupyter.notebook.runtime.prewarm as p\n"
        "p.start_prewarm = lambda: None\n"
        "import penguin_jupyter.notebook.extension as e\n"
        "e.start_prewarm = p.start_prewarm\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'penguin_jupyter')\n"
        "import penguin_jupyter.notebook.link.notebook_link\n"
        "heavy = ('pydantic', 'agenthub', 'ipywidgets', 'penguin_jupyter.omni', 'penguin_jupyter.agent')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy))\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout

