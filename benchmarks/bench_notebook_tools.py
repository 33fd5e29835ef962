"""Notebook tools in a real JupyterLab: how fast an inserted cell appears, and `run_cell` ÷ `run_python`.

A real `jupyter lab` and Debian chromium (playwright), set up like the browser tests
(tests/support/browser.py's `JupyterLab` and page helpers), run one `%%penguin --approve allow-all`
cell whose scripted model (a ScriptedModelServer in this process) makes one tool call per turn:
for each of REPS repetitions and each of two codes (a trivial statement, a small pandas groupby),
`insert_cell` with the code, then `run_cell` on that cell and `run_python` with the same code
(their order alternates between repetitions). A warm-up round (excluded) comes first.

(a) insert latency: the moment the server finished sending the response that holds the
    `insert_cell` call (recorded by the server's handler) → the moment the new cell's node was
    added to the page (a MutationObserver; both on this machine's wall clock). The Trace's
    `approval_decision` of the call splits it into "model response → tool starts" and "tool →
    cell in the DOM", and a WebSocket hook in the page (the moment the frame carrying the
    bridge's `insert` request was dispatched) splits the latter into delivery and JupyterLab.
(b) `run_cell` ÷ `run_python`: each call's `approval_decision` → `tool_call_output` in the
    session's Trace (millisecond timestamps), medians over the repetitions; for run_cell also
    the page's `[*]` → `[n]` of the cell (the execute_request on a kernel subshell, seen from
    the page). Three codes: a trivial statement, a groupby of 200k rows, one of 5M rows.

Prints tables; asserts nothing. Needs /usr/bin/chromium and the built labextension.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import print_table, verdict  # noqa: E402

from penguin_jupyter.testing import ScriptedModelServer  # noqa: E402
from penguin_jupyter.testing import server as scripted_server  # noqa: E402
from tests.support.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    CURRENT_NOTEBOOK,
    JupyterLab,
    open_notebook,
    run_all,
)

REPS = 5
ROWS = 200_000
BIG_ROWS = 5_000_000
NOTEBOOK = "bench_notebook_tools.ipynb"
DONE = "bench done"
SETUP = f"""\
import numpy as np
import pandas as pd
frame = pd.DataFrame({{"k": np.arange({ROWS}) % 50, "v": np.random.default_rng(0).random({ROWS})}})
big = pd.DataFrame({{"k": np.arange({BIG_ROWS}) % 5000, "v": np.random.default_rng(1).random({BIG_ROWS})}})"""
# A probe in the kernel: when the insert_cell tool handed each bridge request to the comm.
PROBE = """\
import re, time
from penguin_jupyter.notebook.link import frontend_bridge
bench_sends = {}
_request = frontend_bridge.NotebookBridge.request
async def _timed_request(self, op, *args, **kwargs):
    found = re.search(r"# bench \\[([^\\]]+)\\]", str(kwargs.get("source", ""))) if op == "insert" else None
    if found:
        bench_sends.setdefault(found.group(1), time.time())
    return await _request(self, op, *args, **kwargs)
