"""The sandboxed kernel in a real JupyterLab (docs/security.md "The sandboxed kernel"): the launcher
shows "Python 3 (penguin sandbox)" (the kernelspec and its provisioner found as an installed
package's would be), and a notebook using it runs a `%%penguin --approve auto` cell whose
`run_python` needs no card, writes in the notebook's folder, cannot write the home folder, and
says it ran in the sandboxed kernel — the server talking to the kernel over its Unix sockets.

The server is the hardened JupyterLab the docs give ("Your browser is outside the sandbox"): its
Content-Security-Policy, the JavaScript renderer disabled, penguin's script guard loaded and its
labextension's meta refresh guard on. There, what the kernel publishes around the no-fetch
filter (ipykernel's session directly: an inline script, an `onerror` handler,
`application/javascript`, a `data:` script, a script it wrote in the notebook's folder
(`/files/…`), a remote image, a `<meta http-equiv="refresh">` to the counting server) neither
runs, loads nor navigates, while penguin's live widgets and transcript work. The control (`test_without_the_hardening_the_same_outputs_run_and_fetch`)
runs the same cell in the same JupyterLab without the hardening: there the script runs or the
counting server gets the image, so the hardened test's "neither runs nor loads" can fail."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytest.register_assert_rewrite("tests.support.browser")

from penguin_jupyter.environment.sandbox import sandbox_support  # noqa: E402  (after register_assert_rewrite)
from penguin_jupyter.kernel_sandbox.browser_judge import SCRIPT_GUARD  # noqa: E402
from tests.support.browser import JupyterLab, cell, open_notebook, require_chromium, run_all  # noqa: E402
from tests.support.sandbox_kernel import HARDENED_CSP, KERNEL_NAME, KERNELS_DIR, installed, provisioner_path  # noqa: E402
from tests.support.sandbox_suite import CountingServer  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not sandbox_support().available, reason=f"no sandbox here: {sandbox_support().reason}"),
]

CODE = (
    "import os\n"
    "open('made-in-sandbox.txt', 'w').write('ok')\n"
    "try:\n"
    "    open(os.path.expanduser('~/escaped.txt'), 'w')\n"
    "except OSError as e:\n"
    "    print('home:', e.strerror)"
)


BYPASS = (
    "from IPython import get_ipython\n"
    "kernel = get_ipython().kernel\n"
    "open('pj-own.js', 'w').write('window.__pwned = 5')\n"
    "html = \"<script>window.__pwned = 1</script><img src=x onerror='window.__pwned = 2'>"
    "<script src='data:text/javascript,window.__pwned = 4'></script><img src='http://127.0.0.1:{port}/img'>"
    "<script src='/files/pj-own.js'></script><meta http-equiv='refresh' content='0;url=http://127.0.0.1:{port}/refresh?d=1'>\"\n"
    "content = {{'data': {{'text/html': html, 'application/javascript': 'window.__pwned = 3'}}, 'metadata': {{}}, 'transient': {{}}}}\n"
    "kernel.session.send(kernel.iopub_socket, 'display_data', content, parent=kernel.get_parent())\n"
    "print('published')"
)


class SandboxLab(JupyterLab):
    """JupyterLab with the sandboxed kernelspec on its data path and its provisioner importable;
    hardened (docs: a Content-Security-Policy, no JavaScript renderer, the script guard; the
    labextension's meta refresh guard is on in both) unless told otherwise."""

    def __init__(self, base: Path, hardened: bool = True) -> None:
        csp = f'--ServerApp.tornado_settings={{"headers": {{"Content-Security-Policy": "{HARDENED_CSP}"}}}}'
        guard = f"--ServerApp.jpserver_extensions={SCRIPT_GUARD}=True"
        super().__init__(base, extra_args=(csp, guard) if hardened else ())
        self.hardened = hardened

    def env(self) -> dict[str, str]:
        env = super().env()
        if not installed():
            env["PYTHONPATH"] = os.pathsep.join((env["PYTHONPATH"], provisioner_path()))
        return env

    def _prepare(self) -> None:
        super()._prepare()
        kernels = self.jupyter_path / "kernels"
        kernels.mkdir(parents=True, exist_ok=True)
        (kernels / KERNEL_NAME).symlink_to(KERNELS_DIR / KERNEL_NAME, target_is_directory=True)
        page_config = self.home / ".jupyter" / "labconfig" / "page_config.json"
        config = json.loads(page_config.read_text())
        if self.hardened:
            config["disabledExtensions"]["@jupyterlab/javascript-extension"] = True
        page_config.write_text(json.dumps(config))


def _lab(hardened: bool) -> Iterator[SandboxLab]:
    require_chromium()
    # not under /tmp: the sandbox has its own /tmp, so a home folder there is not what it protects
    base = Path(tempfile.mkdtemp(prefix="pj-lab-sandbox-", dir="/var/tmp"))
    server = SandboxLab(base, hardened=hardened).start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def sandbox_lab() -> Iterator[SandboxLab]:
    yield from _lab(hardened=True)


@pytest.fixture
def unhardened_lab() -> Iterator[SandboxLab]:
    yield from _lab(hardened=False)


def _page(browser: Any, lab: SandboxLab) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    try:
        yield context.new_page()
    finally:
        context.close()
        lab.shutdown_kernels()


@pytest.fixture
def sandbox_page(browser, sandbox_lab):  # type: ignore[no-untyped-def]
    yield from _page(browser, sandbox_lab)


@pytest.fixture
def unhardened_page(browser, unhardened_lab):  # type: ignore[no-untyped-def]
    yield from _page(browser, unhardened_lab)


def _notebook(lab: JupyterLab, name: str, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3 (penguin sandbox)", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path = lab.root_dir / name
    nbformat.write(nb, str(path))
    return path


def test_the_launcher_shows_the_sandboxed_kernel_and_a_penguin_cell_runs_in_it(sandbox_page, sandbox_lab):
    page = sandbox_page
    page.goto(f"{sandbox_lab.url}/lab?reset&token={sandbox_lab.token}")
    cards = page.locator(".jp-LauncherCard", has_text=re.compile(r"^Python 3 \(penguin sandbox\)$"))
    cards.first.wait_for()
    assert cards.count() >= 2  # a notebook and a console

    pwned, hits, text, cards = _run_the_cell(page, sandbox_lab)
    assert pwned is None and hits == [], (pwned, hits)
    assert cards == 0  # its provisioner judged this server hardened: auto asks nothing
    assert "Done in the sandbox." in text
    assert "penguin: this kernel runs in the penguin sandbox, and so do your own cells" in text
    assert "in the sandboxed kernel" in text and "home: Read-only file system" in text
    assert cell(page, 1).get_by_role("button", name="Approve").count() == 0
    assert (sandbox_lab.root_dir / "made-in-sandbox.txt").read_text() == "ok"
    assert not (sandbox_lab.home / "escaped.txt").exists()
    kernels = sandbox_lab.api("GET", "/api/kernels")
    assert [k["name"] for k in kernels] == [KERNEL_NAME]


def test_without_the_hardening_the_same_outputs_run_and_fetch(unhardened_page, unhardened_lab):
    """The control: the kernel's walls do not cover the browser; only the hardening does. Its
    provisioner sees no Content-Security-Policy, so each run_python asks (Approve is clicked)."""
    pwned, hits, text, cards = _run_the_cell(unhardened_page, unhardened_lab)
    assert cards == 2 and "kernel: sandboxed, browser not hardened" in text
    assert "Done in the sandbox." in text and "home: Read-only file system" in text
    assert pwned is not None or hits, "the bypass neither ran nor loaded without the hardening"


def _run_the_cell(page: Any, lab: SandboxLab) -> tuple[object, list[object], str, int]:
    """Run a `%%penguin --approve auto` cell in the sandboxed kernel whose `run_python` writes,
    then publishes around the no-fetch filter (Approve clicked on any card); what the page ran,
    what the counting server got or the page set out to navigate to (stopped in the browser,
    so the page stays), the cell's output text and the cards clicked."""
    from penguin_jupyter.testing import ScriptedModelServer

    counting = CountingServer()
    navigations: list[str] = []

    def stop_navigation(route: Any) -> None:
        if route.request.is_navigation_request():
            navigations.append(route.request.url)
            route.abort("aborted")  # no error page: the page stays where it was
        else:
            route.continue_()

    page.route(f"http://127.0.0.1:{counting.port}/**", stop_navigation)
    server = ScriptedModelServer(
        [
            {"tool_calls": [{"name": "run_python", "id": "call_py", "arguments": {"code": CODE}}], "delay_ms": 300},
            {"tool_calls": [{"name": "run_python", "id": "call_bypass", "arguments": {"code": BYPASS.format(port=counting.port)}}]},
            {"text": "Done in the sandbox."},
        ]
    ).start()
    try:
        lab.use_model_server(server)
        _notebook(lab, "sandboxed.ipynb", "%load_ext penguin_jupyter", "%%penguin --approve auto\nWrite a file here.")
        open_notebook(page, lab, "sandboxed.ipynb")
        assert page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-KernelName").inner_text() == "Python 3 (penguin sandbox)"
        run_all(page)
        header = cell(page, 1).locator(".widget-html-content", has_text="kernel: sandboxed").first  # the live header
        header.wait_for()
        header_text = header.inner_text()
        cards = _approve_until_done(page, 1)
        cell(page, 1).locator(".penguin-transcript", has_text="Done in the sandbox.").wait_for(timeout=15_000)
        text = header_text + "\n" + (cell(page, 1).locator(".jp-Cell-outputArea").text_content() or "")  # folded cards too
        time.sleep(1.0)  # an image or a script would have loaded by now
        pwned = page.evaluate("window.__pwned")
        hits = [*counting.hits, *navigations]
    finally:
        server.stop()
        counting.close()
    return pwned, hits, text, cards


def _approve_until_done(page: Any, index: int, timeout_s: float = 120.0) -> int:
    """Click Approve on each card the cell shows until it is done; how many were clicked."""
    clicked = 0
    deadline = time.monotonic() + timeout_s
    prompt = cell(page, index).locator(".jp-InputArea-prompt").filter(has_text=re.compile(r"\[\d+\]"))
    while prompt.count() == 0:
        assert time.monotonic() < deadline, "the cell did not finish"
        approve = cell(page, index).get_by_role("button", name="Approve")
        if approve.count() and approve.first.is_enabled():
            approve.first.click()
            clicked += 1
            approve.first.wait_for(state="detached")
        else:
            page.wait_for_timeout(200)
    return clicked
