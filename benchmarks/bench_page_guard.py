"""What the page's meta-refresh guard costs: the same JupyterLab with the guard on and off.

The labextension's `no_refresh` plugin (labextension/src/no_refresh.ts) patches the DOM's
insertion methods and HTML-string setters in every lab, so each insertion walks the inserted
subtree's `<meta>` elements and each HTML string is tested for `http-equiv`. This script starts
two real `jupyter lab` servers (tests/support/browser.py's `JupyterLab`), one with the plugin
disabled in the page config (`disabledExtensions`, what `jupyter labextension disable` writes),
and measures in Debian chromium, interleaving the two, the median of ROUNDS:

* DOM work in the page: appendChild of a 20-element subtree, an `innerHTML` table of 100 rows,
  and `insertAdjacentHTML` of a short row (the paths outputs and CodeMirror take);
* opening a notebook of CELLS code cells each with a saved HTML table and a text output
  (windowingMode `none`, so every output renders): navigation until the last output is attached;
* typing: TYPED characters typed into a cell of that notebook (real key events, noisy: each is a
  round trip from playwright) until the cell's model holds them, then as many one-character edits
  made through CodeMirror in the page, each followed by a layout (what typing costs the page).

Prints a table with both figures and their ratio (goal: opening and editing within 5%). Asserts
nothing. Needs /usr/bin/chromium and the built labextension.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]  # run from anywhere, package not installed

import nbformat  # noqa: E402
from _common import print_table, verdict  # noqa: E402

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, CURRENT_NOTEBOOK, JupyterLab  # noqa: E402

GUARD_PLUGIN = "penguin-jupyter:no-declarative-refresh"
NOTEBOOK = "bench_page_guard.ipynb"
CELLS = 200
ROUNDS = 9
TYPED = 300
GOAL = 1.05

DOM_WORK = """() => {
  const host = document.createElement('div');
  document.body.appendChild(host);
  const subtree = document.createElement('div');
  for (let i = 0; i < 19; i++) { const span = document.createElement('span'); span.textContent = 'cell ' + i; subtree.appendChild(span); }
  const rows = Array.from({length: 100}, (_, i) => `<tr><td>${i}</td><td>Adelie</td><td>39.1</td><td>18.7</td><td>male</td></tr>`).join('');
  const table = `<table class="dataframe"><thead><tr><th>i</th><th>species</th><th>bill</th><th>depth</th><th>sex</th></tr></thead><tbody>${rows}</tbody></table>`;
  const once = (count, body) => { const t0 = performance.now(); for (let i = 0; i < count; i++) { body(i); } const ms = performance.now() - t0; host.replaceChildren(); return ms * 1000 / count; };
  const timed = (count, body) => Math.min(...Array.from({length: 5}, () => once(count, body)));
  const result = {
    append_us: timed(5000, () => host.appendChild(subtree.cloneNode(true))),
    inner_html_us: timed(300, () => { host.innerHTML = table; }),
    adjacent_us: timed(5000, () => host.insertAdjacentHTML('beforeend', '<div><b>row</b> 1</div>')),
    guarded: !Node.prototype.appendChild.toString().includes('[native code]'),
  };
  host.remove();
  return result;
}"""

OUTPUTS_ATTACHED = """(expected) => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  return !!panel && panel.querySelectorAll('.jp-OutputArea-output table.dataframe').length >= expected;
}"""

EDITS = """(count) => {
  const view = window.jupyterapp.shell.currentWidget.content.activeCell.editor.editor;
  const start = view.state.doc.length;
  const once = () => {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      view.dispatch({changes: {from: view.state.doc.length, insert: i % 40 === 39 ? '\\n' : 'x'}});
      view.contentDOM.getBoundingClientRect();
    }
    const ms = performance.now() - t0;
    view.dispatch({changes: {from: start, to: view.state.doc.length}});
    return ms;
  };
  return Math.min(once(), once(), once());
}"""

CELL_SOURCE_LENGTH = (
    """() => window.jupyterapp.shell.currentWidget.content.activeCell.model.sharedModel.getSource().length"""
)


class GuardLab(JupyterLab):
    """The browser tests' JupyterLab (every cell rendered) with, when asked, the page guard disabled."""

    guard: bool = True

    def _prepare(self) -> None:
        super()._prepare()
        config = self.home / ".jupyter" / "labconfig" / "page_config.json"
        settings = json.loads(config.read_text())
        if not self.guard:
            settings["disabledExtensions"][GUARD_PLUGIN] = True
        config.write_text(json.dumps(settings))