frontend_bridge.NotebookBridge.request = _timed_request"""
REPORT_PROBE = 'import json\nprint("SENDS" + json.dumps(bench_sends))'
CODES = {
    "trivial statement": "x = {n}",
    "pandas groupby (200k rows)": 'g = frame.groupby("k")["v"].agg(["mean", "sum"])\nprint(g.shape, {n})',
    "pandas groupby (5M rows)": 'g = big.groupby("k")["v"].agg(["mean", "median", "std"])\nprint(g.shape, {n})',
}
CELL_ID = "{{match:Inserted a code cell with id (\\S+) at}}"
OBSERVER = """() => {
    window.__inserted = [];
    const seen = new WeakSet();
    const now = () => performance.timeOrigin + performance.now();
    new MutationObserver((mutations) => {
        const t = now();
        for (const m of mutations) for (const node of m.addedNodes) {
            if (node.nodeType === 1 && node.classList.contains('jp-Cell') && !seen.has(node)) {
                seen.add(node);
                const item = {t, node, busy: [], done: []};
                window.__inserted.push(item);
                const prompt = node.querySelector('.jp-InputArea-prompt');
                if (prompt) new MutationObserver(() => {
                    const text = prompt.textContent;
                    if (text.includes('[*]')) item.busy.push(now());
                    else if (/\\[\\d+\\]/.test(text)) item.done.push(now());
                }).observe(prompt, {childList: true, characterData: true, subtree: true});
            }
        }
    }).observe(document.body, {childList: true, subtree: true});
}"""
# Installed before the page loads: when a kernel websocket frame carrying a bridge `insert`
# request for one of the benchmark's cells reached the page.
WS_HOOK = """(() => {
    window.__insertArrived = {};
    const Original = window.WebSocket;
    const decoder = new TextDecoder();
    window.WebSocket = class extends Original {
        constructor(...args) {
            super(...args);
            this.addEventListener('message', (event) => {
                const t = performance.timeOrigin + performance.now();
                const text = typeof event.data === 'string' ? event.data
                    : event.data instanceof ArrayBuffer ? decoder.decode(event.data) : '';
                if (!text.includes('# bench [') || !/"op":\\s*"insert"/.test(text)) return;
                const tag = text.match(/# bench \\[([^\\]]+)\\]/)[1];
                if (!(tag in window.__insertArrived)) window.__insertArrived[tag] = t;
            });
        }
    };
})();"""
INSERTED = "() => window.__inserted.map(({t, node, busy, done}) => ({t, busy, done, text: node.textContent}))"


# `--nodelay`: jupyter_server's kernel websocket with TCP_NODELAY (it leaves Nagle on).
NODELAY_CONFIG = """\
from jupyter_server.services.kernels.websocket import KernelWebsocketHandler

_open = KernelWebsocketHandler.open


async def _open_nodelay(self, *args, **kwargs):
    self.set_nodelay(True)
    return await _open(self, *args, **kwargs)


KernelWebsocketHandler.open = _open_nodelay
"""


# --- the server records when it finished sending each response ---------------------------
SENT: list[float] = []


class _TimedHandler(scripted_server._Handler):
    def _stream(self, entry: Any, request: dict[str, Any]) -> None:
        super()._stream(entry, request)
        SENT.append(time.time())


scripted_server._Handler = _TimedHandler  # type: ignore[misc]  # this process's servers only


# --- the script ----------------------------------------------------------------------------
def _call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "id": call_id, "arguments": arguments}]}


def build_script(reps: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The entries, and per insert: its request index, tag, code label and repetition."""
    entries: list[dict[str, Any]] = []
    plan: list[dict[str, Any]] = []
    for rep in range(reps + 1):  # repetition 0 warms up
        for label, template in CODES.items():
            tag = f"r{rep}-{len(plan)}"
            code = f"# bench [{tag}]\n" + template.format(n=rep)
            plan.append({"request": len(entries), "tag": tag, "label": label, "rep": rep})
            entries.append(_call("insert_cell", f"call_ins_{tag}", cell_type="code", source=code, description="bench"))
            runs = [
                _call("run_cell", f"call_rc_{tag}", cell_id=CELL_ID, description="bench"),
                _call("run_python", f"call_rp_{tag}", code=code, description="bench"),
            ]
            entries.extend(runs if rep % 2 else runs[::-1])
    entries.append({"text": DONE})
    return entries, plan


# --- reading the Trace ---------------------------------------------------------------------
def _epoch(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=None).timestamp() - time.timezone


def trace_times(root: Path) -> dict[tuple[str, str], float]:
    """(tool_call_id, message type) → epoch seconds, from every Trace under `root`."""
    times: dict[tuple[str, str], float] = {}
    for path in root.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            payload = record.get("payload") or {}
            call_id = payload.get("tool_call_id")
            if call_id and payload.get("type") in ("tool_call", "approval_decision", "tool_call_output"):
                times.setdefault((call_id, payload["type"]), _epoch(record["timestamp"]))
    return times


def _median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _span(times: dict[tuple[str, str], float], call_id: str) -> float:
    return times[(call_id, "tool_call_output")] - times[(call_id, "approval_decision")]


# --- the run -------------------------------------------------------------------------------
def run(reps: int, detail: bool, nodelay: bool) -> None:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is absent: install Debian chromium (scripts/setup.sh --test)")
    entries, plan = build_script(reps)
    with tempfile.TemporaryDirectory(prefix="penguin-bench-lab-") as tmp:
        lab = JupyterLab(Path(tmp))
        if nodelay:
            config = lab.home / ".jupyter"
            config.mkdir(parents=True, exist_ok=True)
            (config / "jupyter_server_config.py").write_text(NODELAY_CONFIG)
        lab.start()
        server = ScriptedModelServer(entries).start()
        try:
            lab.use_model_server(server)
            nb_path = lab.write_notebook(
                NOTEBOOK, SETUP, PROBE, "%%penguin --approve allow-all\nbenchmark the notebook tools", REPORT_PROBE
            )
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    context = browser.new_context(viewport={"width": 1280, "height": 1600})
                    context.add_init_script(WS_HOOK)
                    page = context.new_page()
                    page.set_default_timeout(120_000)
                    open_notebook(page, lab, nb_path.name)
                    page.evaluate(OBSERVER)
                    started = time.perf_counter()
                    run_all(page)
                    page.locator(f"{CURRENT_NOTEBOOK} .penguin-transcript", has_text=DONE).wait_for(timeout=600_000)
                    wall = time.perf_counter() - started
                    probe = page.locator(f"{CURRENT_NOTEBOOK} .jp-OutputArea", has_text="SENDS")
                    probe.wait_for(timeout=60_000)
                    sends = json.loads(probe.inner_text().split("SENDS", 1)[1].strip())
                    inserted = page.evaluate(INSERTED)
                    arrived = {tag: t / 1000 for tag, t in page.evaluate("() => window.__insertArrived").items()}
                finally:
                    browser.close()
            report(plan, inserted, trace_times(lab.penguin_home), list(SENT), sends, arrived, wall, len(server.requests), detail)
        finally:
            server.stop()
            lab.stop()


def report(
    plan: list[dict[str, Any]], inserted: list[dict[str, Any]], times: dict[tuple[str, str], float],
    sent: list[float], sends: dict[str, float], arrived: dict[str, float], wall: float, requests: int, detail: bool = False,
) -> None:
    dom_at: dict[str, float] = {}
    executed: dict[str, float] = {}  # tag → the page's [*] → [n] of the cell run_cell ran
    for item in inserted:
        for step in plan:
            if f"# bench [{step['tag']}]" in item["text"] and step["tag"] not in dom_at:
                dom_at[step["tag"]] = item["t"] / 1000
                if item["busy"]:
                    ends = [t for t in item["done"] if t > item["busy"][0]]
                    if ends:
                        executed[step["tag"]] = (ends[0] - item["busy"][0]) / 1000
    measured = [step for step in plan if step["rep"] > 0]
    missing = [step["tag"] for step in measured if step["tag"] not in dom_at]
    if missing:
        texts = [item["text"][:60] for item in inserted]
        raise SystemExit(f"inserted cells never seen in the page: {missing}; seen: {texts}")

    total, to_tool, tool_to_dom, round_trip, to_page, page_to_dom = [], [], [], [], [], []
    to_send, send_to_page = [], []
    for step in measured:
        call_id = f"call_ins_{step['tag']}"
        decided = times[(call_id, "approval_decision")]
        total.append(dom_at[step["tag"]] - sent[step["request"]])
        to_tool.append(decided - sent[step["request"]])
        tool_to_dom.append(dom_at[step["tag"]] - decided)
        round_trip.append(_span(times, call_id))
        if step["tag"] in arrived and step["tag"] in sends:
            to_send.append(sends[step["tag"]] - decided)
            send_to_page.append(arrived[step["tag"]] - sends[step["tag"]])
        if step["tag"] in arrived:
            to_page.append(arrived[step["tag"]] - decided)
            page_to_dom.append(dom_at[step["tag"]] - arrived[step["tag"]])
    print_table(
        f"(a) insert_cell: the model's response → the new cell in the page (median of {len(measured)} inserts)",
        ["span", "median ms", "min ms", "max ms"],
        [
            [name, _median_ms(values), min(values) * 1000, max(values) * 1000]
            for name, values in (
                ("server sent the call → cell node in the DOM", total),
                ("  server sent → tool starts (approval_decision)", to_tool),
                ("  tool starts → cell node in the DOM", tool_to_dom),
                ("    tool starts → bridge request reaches the page (websocket)", to_page),
                ("      tool starts → bridge request sent (the kernel)", to_send),
                ("      request sent → dispatched in the page (iopub, jupyter_server, websocket)", send_to_page),
                ("    request in the page → cell node in the DOM (JupyterLab)", page_to_dom),
                ("insert_cell tool: start → output (the bridge round trip)", round_trip),
            )
            if values
        ],
        [
            "clocks: the server's time.time() and the page's performance.timeOrigin + now(), one machine;",
            "Trace timestamps have 1 ms resolution",
        ],
    )

    rows, ratios, extra = [], {}, []
    for label in CODES:
        steps = [s for s in measured if s["label"] == label]
        cell = [_span(times, f"call_rc_{s['tag']}") for s in steps]
        python = [_span(times, f"call_rp_{s['tag']}") for s in steps]
        in_page = [executed[s["tag"]] for s in steps if s["tag"] in executed]
        ratios[label] = statistics.median(cell) / statistics.median(python)
        extra.append(statistics.median(cell) - statistics.median(python))
        page_ms = _median_ms(in_page) if in_page else "-"
        rows.append([label, len(steps), _median_ms(cell), page_ms, _median_ms(python), ratios[label]])
        if detail:
            print(f"  {label}: run_cell ms {[round(v * 1000) for v in cell]}, run_python ms {[round(v * 1000) for v in python]}")
    goals = ", ".join(f"{label} {ratio:.2f} -> {verdict(ratio <= 1.5)}" for label, ratio in ratios.items())
    print_table(
        "(b) run_cell vs run_python, same code (Trace: approval_decision → tool_call_output, medians)",
        ["code", "runs", "run_cell ms", "of which [*]→[n] in the page", "run_python ms", "ratio"],
        rows,
        [
            f"goal run_cell / run_python <= 1.5: {goals}",
            f"run_cell - run_python, the fixed cost of running a notebook cell: {min(extra) * 1000:.0f}-"
            f"{max(extra) * 1000:.0f} ms (bridge request to the page, execute_request on a subshell and its",
            "reply + idle back through the page ([*]->[n] above), the bridge reply); run_python runs in the kernel itself",
            f"{requests} model requests, the whole Task {wall:.1f} s (warm-up round excluded from the tables)",
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=REPS, help=f"measured repetitions (default {REPS})")
    parser.add_argument(
        "--nodelay", action="store_true", help="set TCP_NODELAY on jupyter_server's kernel websockets (an experiment)"
    )
    parser.add_argument("--detail", action="store_true", help="also print every run's time")
    args = parser.parse_args()
    run(args.reps, args.detail, args.nodelay)


if __name__ == "__main__":
    main()
