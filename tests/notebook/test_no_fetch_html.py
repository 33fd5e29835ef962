"""Nothing fetches by itself (Python side): `no_fetch_html.safe_html` over every remote-resource
vector, Markdown (`markdown_html`), the live widgets, the saved `text/html` and a real
`jupyter nbconvert --to html` of a notebook holding a hostile transcript.

Each check audits the produced HTML with an independent parser (`support.no_fetch.audit`): every
attribute or CSS that would make a browser load something without a click must be absent,
the remote resource must be a placeholder naming its host with a click-to-open link, and a
`data:` PNG must still be an inline <img>.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from urllib.parse import quote

import nbformat
import pytest

from penguin_jupyter.notebook.live.live_view import LiveView
from penguin_jupyter.notebook.transcript.markdown_html import markdown_html
from penguin_jupyter.notebook.transcript.no_fetch_html import image_html, placeholder_html, safe_html
from penguin_jupyter.notebook.transcript.transcript_bundle import transcript_mimebundle
from penguin_jupyter.omni import partial_text
from tests.support.no_fetch import (
    CLEAN_SVG,
    DATA_PNG,
    audit,
    hostile_bundle,
    hostile_markdown,
    hostile_messages,
    raw_vectors,
    spliced_vectors,
    svg_data_urls,
    svg_with_references,
)

pytestmark = pytest.mark.security

BASE = "http://evil.example:8123"
HOST = "evil.example"


VECTORS = raw_vectors(BASE)


@pytest.mark.parametrize("markup", VECTORS.values(), ids=VECTORS.keys())
def test_every_vector_becomes_a_placeholder_naming_the_host(markup):
    out = safe_html(markup)
    assert audit(out).loads == [], out
    assert f"from {HOST}" in out, out
    assert audit(out).links, out  # something to click (the placeholder, or the link itself)


def test_the_audit_catches_each_vector_unsanitized():
    """The checker used above can fail: every raw vector is reported as a load."""
    for name, markup in VECTORS.items():
        if name not in ("anchor ping",):
            assert audit(markup).loads, name


def test_placeholder_is_a_new_tab_link_to_the_url():
    out = placeholder_html(f"{BASE}/a.png?d=1")
    assert (
        out.startswith('<a class="pg-remote" style="') and 'href="http://evil.example:8123/a.png?d=1"' in out
    )
    assert 'target="_blank" rel="noopener noreferrer nofollow"' in out
    assert safe_html(out) == out  # a placeholder passes the allow-list unchanged
    assert "🖼 image from evil.example — click to open" in out
    # Anything that is not http(s) is named but never a link.
    assert "<a" not in placeholder_html("file:///etc/passwd") and "(not loaded)" in placeholder_html("x.png")


def test_data_rasters_stay_inline_and_svg_data_does_not():
    for mime in ("png", "jpeg", "gif", "webp"):
        src = f"data:image/{mime};base64,iVBORw0KGgo="
        assert audit(safe_html(f'<img src="{src}">')).inline_images == [src]
        assert audit(image_html(src)).inline_images == [src]
    assert "<img" not in image_html("data:text/html;base64,PHA+")


SVG_WITH_REFERENCES = svg_with_references(BASE)


@pytest.mark.parametrize("svg", SVG_WITH_REFERENCES)
def test_svg_data_images_with_references_are_not_shown(svg):
    for src in svg_data_urls(svg):
        assert "<img" not in safe_html(f'<img src="{src}">') and "<img" not in image_html(src)
        assert "image/svg+xml not shown" in image_html(src)


def test_svg_data_images_without_references_render_inline():
    assert audit(image_html(CLEAN_SVG)).inline_images == [CLEAN_SVG]
    plain = "data:image/svg+xml," + quote('<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0"/></svg>')
    assert audit(safe_html(f'<img src="{plain}">')).inline_images == [plain]


def test_links_keep_only_clickable_schemes():
    out = safe_html('<a href="javascript:alert(1)">x</a><a href="HTTPS://ok.example/">y</a>')
    assert "javascript" not in out
    assert '<a href="HTTPS://ok.example/" target="_blank" rel="noopener noreferrer nofollow">y</a>' in out


def test_plain_markup_survives_unchanged_in_meaning():
    markup = (
        "<p>Hi <strong>there</strong> <code>&lt;img&gt;</code> <span>$</span>5</p><details open><summary>s</summary>"
        '<pre>a &amp; b</pre></details><table><tr><th style="text-align:right">h</th></tr></table>'
    )
    assert safe_html(markup) == markup


def test_markdown_images_inline_and_reference_become_placeholders():
    out = markdown_html(f"![a]({BASE}/one.png) and ![b][r] and ![plot]({DATA_PNG})\n\n[r]: {BASE}/two.png")
    assert audit(out).loads == []
    assert out.count(f"image from {HOST} — click to open") == 2
    assert f'href="{BASE}/one.png"' in out and f'href="{BASE}/two.png"' in out
    assert audit(out).inline_images == [DATA_PNG]


def test_saved_html_of_a_hostile_transcript_loads_nothing():
    html = transcript_mimebundle(hostile_bundle(BASE))["text/html"]
    checked = audit(html)
    assert checked.loads == []
    assert html.count(f"from {HOST} — click to open") >= 4  # md, reference, tool image, image block
    assert checked.inline_images == [DATA_PNG, DATA_PNG]  # the tool's plot and the Markdown plot


def _html_values(widget) -> list[str]:
    values, pending = [], [widget]
    while pending:
        node = pending.pop()
        pending.extend(getattr(node, "children", ()) or ())
        if hasattr(node, "value") and isinstance(node.value, str):
            values.append(node.value)
    return values


async def test_live_widgets_of_a_hostile_task_load_nothing():
    view = LiveView({"session_id": "s"}, lambda: None)
    text = hostile_markdown(BASE) + f"\n\n<img src={BASE}/raw.png>\n\n![x]({BASE}/late.png)"
    # Streamed in small chunks: every intermediate render is audited, not just the last one.
    for start in range(0, len(text), 37):
        view.handle(partial_text("delta", text[start : start + 37]))
        view.scope.flush()
        for value in _html_values(view.display_object()):
            assert audit(value).loads == [], value
    for message in hostile_messages(BASE):
        view.handle(message)
    view.finish("completed")
    await asyncio.sleep(0)
    values = _html_values(view.display_object())
    joined = "".join(values)
    assert all(audit(value).loads == [] for value in values)
    assert f"image from {HOST} — click to open" in joined
    assert any(audit(value).inline_images == [DATA_PNG] for value in values)


def test_nbconvert_html_of_a_hostile_notebook_loads_nothing_from_the_model(tmp_path):
    cell = nbformat.v4.new_code_cell("%%penguin\nsummarize the report")
    cell.outputs = [nbformat.v4.new_output("display_data", data=transcript_mimebundle(hostile_bundle(BASE)))]
    path = tmp_path / "hostile.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    page = (tmp_path / "hostile.html").read_text()
    start = page.index('<div class="penguin-transcript-html">')
    transcript = page[start:]
    # Inside the transcript nothing loads; in the whole page, the model's host is only ever a link.
    assert audit(transcript).loads == []
    whole = audit(page)
    assert [load for load in whole.loads if HOST in load] == []
    assert f"image from {HOST} — click to open" in transcript
    assert DATA_PNG in whole.inline_images


def test_past_the_placeholder_limit_a_note_counts_the_rest():
    out = safe_html("".join(f'<img src="{BASE}/{i}.png">' for i in range(70)))
    assert out.count("click to open") == 64
    assert out.endswith('<span class="pg-remote">… 6 more remote resources not loaded</span>')
    assert audit(out).loads == []


def test_style_keeps_plain_declarations_and_drops_functions_that_load():
    out = safe_html(
        '<span style="color:var(--jp-ui-font-color2, rgb(1, 2, 3));font-size:12px/1.4;'
        f'background:url({BASE}/bg.png);border:1px solid red;margin:src({BASE}/x)">x</span>'
    )
    assert (
        'style="color:var(--jp-ui-font-color2, rgb(1, 2, 3));font-size:12px/1.4;border:1px solid red"' in out
    )
    assert audit(out).loads == [] and f"from {HOST}" in out


def test_malformed_markup_never_raises_and_never_loads():
    """Fragments of every vector cut and spliced at random (fixed seed): no exception, no load."""
    for markup in spliced_vectors(BASE, 1500):
        assert audit(safe_html(markup)).loads == [], markup
