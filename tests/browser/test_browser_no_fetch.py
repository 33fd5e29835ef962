"""Browser test: a saved notebook whose transcript holds remote images fetches nothing when opened.

A real JupyterLab (tests/support/browser.py) opens, in a fresh page, a saved notebook whose
`%%penguin` output (the transcript bundle the labextension renders, plus its `text/html`)
holds every remote-resource vector of tests/support/no_fetch.py — Markdown image,
reference-style image, raw `<img>`, SVG `href`, CSS `url()`… — all pointing at a counting HTTP
server on 127.0.0.2 (cross-origin to jupyter on 127.0.0.1). No cell is run: the output comes
from the file (JupyterLab starts the notebook's kernel as it always does; nothing executes in it).
The server receives no request and the page issues none to it; the placeholders are visible and
name the host; a `data:` PNG renders as an image; clicking a placeholder opens its URL in a new
page (the one request the server then sees).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time

import nbformat
import pytest

pytest.register_assert_rewrite("tests.support.browser", "tests.support.no_fetch")

from penguin_jupyter.notebook.transcript.transcript_bundle import transcript_mimebundle  # noqa: E402
from tests.support.browser import (  # noqa: E402
    CURRENT_NOTEBOOK,
    TRANSCRIPT_MIME,
    JupyterLab,
    cell,
    nbconvert_html,
    open_notebook,
    run_all,
    save,
    wait_cell_done,
)
from tests.support.no_fetch import (  # noqa: E402
    CLEAN_SVG,
    DATA_PNG,
    VECTOR_PATHS,
    audit,
    hostile_bundle,
    hostile_markdown,
    raw_vectors,
    spliced_vectors,
    svg_data_urls,
    svg_with_references,
)
from tests.support.paths import REPO_ROOT  # noqa: E402

pytest_plugins = ["tests.support.browser", "tests.support.no_fetch"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

# Every vector gets its placeholder, except raw HTML on a plain line (escaped to visible text
# before parsing, so never an element) and the URL inside the SVG data: image ("not shown").
MUST_BE_PLACEHOLDERS = set(VECTOR_PATHS) - {"/raw-img", "/data-svg-ref"}


def _write_saved_notebook(lab: JupyterLab, name: str, base: str) -> None:
    cell = nbformat.v4.new_code_cell("%%penguin\nsummarize the report", execution_count=1)
    data = transcript_mimebundle(hostile_bundle(base))
    assert TRANSCRIPT_MIME in data and "text/html" in data
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, str(lab.root_dir / name))


def test_saved_transcript_with_remote_images_fetches_nothing(page, lab, counting):
    name = "no_fetch.ipynb"
    _write_saved_notebook(lab, name, counting.base)
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))

    page.goto(lab.notebook_url(name))
    transcript = page.locator(f"{CURRENT_NOTEBOOK} .penguin-transcript")
    transcript.locator(".pg-text").first.wait_for()
    # The plots (data: PNGs, in the tool card and in the Markdown) render and finish loading.
    page.wait_for_function(
        """src => [...document.querySelectorAll('.penguin-transcript img')]
                   .filter(img => img.getAttribute('src') === src)
                   .map(img => img.complete && img.naturalWidth === 4)
                   .filter(Boolean).length === 2""",
        arg=DATA_PNG,
    )
    page.wait_for_timeout(1500)  # let anything the rendering might have started reach the server

    assert counting.total() == 0, dict(counting.hits)  # the renderer before the fix: 7 requests
    assert [url for url in seen if counting.host in url] == []
    # Only the data: images are <img> elements: two PNGs and the SVG without references.
    assert transcript.locator("img").count() == 3
    assert transcript.locator(f'img[src="{CLEAN_SVG}"]').count() == 1
    assert transcript.locator("iframe, object, embed, video, audio, svg, picture, link, style").count() == 0

    remote = transcript.locator(".pg-remote")
    texts = remote.all_inner_texts()
    titles = [remote.nth(i).get_attribute("title") or "" for i in range(remote.count())]
    # Each names the host; the SVG data: image (it references a URL inside) says it is not shown.
    bad = [(t, u) for t, u in zip(texts, titles, strict=True) if f"from {counting.host}" not in t]
    assert bad == [("🖼 image/svg+xml not shown", "image/svg+xml")]
    assert all(remote.nth(i).is_visible() for i in range(remote.count()))
    shown = {re.split(r"[?#]", title.removeprefix(counting.base))[0] for title in titles}
    assert shown - {"image/svg+xml"} == MUST_BE_PLACEHOLDERS

    # One click opens the image's URL in a new page: the only request the server ever sees.
    markdown_image = transcript.locator(f'.pg-remote[title^="{counting.base}/md-image"]')
    assert markdown_image.inner_text() == f"🖼 image from {counting.host} — click to open"
    with page.context.expect_page() as opened:
        markdown_image.click()
    new_page = opened.value
    new_page.wait_for_load_state()
    assert new_page.url.startswith(f"{counting.base}/md-image?d=secret-data")
    deadline = time.monotonic() + 30
    while counting.total() == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert counting.hits["/md-image"] == 1
    assert set(counting.hits) <= {"/md-image", "/favicon.ico"}, dict(counting.hits)
    new_page.close()


def _compiled_nofetch() -> str:
    """labextension/lib/nofetch.js (tsc output, no imports), compiled first when stale."""
    labext = REPO_ROOT / "labextension"
    compiled, source = labext / "lib" / "nofetch.js", labext / "src" / "nofetch.ts"
    if not compiled.exists() or compiled.stat().st_mtime < source.stat().st_mtime:
        tsc = labext / "node_modules" / "typescript" / "bin" / "tsc"
        node = shutil.which("node")
        if node is None or not tsc.exists():
            pytest.skip("node or labextension/node_modules is missing: run `jlpm install` in labextension/")
        subprocess.run([node, str(tsc)], cwd=labext, check=True, timeout=120)
    return compiled.read_text()


def test_ts_rebuild_neutralizes_every_vector_in_chromium(browser, counting):
    """nofetch.ts alone (no JupyterLab sanitizer in front) over every raw vector, in a real page."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_content("<!DOCTYPE html><html><body></body></html>")
        page.add_script_tag(
            content=_compiled_nofetch() + "\nwindow.__nofetch = { safeFragment, imageNode, isInlineImage };",
            type="module",
        )
        page.wait_for_function("() => window.__nofetch !== undefined")
        vectors = raw_vectors(counting.base)
        rebuilt = page.evaluate(
            """vectors => Object.fromEntries(Object.entries(vectors).map(([name, html]) => {
                const holder = document.createElement('div');
                holder.appendChild(window.__nofetch.safeFragment(html));
                document.body.appendChild(holder);
                return [name, holder.innerHTML];
            }))""",
            vectors,
        )
        images = page.evaluate(
            """([remote, png]) => [remote, png].map(src => {
                const node = window.__nofetch.imageNode(src);
                document.body.appendChild(node);
                return node.outerHTML;
            })""",
            [f"{counting.base}/image-node", DATA_PNG],
        )
        spliced = page.evaluate(
            """markups => markups.map(html => {
                const holder = document.createElement('div');
                holder.appendChild(window.__nofetch.safeFragment(html));
                document.body.appendChild(holder);
                return holder.innerHTML;
            })""",
            spliced_vectors(counting.base, 300),
        )
        assert [markup for markup in spliced if audit(markup).loads] == []
        svgs = [url for svg in svg_with_references(counting.base) for url in svg_data_urls(svg)]
        inline = page.evaluate(
            "urls => urls.map(url => window.__nofetch.isInlineImage(url))", [*svgs, CLEAN_SVG]
        )
        assert inline == [False] * len(svgs) + [True]
        page.wait_for_timeout(1500)  # let anything the insertions might have started reach the server
        assert counting.total() == 0, dict(counting.hits)
        for name, markup in rebuilt.items():
            assert audit(markup).loads == [], (name, markup)
            # (an HTML fragment parser drops a <body> tag with its attributes: nothing to name)
            assert f"from {counting.host}" in markup or name == "body background", (name, markup)
        assert f"🖼 image from {counting.host} — click to open" in images[0]
        assert audit(images[1]).inline_images == [DATA_PNG]

        # The control: the same vectors inserted as they are do reach the counting server.
        page.evaluate(
            """vectors => { for (const [name, html] of Object.entries(vectors)) {
                if (name === 'meta refresh') continue;   // would navigate the page away
                const holder = document.createElement('div');
                holder.innerHTML = html;
                document.body.appendChild(holder);
            } }""",
            vectors,
        )
        deadline = time.monotonic() + 30
        while counting.total() < 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert counting.total() >= 5, dict(counting.hits)
    finally:
        context.close()