def write_notebook(lab: JupyterLab, cells: int) -> None:
    """CELLS code cells, each with a saved 20-row HTML table and a short text output."""
    rows = "".join(f"<tr><td>{i}</td><td>Adelie</td><td>39.1</td></tr>" for i in range(20))
    table = f'<table class="dataframe"><tr><th>i</th><th>species</th><th>bill</th></tr>{rows}</table>'
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i in range(cells):
        cell = nbformat.v4.new_code_cell(f"df{i} = load({i})\ndf{i}.head(20)", execution_count=i + 1)
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=f"loaded {i}: 344 rows\n"),
            nbformat.v4.new_output(
                "execute_result", data={"text/html": table, "text/plain": f"df{i}"}, execution_count=i + 1
            ),
        ]
        nb.cells.append(cell)
    nbformat.write(nb, str(lab.root_dir / NOTEBOOK))


def open_ms(page: Any, lab: JupyterLab, cells: int) -> float:
    page.goto(lab.url + "/lab?token=" + lab.token)  # a fresh app each time
    page.locator(".jp-LabShell").wait_for()
    started = time.perf_counter()
    page.goto(lab.notebook_url(NOTEBOOK))
    page.wait_for_function(OUTPUTS_ATTACHED, arg=cells, timeout=300_000)
    return (time.perf_counter() - started) * 1000


def typing_ms(page: Any, typed: int) -> tuple[float, float]:
    """Type into the last cell (below every output) until its model holds every character; then
    make as many one-character edits through CodeMirror in the page, each laid out (no key events;
    the best of three passes, each undone after)."""
    editor = page.locator(f"{CURRENT_NOTEBOOK} .jp-CodeCell").last.locator(".cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("Control+End")
    before = page.evaluate(CELL_SOURCE_LENGTH)
    started = time.perf_counter()
    page.keyboard.type("x = df.groupby('species').mean()  # " * (typed // 36) + "y" * (typed % 36))
    page.wait_for_function(f"() => ({CELL_SOURCE_LENGTH})() >= {before + typed}", timeout=120_000)
    keys = (time.perf_counter() - started) * 1000
    return keys, page.evaluate(EDITS, typed)


def spread(values: list[float]) -> str:
    """The median and, in brackets, the lowest and highest."""
    return f"{statistics.median(values):.1f} ({min(values):.1f}–{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=CELLS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--typed", type=int, default=TYPED)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    figures: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    with tempfile.TemporaryDirectory(prefix="bench-guard-") as base:
        labs = {}
        for guard in (True, False):
            lab = GuardLab(Path(base) / ("on" if guard else "off"), windowing="none")
            lab.guard = guard
            labs[guard] = lab.start()
            write_notebook(lab, args.cells)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                pages = {
                    guard: browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                    for guard in labs
                }
                for page in pages.values():
                    page.set_default_timeout(300_000)
                for _ in range(args.rounds):
                    for guard in (True, False):
                        page, lab, seen = pages[guard], labs[guard], figures[guard]
                        seen.setdefault("open_ms", []).append(open_ms(page, lab, args.cells))
                        keys, edits = typing_ms(page, args.typed)
                        seen.setdefault("typing_ms", []).append(keys)
                        seen.setdefault("edits_ms", []).append(edits)
                        dom = page.evaluate(DOM_WORK)
                        if dom.pop("guarded") != guard:
                            raise SystemExit(
                                f"the page guard is {'off' if guard else 'on'} where it should be {'on' if guard else 'off'}"
                            )
                        for key, value in dom.items():
                            seen.setdefault(key, []).append(value)
                browser.close()
        finally:
            for lab in labs.values():
                lab.shutdown_kernels()
                lab.stop()
    rows = []
    labels = {
        "append_us": ("appendChild, a 20-element subtree (µs)", None),
        "inner_html_us": ("innerHTML, a 100-row table (µs)", None),
        "adjacent_us": ("insertAdjacentHTML, a short row (µs)", None),
        "open_ms": (f"open a {args.cells}-cell notebook with tables, all rendered (ms)", GOAL),
        "typing_ms": (f"type {args.typed} characters into a cell, real key events (ms)", None),
        "edits_ms": (f"{args.typed} one-character CodeMirror edits, each laid out (ms)", GOAL),
    }
    for key, (label, goal) in labels.items():
        on, off = statistics.median(figures[True][key]), statistics.median(figures[False][key])
        ratio = on / off if off else float("inf")
        verdicts = verdict(ratio <= goal) if goal else "—"
        rows.append(
            [label, spread(figures[False][key]), spread(figures[True][key]), f"{ratio:.3f}", verdicts]
        )
    print_table(
        f"The page guard's cost: guard off vs on (medians of {args.rounds} interleaved rounds, range in brackets)",
        ["figure", "guard off", "guard on", "ratio", f"≤ {GOAL:.2f}"],
        rows,
        ["Off: the plugin disabled in page_config.json (disabledExtensions), the rest of the lab the same."],
    )


if __name__ == "__main__":
    main()
