"""Rendering cost in the notebook: iopub traffic of one `%%penguin` Task in a real kernel.

Shapes: the model streams a 100 KB answer in 5-character deltas, paced to ~10 s (a model writing
at a steady rate), in five shapes — one long paragraph, one fenced code block (lines, no blank
lines), paragraphs (a break every ~12 sentences) and a long Markdown table (the goal's
shapes), and beyond the goal a narrow table with two right-aligned columns. A real ipykernel runs
the cell (jupyter_client, IPC transport); every iopub message of the cell is counted with its
serialized size. Reported per shape: iopub bytes ÷ answer bytes, the most iopub messages in any
1 s window, and whether the live view's final text (the stream text its `Output` widgets
captured, replayed as a frontend does) and the static bundle hold the answer exactly.

Durations: three of the shapes paced over 10 s and over 20 s (the live bytes must not grow with
how long an answer streams).

Mixed: 200 KB of paragraphs, unpaced, then `exec_command` printing 5 MB, then "Done."
(`--naive` adds the baseline: one `ipywidgets.HTML` whose value is the whole text so far, set on
every delta; its traffic grows quadratically, so it runs for a fixed time budget and the
full-Task bytes are projected.)

First cell: a fresh kernel runs `%load_ext penguin_jupyter`, then a `%%penguin` cell; reported is
how long after the cell starts (its `execute_input`) the model server receives the request, and
how long `%load_ext` took, median of 3 fresh kernels — with the cell run at once after
`%load_ext` (Run All) and 2 s later (a user typing).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import data_root, print_table, server_process, subprocess_env, verdict  # noqa: E402
from jupyter_client import KernelManager  # noqa: E402

from tests.support.answer_shapes import GOAL_SHAPES, SHAPES, WORDS, shape_text  # noqa: E402  (the answers the tests stream too)
from tests.support.live_text import captured_text  # noqa: E402  (the capture replay the tests use)

TEXT_BYTES = 200_000
SHAPE_BYTES = 100_000
SHAPE_SECONDS = 10.0
DURATION_SECONDS = (10.0, 20.0)
DURATION_SHAPES = ("one long paragraph", "one code block", "paragraphs")
DELTA_CHARS = 5
OUTPUT_LINE = "out %07g " + "x" * 54  # 67 bytes with the newline
OUTPUT_LINES = 5_000_000 // 67
NAIVE_BUDGET_S = 15.0
TAIL_S = 3.0  # after the cell's idle: collect its late messages until none came for this long
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"


def task_text() -> str:
    """~200 KB of plain paragraphs ("Paragraph 0001: lorem ipsum ..."), no Markdown syntax."""
    paragraphs, size, n = [], 0, 0
    while size < TEXT_BYTES:
        n += 1
        words = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(60))
        paragraphs.append(f"Paragraph {n:04d}: {words}.")
        size += len(paragraphs[-1]) + 2
    return "\n\n".join(paragraphs)[:TEXT_BYTES].rstrip(" .\n") + "."




def script(text: str) -> list[dict]:
    deltas = [text[i : i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS)]
    command = f"seq -f '{OUTPUT_LINE}' 1 {OUTPUT_LINES}"
    return [
        {
            "text": deltas,
            "tool_calls": [{"name": "exec_command", "arguments": {"cmd": command}, "id": "call_out"}],
        },
        {"text": "Done."},
    ]


NAIVE_CELL = textwrap.dedent(
    """
    import time, ipywidgets
    from IPython.display import display
    from penguin_jupyter import create_agent
    from penguin_jupyter.interfaces import AbortSignal
    from penguin_jupyter.omni import user_text

    async def _allow(_call):
        return "allow"

    _agent = await create_agent()
    _session = await _agent.create_session(workspace_dir=".")
    _widget = ipywidgets.HTML()
    display(_widget)
    _text, _deltas, _signal, _t0 = "", 0, AbortSignal(), time.monotonic()
    async for _m in _session.run([user_text("go")], approve=_allow, signal=_signal):
        _p = _m.payload
        if _p.type in ("partial_text", "partial_tool_call_output") and _p.event_type == "delta":
            _text += _p.text if _p.type == "partial_text" else _p.output
            _widget.value = _text
            _deltas += 1
            if time.monotonic() - _t0 > BUDGET and not _signal.aborted:
                _signal.abort("benchmark time budget")
    print(f"NAIVE {_deltas} {len(_text.encode())}")
    _session.dispose()
    """
)


@dataclass
class Traffic:
    """iopub messages of one cell: count, bytes, send times, and the widget values seen."""

    count: int = 0
    bytes: int = 0
    stamps: list[float] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)  # comm_id -> last HTML value
    order: list[str] = field(default_factory=list)  # comm ids in open order
    bundle: dict[str, Any] | None = None
    bundle_at: float | None = None  # send time of the message carrying the static transcript
    stdout: str = ""
    status: str = ""
    wall: float = 0.0
    after_idle: int = 0  # messages of the cell sent after its idle status (the paced teardown)
    after_idle_s: float = 0.0  # from idle to the last of them
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind -> [count, bytes]
    messages: list[dict[str, Any]] = field(default_factory=list)

    def add(self, msg: dict[str, Any]) -> None:
        self.messages.append(msg)
        size = sum(len(json.dumps(msg[k], default=str)) for k in ("header", "parent_header", "metadata"))
        size += len(json.dumps(msg["content"], default=str)) + sum(len(b) for b in msg.get("buffers", []))
        self.count += 1
        self.bytes += size
        tally = self.kinds.setdefault(_kind(msg), [0, 0])
        tally[0] += 1
        tally[1] += size
        stamp = msg["header"]["date"]
        self.stamps.append(stamp.timestamp() if hasattr(stamp, "timestamp") else time.time())
        kind, content = msg["msg_type"], msg["content"]
        if kind in ("comm_open", "comm_msg"):
            data = content.get("data", {})
            value = data.get("state", {}).get("value")
            if kind == "comm_open":
                self.order.append(content["comm_id"])
            if isinstance(value, str):
                self.values[content["comm_id"]] = value
        elif kind in ("display_data", "update_display_data") and TRANSCRIPT_MIME in content.get("data", {}):
            self.bundle = content["data"][TRANSCRIPT_MIME]
            self.bundle_at = self.stamps[-1]
        elif kind == "stream" and content.get("name") == "stdout":
            self.stdout += content["text"]

    def max_per_second(self, before: float | None = None) -> int:
        """Most messages sent within any 1 s window (only those sent before `before`, if given)."""
        stamps = sorted(t for t in self.stamps if before is None or t < before)
        best = lo = 0
        for hi, t in enumerate(stamps):
            while stamps[lo] < t - 1.0:
                lo += 1
            best = max(best, hi - lo + 1)
        return best


def _kind(msg: dict[str, Any]) -> str:
    """msg_type, refined for widget traffic: comm_msg by which state keys it carries."""
    kind = msg["msg_type"]
    if kind == "comm_msg":
        state = msg["content"].get("data", {}).get("state", {})
        kind += (
            "(" + ",".join(sorted(state)) + ")"
            if state
            else "(" + str(msg["content"].get("data", {}).get("method")) + ")"
        )
    elif kind == "comm_open":
        kind += "(" + str(msg["content"].get("data", {}).get("state", {}).get("_model_name")) + ")"
    value = msg["content"].get("data", {}).get("state", {}).get("value") if kind.startswith("comm") else None
    if isinstance(value, str):  # which stream the value belongs to: output/thinking <pre> or text
        kind += " pre" if value.startswith("<pre") else " text"
    return kind


class Kernel:
    """A python3 ipykernel on IPC sockets in `cwd`, with the repo on PYTHONPATH."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self._sockets = tempfile.mkdtemp(prefix="pjb-")
        self.km = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(self._sockets, "k"))
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=90)

    def run(self, code: str, timeout: float = 110.0, tail_s: float = 0.0) -> Traffic:
        """Every iopub message of the cell until its idle status, then (with `tail_s`) the ones it
        still sends after idle (the live view's widgets are closed paced, in the background),
        until none came for `tail_s` seconds."""
        traffic, start = Traffic(), time.monotonic()
        msg_id = self.kc.execute(code)
        while time.monotonic() - start < timeout:
            try:
                msg = self.kc.get_iopub_msg(timeout=1.0)
            except Exception:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            traffic.add(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        else:
            raise TimeoutError(f"cell did not finish within {timeout} s")
        reply = self.kc.get_shell_msg(timeout=30)
        traffic.status = reply["content"]["status"]
        traffic.wall = time.monotonic() - start
        idle_at = last = time.monotonic()
        while tail_s and time.monotonic() - last < tail_s and time.monotonic() - idle_at < 120:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.25)
            except Exception:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            traffic.add(msg)
            traffic.after_idle += 1
            last = time.monotonic()
            traffic.after_idle_s = last - idle_at
        return traffic

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def kernel_for(root: Path) -> Kernel:
    """A kernel as jupyter_server starts one for `workspace/bench.ipynb` (it sets
    JPY_SESSION_NAME; the live view streams text only for frontends known to capture it)."""
    env = subprocess_env(PENGUIN_HOME=str(root), HOME=str(root))
    env["JPY_SESSION_NAME"] = str(root / "workspace" / "bench.ipynb")
    return Kernel(root / "workspace", env)


