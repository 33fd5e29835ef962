"""A long exploration in a real JupyterLab: 100 `%%penguin` cells, and what the page holds after.

A real `jupyter lab` and Debian chromium (playwright), set up like the browser tests
(tests/support/browser.py's `JupyterLab` and page helpers; the app exposed as `window.jupyterapp`
for the probe), run a notebook of `%load_ext penguin_jupyter` and CELLS `%%penguin --approve
allow-all` cells one after another (each run as Shift+Enter would, after the previous ended). Each Task is small: thinking, a short answer, one
`exec_command` and a closing sentence. After cell 10 and after the last cell, once the kernel is
idle and the kernel's widget count stopped falling (the paced teardown drained), the probe forces a garbage collection
(CDP `HeapProfiler.collectGarbage`) and reads:

* the page's JS heap (`Runtime.getHeapUsage`, used bytes) and, where chromium reports it, the
  DOM's (Blink's) heap beside it (`embedderHeapUsedSize`);
* the widget manager's model count (`ManagerBase._models` of the notebook's manager, reached
  through a renderer of the widget mime type) and the kernel connection's open comms;
* the kernel's own `ipywidgets.Widget.widgets` (run in the kernel through the page's session).

`--snapshots DIR` also writes the page's heap snapshot at both points, for `heap_diff.py` (what
the new bytes are and what holds them); `--windowing MODE` sets the notebook's `windowingMode`
as a user would; `--transcript-cost` empties the rendered transcripts at the end and says what
that freed. `--plain` runs the same number of plain cells (a print and a dict) instead, for the heap a
notebook's cells cost anyway. Prints a table: each figure after cell 10 and after cell CELLS and their ratio (goal: the heap
and the model count within 10%). Asserts nothing. Needs /usr/bin/chromium and the built labextension.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

from _common import print_table, verdict  # noqa: E402

from penguin_jupyter.testing import ScriptedModelServer  # noqa: E402
from tests.support.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    JupyterLab,
    open_notebook,
    wait_cell_done,
    wait_kernel_idle,
)

CELLS = 100
CHECKPOINT = 10
DRAIN_S = 2.0  # the paced teardown closes 20–100 models a second; a Task here makes about 25
DRAIN_MAX_S = 120.0
NOTEBOOK = "bench_browser_soak.ipynb"
PLAIN_CELL = "print('Step done; the numbers look fine. ' * 20)\n{'rows': 48213, 'mean': 1234.5}"

PROBE = """async () => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const kernel = panel.sessionContext.session.kernel;
  const comms = kernel._comms ? kernel._comms.size : -1;
  let models = -1;
  const mime = 'application/vnd.jupyter.widget-view+json';
  const factory = panel.content.rendermime.getFactory(mime);
  if (factory) {
    const renderer = factory.createRenderer({mimeType: mime, sanitizer: null, resolver: null, linkHandler: null, latexTypesetter: null});
    let manager = renderer._manager;
    if (manager && manager.promise) { manager = await manager.promise; }
    if (manager && manager._models) { models = Object.keys(manager._models).length; }
  }
  return {comms, models};
}"""
KERNEL_PROBE = """async () => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const code = "import ipywidgets as _w; print(len(_w.Widget.widgets), end='')";
  let out = '';
  const future = kernel.requestExecute({code, silent: false, store_history: false});
  future.onIOPub = (msg) => { if (msg.header.msg_type === 'stream') { out += msg.content.text; } };
  await future.done;
  return parseInt(out, 10);
}"""


class SoakLab(JupyterLab):
    """The browser tests' JupyterLab, with the app exposed in the page for the probe."""

    def _prepare(self) -> None:
        super()._prepare()
        config = self.home / ".jupyter" / "labconfig" / "page_config.json"
        settings = json.loads(config.read_text())
        settings["exposeAppInBrowser"] = True
        config.write_text(json.dumps(settings))


