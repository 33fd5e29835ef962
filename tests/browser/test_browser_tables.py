"""Browser test: chromium builds the same tables from the compact transcript markup as from the full one.

The saved `text/html` writes tables without `</td>`, `</th>`, `</tr>` and with `align` for a
column's alignment (`markdown_html.compact_tables`). Here a real chromium parses, for several
Markdown tables, (a) markdown-it's full markup, (b) the compact markup and (c) the compact markup
after JupyterLab's own sanitizer (what JupyterLab shows when the labextension is not installed;
run with node from labextension/node_modules), and every table must come out with the same
sections, rows, cell kinds, cell text and computed alignment (`align="right"` computes to
`-webkit-right`, which aligns a cell's text as `right` does; the prefix is ignored).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

pytest.register_assert_rewrite("tests.support.browser")

from penguin_jupyter.notebook.transcript.markdown_html import markdown_html  # noqa: E402
from penguin_jupyter.notebook.transcript.no_fetch_html import safe_html  # noqa: E402
from penguin_jupyter.notebook.transcript.transcript_bundle import make_bundle, transcript_mimebundle  # noqa: E402
from penguin_jupyter.omni import assistant_text, user_text  # noqa: E402
from tests.support.browser import REPO_ROOT  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

TABLES = {
    "aligned": "| name | n | c |\n|:--|--:|:-:|\n| `a\\|b` *x* | 1 | [l](https://example.org) |\n| c | | ok |",
    "empty cells": "| a | b |\n|---|---|\n| | |\n| x | |",
    "two tables": "| a |\n|---|\n| 1 |\n\n| b | c |\n|---|---|\n| 2 | 3 |",
    "in a list, then text": "- item\n\n  | a | b |\n  |---|--:|\n  | 1 | 2 |\n\nafter the list",
    "long": "| id | v |\n|---|--:|\n" + "".join(f"| {n} | {n * 7} |\n" for n in range(300)),
}
_FULL = MarkdownIt("commonmark", {"html": False}).enable("table")
TABLE_SHAPE = """root => [...root.querySelectorAll(':scope > div table')].map(table =>
    [...table.children].map(section => [section.tagName,
        [...section.children].map(row => [row.tagName,
            [...row.children].map(c => [c.tagName, c.textContent, getComputedStyle(c).textAlign.replace('-webkit-', '')])])]))"""


def jupyterlab_sanitized(markups: list[str]) -> list[str]:
    """`markups` through JupyterLab's `Sanitizer` (node, the labextension's node_modules)."""
    labext = REPO_ROOT / "labextension"
    node = shutil.which("node")
    if node is None or not (labext / "node_modules" / "@jupyterlab" / "apputils").exists():
        pytest.skip("node or labextension/node_modules is missing: run `jlpm install` in labextension/")
    script = (
        "import { Sanitizer } from '@jupyterlab/apputils/lib/sanitizer.js';"
        "let data = ''; process.stdin.on('data', c => data += c);"
        "process.stdin.on('end', () => { const s = new Sanitizer();"
        " process.stdout.write(JSON.stringify(JSON.parse(data).map(h => s.sanitize(h)))); });"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(markups),
        capture_output=True,
        text=True,
        cwd=labext,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def saved_html(text: str) -> str:
    bundle = make_bundle([user_text("t"), assistant_text(text)], session_info=None, status="completed")
    return transcript_mimebundle(bundle)["text/html"]


def test_chromium_reads_compact_tables_as_the_full_ones(browser, tmp_path: Path):
    names = list(TABLES)
    full = [safe_html(_FULL.render(TABLES[n])) for n in names]
    compact = [markdown_html(TABLES[n]) for n in names]
    saved = [saved_html(TABLES[n]) for n in names]
    assert all("</td>" not in c and "</tr>" not in c and "text-align" not in c and "align=right" in compact[0] for c in compact)
    sanitized = jupyterlab_sanitized(compact)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content("<!DOCTYPE html><html><body></body></html>")
        for name, *forms in zip(names, full, compact, saved, sanitized, strict=True):
            shapes = []
            for markup in forms:
                page.evaluate("m => { document.body.innerHTML = '<div>' + m + '</div>'; }", markup)
                shapes.append(page.evaluate(TABLE_SHAPE, page.query_selector("body")))
            reference = shapes[0]
            assert reference and all(cells for _, rows in reference[0] for _, cells in rows), name
            for label, shape in zip(("compact", "saved text/html", "JupyterLab-sanitized"), shapes[1:], strict=True):
                assert shape == reference, f"{name}: {label} differs from the full markup"
    finally:
        context.close()