def test_live_cell_streaming_remote_images_fetches_nothing(page, lab, scripted, counting):
    """A model streams the hostile Markdown into a running cell: the live widgets, the static
    transcript that replaces them and nbconvert's HTML of the saved notebook load nothing."""
    text = hostile_markdown(counting.base)
    scripted([{"text": text, "delay_ms": 40}])
    path = lab.write_notebook("no_fetch_live.ipynb", "%%penguin --approve deny-all\nSummarize the report")
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url))
    open_notebook(page, lab, "no_fetch_live.ipynb")
    run_all(page)

    # While it streams, the text is shown as plain text (rendered only by the static transcript):
    # the image's URL is visible as characters and nothing loads it.
    cell(page, 1).locator(".jp-OutputArea-output", has_text=counting.host).first.wait_for()
    assert counting.total() == 0, dict(counting.hits)
    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for()
    wait_cell_done(page, 1)
    assert transcript.locator(".pg-remote").first.is_visible()
    save(page, path)
    page.wait_for_timeout(1500)  # let anything the rendering might have started reach the server

    assert counting.total() == 0, dict(counting.hits)
    assert [url for url in seen if counting.host in url] == []
    converted = nbconvert_html(path, lab)
    assert [load for load in audit(converted).loads if counting.host in load] == []
    assert f"image from {counting.host} — click to open" in converted