def script(cells: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for i in range(cells):
        call = {"name": "exec_command", "id": f"soak_{i}", "arguments": {"cmd": f"echo step {i}"}}
        entries.append({"reasoning": ["Checking ", "the data."], "text": [f"Step {i}: ", "running it."], "tool_calls": [call]})
        entries.append({"text": [f"Step {i} ", "is done; ", "the numbers look fine."]})
    return entries


def run_cell(page: Any, index: int) -> None:
    """Run code cell `index` as Shift+Enter would (without moving on) and wait for its `[n]`."""
    page.evaluate(
        "async (i) => { const app = window.jupyterapp; app.shell.currentWidget.content.activeCellIndex = i;"
        " await app.commands.execute('notebook:run-cell'); }",
        index,
    )
    wait_cell_done(page, index, timeout_ms=300_000)


def take_snapshot(cdp: Any, path: Path) -> None:
    """Write the page's heap snapshot (CDP `HeapProfiler.takeHeapSnapshot`) to `path`."""
    chunks: list[str] = []

    def on_chunk(event: dict[str, Any]) -> None:
        chunks.append(event["chunk"])

    cdp.on("HeapProfiler.addHeapSnapshotChunk", on_chunk)
    try:
        cdp.send("HeapProfiler.takeHeapSnapshot", {"reportProgress": False})
    finally:
        cdp.remove_listener("HeapProfiler.addHeapSnapshotChunk", on_chunk)
    path.write_text("".join(chunks))


def measure(page: Any, cdp: Any, snapshot: Path | None = None) -> dict[str, float]:
    """The figures once the kernel is idle and its widget count stopped falling (≤ DRAIN_MAX_S)."""
    wait_kernel_idle(page)
    time.sleep(DRAIN_S)
    deadline, last = time.monotonic() + DRAIN_MAX_S, None
    while time.monotonic() < deadline:
        now = page.evaluate(KERNEL_PROBE)
        if now == last:
            break
        last = now
        time.sleep(DRAIN_S)
    cdp.send("HeapProfiler.collectGarbage")
    time.sleep(0.5)
    cdp.send("HeapProfiler.collectGarbage")
    usage = cdp.send("Runtime.getHeapUsage")
    heap = usage["usedSize"]
    if snapshot is not None:
        take_snapshot(cdp, snapshot)
    probe = page.evaluate(PROBE)
    kernel_models = page.evaluate(KERNEL_PROBE)
    return {"heap_mb": heap / 1e6, "dom_mb": usage.get("embedderHeapUsedSize", -1e6) / 1e6, "models": probe["models"], "comms": probe["comms"], "kernel_models": kernel_models}


EMPTY_TRANSCRIPTS = """() => {
  const nodes = document.querySelectorAll('.penguin-transcript');
  const elements = document.querySelectorAll('.penguin-transcript *').length;
  for (const node of nodes) { node.replaceChildren(); }
  return {transcripts: nodes.length, elements};
}"""


def transcript_cost(page: Any, cdp: Any) -> str:
    """What the rendered transcripts hold: the heaps after GC before and after emptying them."""

    def heaps() -> tuple[float, float]:
        cdp.send("HeapProfiler.collectGarbage")
        time.sleep(0.5)
        cdp.send("HeapProfiler.collectGarbage")
        usage = cdp.send("Runtime.getHeapUsage")
        return usage["usedSize"], usage.get("embedderHeapUsedSize", 0)

    js, dom = heaps()
    found = page.evaluate(EMPTY_TRANSCRIPTS)
    js_after, dom_after = heaps()
    count = max(1, found["transcripts"])
    return (
        f"Emptying the {found['transcripts']} rendered transcripts ({found['elements'] / count:.0f} elements each) freed"
        f" {(js - js_after) / count / 1e3:.1f} KB of JS heap and {(dom - dom_after) / count / 1e3:.1f} KB of DOM heap each."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=CELLS)
    parser.add_argument("--plain", action="store_true", help="baseline: plain cells printing a short text instead of %%penguin cells")
    parser.add_argument("--snapshots", type=Path, help="also write the page's heap snapshots at both checkpoints into this folder (for heap_diff.py)")
    parser.add_argument(
        "--windowing",
        choices=("full", "defer", "contentVisibility", "none"),
        help="the notebook's windowingMode setting (default: JupyterLab's own)",
    )
    parser.add_argument(
        "--transcript-cost",
        action="store_true",
        help="at the end, empty the rendered transcripts and say what that freed (the page is not measured after)",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-soak-") as base, ScriptedModelServer(script(args.cells), log_requests=False) as server:
        lab = SoakLab(Path(base), windowing=args.windowing)  # None: JupyterLab's default
        lab.start()
        try:
            lab.use_model_server(server)
            source = PLAIN_CELL if args.plain else "%%penguin --approve allow-all\nNext step."
            lab.write_notebook(NOTEBOOK, *[source for _ in range(args.cells)])
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.set_default_timeout(600_000)
                cdp = page.context.new_cdp_session(page)
                open_notebook(page, lab, NOTEBOOK)
                started = time.monotonic()
                for index in range(CHECKPOINT + 1):  # %load_ext, then the first 10 %%penguin cells
                    run_cell(page, index)
                snaps = args.snapshots
                if snaps is not None:
                    snaps.mkdir(parents=True, exist_ok=True)
                early = measure(page, cdp, snaps / f"after_{CHECKPOINT}.heapsnapshot" if snaps else None)
                for index in range(CHECKPOINT + 1, args.cells + 1):
                    run_cell(page, index)
                late = measure(page, cdp, snaps / f"after_{args.cells}.heapsnapshot" if snaps else None)
                elapsed = time.monotonic() - started
                notes = [transcript_cost(page, cdp)] if args.transcript_cost else []
                browser.close()
        finally:
            lab.stop()
    rows = []
    for key, label in (("heap_mb", "page JS heap after GC (MB)"), ("dom_mb", "page DOM (embedder) heap after GC (MB)"), ("models", "widget manager models"),
                       ("comms", "kernel connection comms (page)"), ("kernel_models", "kernel Widget.widgets")):  # fmt: skip
        ratio = late[key] / early[key] if early[key] else (1.0 if late[key] == early[key] else float("inf"))
        goal = key in ("heap_mb", "models")
        rows.append([label, f"{early[key]:.1f}", f"{late[key]:.1f}", f"{ratio:.3f}", verdict(ratio <= 1.10) if goal else "—"])
    print_table(
        f"Browser soak: {args.cells} {'plain' if args.plain else '%%penguin'} cells in JupyterLab{f' (windowingMode {args.windowing})' if args.windowing else ''} (after cell {CHECKPOINT} vs after cell {args.cells})",
        ["figure", f"after {CHECKPOINT}", f"after {args.cells}", "ratio", "≤ 1.10"],
        rows,
        [f"Running the {args.cells} cells took {elapsed:.0f} s; each figure read once the kernel was idle and its widget count stable for {DRAIN_S:.0f} s.", *notes],
    )


if __name__ == "__main__":
    main()