def rendered_text(traffic: Traffic) -> str:
    """The assistant text as the live view finally shows it (its Outputs' captured streams)."""
    captured, _ = captured_text(traffic.messages)
    return "".join(captured.values())


def rendered_output(traffic: Traffic) -> str:
    """The tool output as the live output widgets finally show it (line batches of <pre>)."""
    parts = []
    for comm_id in traffic.order:
        value = traffic.values.get(comm_id, "")
        # every line batch, also one holding only the truncation note (not the collapsed summary)
        if value.startswith("<pre") and "more lines …" not in value:
            parts.append(html.unescape(re.sub(r"^<pre[^>]*>|</pre>$", "", value)))
    return "".join(parts)


def bundle_parts(bundle: dict[str, Any] | None) -> tuple[str, str]:
    """(assistant texts joined, tool output) of the Task's complete messages in the bundle."""
    if bundle is None:
        return "", ""
    texts, output = [], ""
    for record in bundle.get("messages", []):
        payload = record.get("payload", {}) if isinstance(record, dict) else {}
        if payload.get("type") == "text" and payload.get("role") == "assistant":
            texts.append(payload["text"])
        elif payload.get("type") == "tool_call_output":
            output = payload["output"]
    return "".join(texts), output


def penguin_row(text: str) -> tuple[list, dict]:
    with server_process(script(text)) as url, data_root(url) as root:
        kernel = kernel_for(root)
        try:
            assert kernel.run("%load_ext penguin_jupyter").status == "ok"
            traffic = kernel.run(
                "%%penguin --approve allow-all\nWrite it all, then print the big file.", tail_s=TAIL_S
            )
        finally:
            kernel.close()
    bundle_text, bundle_output = bundle_parts(traffic.bundle)
    transcript_bytes = len((text + "Done.").encode()) + len(bundle_output.encode())
    live_ok = rendered_text(traffic) == text + "Done." and rendered_output(traffic) == bundle_output
    bundle_ok = bundle_text == text + "Done." and "out 00" in bundle_output
    facts = {
        "status": traffic.status,
        "transcript": transcript_bytes,
        "output_chars": len(bundle_output),
        "live_ok": live_ok,
        "bundle_ok": bundle_ok,
        "traffic": traffic,
        "bundle_text": bundle_text,
        "after_idle": traffic.after_idle,
        "after_idle_s": traffic.after_idle_s,
    }
    row = [
        "%%penguin live widgets", traffic.count, traffic.wall, traffic.max_per_second(),
        traffic.max_per_second(before=traffic.bundle_at),
        traffic.bytes / 1e6, transcript_bytes / 1e6, traffic.bytes / transcript_bytes,
        "yes" if live_ok and bundle_ok else f"NO (live {live_ok}, bundle {bundle_ok})",
    ]  # fmt: skip
    return row, facts


