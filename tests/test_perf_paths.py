"""The cheaper hot paths (issue 9): timestamps, split-widget grouping and sharing, paced teardown.

Widgets here are real ipywidgets without a frontend (comms are created but go nowhere); the
kernel-level traffic is covered by tests/notebook/test_kernel_penguin_real.py and benchmarks/bench_render.py.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

import ipywidgets as widgets

from penguin_jupyter.notebook.live import live_teardown
from penguin_jupyter.notebook.live.live_blocks import GROUP_SIZE, SplitTextBlock
from penguin_jupyter.notebook.live.live_render import pre_html
from penguin_jupyter.notebook.live.live_shared import is_shared, plain_html
from penguin_jupyter.notebook.live.live_teardown import CLOSE_BATCH, close_widgets_paced, widget_tree
from penguin_jupyter.notebook.live.live_throttle import MIN_INTERVAL_S, TEXT_INTERVAL_S
from penguin_jupyter.omni import builders, now_iso

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def test_now_iso_format_and_clock():
    before = datetime.now(UTC)
    stamp = now_iso()
    after = datetime.now(UTC)
    assert STAMP.fullmatch(stamp)
    parsed = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= parsed <= after


def test_now_iso_second_prefix_follows_the_clock(monkeypatch):
    clock = iter([1_767_225_599.9991, 1_767_225_599.5, 1_767_225_600.0425])
    monkeypatch.setattr(builders.time, "time", lambda: next(clock))
    assert now_iso() == "2025-12-31T23:59:59.999Z"
    assert now_iso() == "2025-12-31T23:59:59.500Z"
    assert now_iso() == "2026-01-01T00:00:00.042Z"


async def test_split_widgets_are_grouped_and_share_layout_and_style():
    box = widgets.VBox([])
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=40, min_interval_s=MIN_INTERVAL_S)
    lines = [f"line {i:03d}\n" for i in range(90)]
    for line in lines:
        block.append(line)
        await asyncio.sleep(0.052)  # let every possible split happen (splits are rate-limited)
    block.flush()
    assert len(block.widgets) > 2 * GROUP_SIZE
    assert box.children == tuple(block.groups)
    assert all(0 < len(group.children) <= GROUP_SIZE for group in block.groups)
    assert [w for group in block.groups for w in group.children] == block.widgets
    assert len({id(w.layout) for w in block.widgets}) == 1 and len({id(w.style) for w in block.widgets}) == 1
    assert is_shared(block.widgets[0].layout) and is_shared(block.widgets[0].style)
    shown = "".join(re.sub(r"<[^>]+>", "", w.value) for w in block.widgets)
    assert shown == "".join(lines) == block.text


async def test_split_after_an_image_starts_a_new_group():
    box = widgets.VBox([])
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=20)
    block.append("first line of output\n")
    image = plain_html("<img>")
    box.children = (*box.children, image)
    block.append("second line of output\nthird\n")
    assert box.children[1] is image and len(box.children) == 3
    assert box.children[2] is block.groups[-1]


async def test_replace_removes_the_groups():
    box = widgets.VBox([])
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=20)
    block.append("alpha line number one\nbeta\n")
    block.replace("something else entirely\n")
    assert box.children == tuple(block.groups)
    assert block.text == "something else entirely\n"


async def test_teardown_closes_in_paced_batches_and_keeps_shared_models():
    items = [plain_html(f"item {i}") for i in range(CLOSE_BATCH + 5)]
    own_layout = widgets.Layout(width="10px")
    root = widgets.VBox(items, layout=own_layout)
    tree = widget_tree([root])
    assert own_layout in tree and root in tree and all(w in tree for w in items)
    assert not any(is_shared(w) for w in tree)
    close_widgets_paced([root])
    assert all(w.comm is not None for w in tree), "nothing closes at once"
    await asyncio.sleep(live_teardown.START_DELAY_S - 0.3)
    assert all(w.comm is not None for w in tree), "the first batch waits out the end-of-Task burst"
    await asyncio.sleep(0.5)
    assert sum(w.comm is None for w in tree) == CLOSE_BATCH
    await asyncio.sleep(2 * live_teardown.CLOSE_INTERVAL_S + 0.3)
    assert all(w.comm is None for w in tree)
    assert items[0].layout.comm is not None, "the shared layout stays open for the next view"


def test_teardown_without_a_loop_closes_at_once():
    root = widgets.VBox([plain_html("x")])
    close_widgets_paced([root])
    assert root.comm is None and root.children[0].comm is None


async def test_a_fast_stream_sends_each_finished_widget_once_after_its_open():
    box = widgets.VBox([])
    block = SplitTextBlock(box, pre_html, boundary="\n", chunk_chars=100)
    changes: dict[int, int] = {}
    seen: set[int] = set()
    for _ in range(12):
        for n in range(10):
            block.append(f"{n:02d} twenty-seven characters\n")
        for w in block.widgets:  # count value changes of every widget from its open on
            if id(w) not in seen:
                seen.add(id(w))
                w.observe(
                    lambda change, key=id(w): changes.__setitem__(key, changes.get(key, 0) + 1), "value"
                )
        await asyncio.sleep(TEXT_INTERVAL_S + 0.01)
    block.flush()
    assert len(block.widgets) >= 10
    assert max(changes.values()) == 1, "a finished head is sent once, not as an update and again as the split"
    shown = "".join(re.sub(r"<[^>]+>", "", w.value) for w in block.widgets)
    assert shown == block.text