def shape_row(shape: str, seconds: float = SHAPE_SECONDS) -> tuple[list, Traffic]:
    """One 100 KB answer of `shape` (no tools) paced over `seconds` through a `%%penguin` cell."""
    text = shape_text(shape, SHAPE_BYTES)
    deltas = [text[i : i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS)]
    with (
        server_process([{"text": deltas}], events_per_s=len(deltas) / seconds) as url,
        data_root(url) as root,
    ):
        kernel = kernel_for(root)
        try:
            assert kernel.run("%load_ext penguin_jupyter").status == "ok"
            traffic = kernel.run("%%penguin --approve allow-all\nWrite it.", tail_s=TAIL_S)
        finally:
            kernel.close()
    bundle_text, _ = bundle_parts(traffic.bundle)
    captured, loose = captured_text(traffic.messages)
    live_ok = "".join(captured.values()) == text and not loose
    answer = len(text.encode())
    row = [
        shape, len(text), traffic.count, traffic.wall, traffic.max_per_second(), traffic.bytes / 1e6,
        traffic.bytes / answer, "yes" if live_ok and bundle_text == text else f"NO (live {live_ok}, bundle {bundle_text == text})",
    ]  # fmt: skip
    return row, traffic


FIRST_CELL = "%%penguin --approve allow-all\nSay hi."


def first_cell_once(wait_s: float) -> tuple[float, float]:
    """(seconds from the first cell's start to the model request, seconds `%load_ext` took)
    in a fresh kernel, the cell run `wait_s` after `%load_ext` returned."""
    import threading

    from penguin_jupyter.testing import ScriptedModelServer

    with ScriptedModelServer([{"text": "hi"}]) as server, data_root(server.url) as root:
        kernel = kernel_for(root)
        try:
            arrived: list[float] = []
            waiter = threading.Thread(
                target=lambda: server.wait_for_requests(1, timeout=60) and arrived.append(time.time())
            )
            load = kernel.run("%load_ext penguin_jupyter")
            time.sleep(wait_s)
            waiter.start()
            cell = kernel.run(FIRST_CELL)
            waiter.join(60)
        finally:
            kernel.close()
    assert load.status == "ok" and cell.status == "ok" and arrived, "the first cell did not reach the model"
    return arrived[0] - _input_time(cell), _reply_time(load) - _input_time(load)


def _input_time(traffic: Traffic) -> float:
    for msg, stamp in zip(traffic.messages, traffic.stamps, strict=True):
        if msg["msg_type"] == "execute_input":
            return stamp
    raise RuntimeError("no execute_input message")


def _reply_time(traffic: Traffic) -> float:
    """When the kernel went idle after the cell (the end of its execution)."""
    for msg, stamp in zip(traffic.messages, traffic.stamps, strict=True):
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return stamp
    raise RuntimeError("no idle status")


def first_cell_rows(runs: int = 3) -> list[list]:
    rows = []
    for label, wait_s in (
        ("cell run at once after %load_ext (Run All)", 0.0),
        ("cell run 2 s after %load_ext", 2.0),
    ):
        samples = [first_cell_once(wait_s) for _ in range(runs)]
        request = sorted(s[0] for s in samples)
        load = sorted(s[1] for s in samples)
        rows.append([label, runs, request[runs // 2], request[0], request[-1], load[runs // 2]])
    return rows


def naive_row(text: str, output_chars: int) -> tuple[list, dict]:
    with server_process(script(text)) as url, data_root(url) as root:
        kernel = kernel_for(root)
        try:
            traffic = kernel.run(NAIVE_CELL.replace("BUDGET", str(NAIVE_BUDGET_S)))
        finally:
            kernel.close()
    found = re.search(r"NAIVE (\d+) (\d+)", traffic.stdout)
    deltas, shown = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
    full = len(text.encode()) + output_chars
    # one update per delta carrying the whole text so far: sum over deltas of the prefix length
    projected = sum(range(DELTA_CHARS, len(text) + 1, DELTA_CHARS)) + len(text) * (output_chars // 4096 + 1)
    final_ok = traffic.values and max(traffic.values.values(), key=len) == text[:shown]
    row = [
        f"naive: one HTML, whole value per delta ({NAIVE_BUDGET_S:.0f} s budget)", traffic.count, traffic.wall,
        traffic.max_per_second(), traffic.max_per_second(), traffic.bytes / 1e6, shown / 1e6, traffic.bytes / max(1, shown),
        "yes (prefix)" if final_ok else "no",
    ]  # fmt: skip
    return row, {"deltas": deltas, "shown": shown, "projected_ratio": projected / full}


def durations() -> None:
    """The same answers paced over 10 s and 20 s: the live bytes must not grow with the duration."""
    rows = []
    for shape in DURATION_SHAPES:
        ratios = []
        for seconds in DURATION_SECONDS:
            row, _traffic = shape_row(shape, seconds)
            ratios.append(row[6])
            rows.append([shape, f"{seconds:.0f}", row[2], row[3], row[4], row[6], row[7]])
        rows[-1].append(f"{ratios[-1] / ratios[0]:.3f}")
        rows[-2].append("")
    worst = max(r[5] for r in rows)
    print_table(
        f"Live text by duration: {SHAPE_BYTES // 1000} KB answers paced over {' s and '.join(f'{s:.0f}' for s in DURATION_SECONDS)} s",
        ["shape", "paced s", "iopub msgs", "wall s", "max msgs/1s", "bytes ÷ answer", "final == answer", "20 s ÷ 10 s"],
        rows,
        [f"goal bytes ÷ answer <= 4 at every duration: {worst:.2f} -> {verdict(worst <= 4)}"],
    )


def main(detail: bool, naive: bool, only: str | None) -> None:
    if only in (None, "shapes"):
        rows, worst = [], {}
        for shape in SHAPES:
            row, traffic = shape_row(shape)
            rows.append(row)
            worst[shape] = traffic
            if detail:
                kinds = sorted(traffic.kinds.items(), key=lambda kv: -kv[1][1])
                print_table(
                    f"iopub traffic by kind: {shape}",
                    ["kind", "msgs", "bytes"],
                    [[k, c, b] for k, (c, b) in kinds],
                )
        goal_rows = [r for r in rows if r[0] in GOAL_SHAPES]
        ratio_ok = all(r[6] <= 4 for r in goal_rows)
        rate_ok = all(r[4] <= 60 for r in rows)
        beyond = [f"{r[0]} {r[6]:.2f}" for r in rows if r[0] not in GOAL_SHAPES]
        print_table(
            f"Live text by shape: {SHAPE_BYTES // 1000} KB answers in {DELTA_CHARS}-char deltas over ~{SHAPE_SECONDS:.0f} s",
            ["shape", "chars", "iopub msgs", "wall s", "max msgs/1s", "iopub MB", "bytes ÷ answer", "final == answer"],
            rows,
            [
                f"goal bytes ÷ answer <= 4 for the four goal shapes: {max(r[6] for r in goal_rows):.2f} -> "
                f"{verdict(ratio_ok)} (beyond the goal: {', '.join(beyond)}); "
                f"goal max msgs/s <= 60: {max(r[4] for r in rows)} -> {verdict(rate_ok)}",
                "final == answer: the stream text the live Outputs captured (replayed as a frontend does) and the "
                "static bundle's text both equal the answer",
            ],
        )  # fmt: skip
    if only in (None, "durations"):
        durations()
    if only in (None, "mixed"):
        mixed(detail, naive)
    if only in (None, "first-cell"):
        rows = first_cell_rows()
        print_table(
            "First cell: fresh kernel, %load_ext penguin_jupyter, then a %%penguin cell (median of 3)",
            ["case", "runs", "request after s (median)", "min", "max", "%load_ext s (median)"],
            rows,
            [
                f"goal request leaves <= 0.2 s after the cell starts (2 s case): {rows[1][2]:.3f} -> "
                f"{verdict(rows[1][2] <= 0.2)}; goal %load_ext <= 50 ms: {max(r[5] for r in rows) * 1000:.0f} ms -> "
                f"{verdict(max(r[5] for r in rows) <= 0.05)}",
            ],
        )


def mixed(detail: bool, naive: bool) -> None:
    text = task_text()
    row, facts = penguin_row(text)
    if detail:
        kinds = sorted(facts["traffic"].kinds.items(), key=lambda kv: -kv[1][1])
        print_table(
            "iopub traffic of the %%penguin cell by kind",
            ["kind", "msgs", "bytes"],
            [[k, c, b] for k, (c, b) in kinds],
        )
    rows = [row]
    notes = []
    if naive:
        base, naive_facts = naive_row(text, facts["output_chars"])
        rows.append(base)
        notes.append(
            f"naive run stopped after its budget at {naive_facts['deltas']:,} deltas ({naive_facts['shown']:,} chars); "
            f"the full Task would cost about {naive_facts['projected_ratio']:,.0f}x the transcript in iopub bytes"
        )
    rate_ok = row[3] <= 60
    kinds = facts["traffic"].kinds
    bundle_bytes = kinds.get("update_display_data", [0, 0])[1] + kinds.get("display_data", [0, 0])[1]
    print_table(
        f"Mixed Task: {len(text):,} chars in {DELTA_CHARS}-char deltas + exec_command printing "
        f"{OUTPUT_LINES * 67 / 1e6:.1f} MB",
        ["renderer", "iopub msgs", "wall s", "max msgs/1s", "streaming max/1s", "iopub MB", "transcript MB", "bytes ratio", "final == transcript"],
        rows,
        [
            f"goal max msgs/s <= 60: {row[3]} -> {verdict(rate_ok)} (while streaming: {row[4]}); bytes ratio "
            f"{row[7]:.2f}; cell status {facts['status']}",
            f"counted: every iopub message of the cell, including {facts['after_idle']} sent after its idle status "
            f"(the paced close of the live widgets, over {facts['after_idle_s']:.1f} s)",
            f"of the iopub bytes, the final static bundle (JSON + HTML + plain) is {bundle_bytes / 1e6:.2f} MB = "
            f"{bundle_bytes / facts['transcript']:.2f}x the transcript",
            f"transcript = final assistant text + the tool output as recorded ({facts['output_chars']:,} chars: "
            "exec_command keeps max_output_length of the 5 MB, the rest goes to the archive file)",
            *notes,
        ],
    )  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detail", action="store_true", help="also print the iopub traffic by kind")
    parser.add_argument("--naive", action="store_true", help="also run the naive one-widget baseline")
    parser.add_argument("--only", choices=["shapes", "durations", "mixed", "first-cell"], help="run one part")
    args = parser.parse_args()
    main(args.detail, args.naive, args.only)
