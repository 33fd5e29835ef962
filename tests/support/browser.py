"""Browser test support: a real `jupyter lab` on 127.0.0.1 driven by Debian chromium via playwright.

Owns the session-scoped JupyterLab server (private HOME, PENGUIN_HOME and root dir; the repo on
the kernel's PYTHONPATH; the repo's built labextension on JUPYTER_PATH), the chromium browser,
one fresh page per test with a screenshot under `test-artifacts/` when the test fails (the
`pytest_runtest_makereport` hook below; test modules load this file with `pytest_plugins`), a
per-test ScriptedModelServer wired in as the project's default model, and small JupyterLab
page helpers (open a notebook, run all, save, kernel toolbar, output text). The tests
themselves live in `tests/test_browser*.py`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer
from tests.support.paths import REPO_ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BUILT_LABEXTENSION = REPO_ROOT / "penguin_jupyter" / "labextension"
ARTIFACTS = REPO_ROOT / "test-artifacts"
PROVIDER = "openai"
MODEL_ID = "scripted-model"
API_KEY = "sk-browser-secret"
TRANSCRIPT_MIME = "application/vnd.penguin.transcript+json"
INTERRUPTED_LINE = "penguin: task interrupted — the next %%penguin cell continues the session"
PAGE_TIMEOUT_MS = 60_000
CURRENT_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
CURRENT_NOTEBOOK = f"{CURRENT_PANEL} .jp-Notebook"
_REPORT_KEY = pytest.StashKey[dict[str, pytest.TestReport]]()


def require_chromium() -> None:
    if not os.path.exists(CHROMIUM):
        pytest.skip(
            f"{CHROMIUM} is absent: install Debian chromium (scripts/setup.sh --test) to run browser tests"
        )


# --- failure screenshots -------------------------------------------------------------------
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    item.stash.setdefault(_REPORT_KEY, {})[report.when] = report
    return report


def node_failed(request: pytest.FixtureRequest) -> bool:
    reports = request.node.stash.get(_REPORT_KEY, {})
    return any(r.failed for r in reports.values())


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# --- the JupyterLab server -----------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    """`jupyter lab` in its own process group, on a random loopback port with a token."""

    def __init__(
        self,
        base: Path,
        extra_args: tuple[str, ...] = (),
        rtc: bool = False,
        frontend: str = "lab",
        windowing: str | None = "none",
    ) -> None:
        self.base = base
        # The notebook's windowingMode. JupyterLab's default, "contentVisibility", styles cells
        # `content-visibility: auto`, and Chromium's innerText of such a cell off screen is ''
        # (measured): a test reading an inserted cell's text would see nothing when it sits below
        # a tall transcript. The tests render every cell; None keeps JupyterLab's default.
        self.windowing = windowing
        self.frontend = frontend  # "lab" (JupyterLab) or "notebook" (Notebook 7, the `notebook` package)
        self.extra_args = list(extra_args)  # e.g. --gateway-url (tests/support/gateway.py)
        self.rtc = rtc  # real-time collaboration (jupyter-collaboration), off unless asked for
        self.root_dir = base / "root"
        self.home = base / "home"
        self.penguin_home = self.home / ".penguin" / "data"
        self.jupyter_path = base / "jupyter-path"
        for path in (self.root_dir, self.home, self.penguin_home, self.jupyter_path):
            path.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.token = "penguin-browser-" + os.urandom(8).hex()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = base / "jupyter-lab.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            HOME=str(self.home),
            PENGUIN_HOME=str(self.penguin_home),
            PYTHONPATH=os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p),
            # Added to (not replacing) the data path: the venv's widgets extension stays visible.
            JUPYTER_PATH=os.pathsep.join(
                p for p in (str(self.jupyter_path), env.get("JUPYTER_PATH", "")) if p
            ),
        )
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY"):
            env.pop(key, None)
        return env

    def _prepare(self) -> None:
        if not (BUILT_LABEXTENSION / "package.json").is_file():
            raise RuntimeError(
                f"the labextension is not built ({BUILT_LABEXTENSION} is missing): run `pip install -e .`"
            )
        link = self.jupyter_path / "labextensions" / "penguin-jupyter"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(BUILT_LABEXTENSION, target_is_directory=True)
        # No news/update pop-ups over the notebook (they would also try to reach the network).
        labconfig = self.home / ".jupyter" / "labconfig"
        labconfig.mkdir(parents=True, exist_ok=True)
        (labconfig / "page_config.json").write_text(
            json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
        )
        # The notebook names its kernel: start it without the "Select Kernel" dialog.
        tracker = self.home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
        tracker.mkdir(parents=True, exist_ok=True)
        settings: dict[str, object] = {"autoStartDefaultKernel": True}
        if self.windowing is not None:
            settings["windowingMode"] = self.windowing
        (tracker / "tracker.jupyterlab-settings").write_text(json.dumps(settings))

    def start(self, timeout: float = 90.0) -> JupyterLab:
        self._prepare()
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            self.frontend,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.news_url=",
            *self.extra_args,
            f"--YDocExtension.disable_rtc={not self.rtc}",
            # window.jupyterapp: tests read the notebook model
            "--JupyterNotebookApp.expose_app_in_browser=True"
            if self.frontend == "notebook"
            else "--LabApp.expose_app_in_browser=True",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                cmd,
                cwd=self.root_dir,
                env=self.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited ({self.proc.returncode}):\n{self.log_tail()}")
            with contextlib.suppress(OSError):
                if self.api("GET", "/api/status") is not None:
                    return self
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f}s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def api(self, method: str, path: str) -> Any:
        request = urllib.request.Request(
            self.url + path, method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else {}

    def wait_kernel_connected(self, notebook: str, timeout: float = 60.0) -> None:
        """Until the notebook's kernel is idle and a websocket (the page) is connected to it."""
        deadline = time.monotonic() + timeout
        kernel: dict[str, Any] = {}
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                for session in self.api("GET", "/api/sessions"):
                    if session.get("path") == notebook and session.get("kernel"):
                        kernel = self.api("GET", f"/api/kernels/{session['kernel']['id']}")
                        if kernel.get("connections", 0) >= 1 and kernel.get("execution_state") == "idle":
                            return
            time.sleep(0.25)
        raise AssertionError(f"the kernel of {notebook} never became idle and connected: {kernel}")

    def shutdown_kernels(self) -> None:
        """Delete every session (and so its kernel): each test leaves a quiet server behind."""
        with contextlib.suppress(OSError, ValueError):
            for session in self.api("GET", "/api/sessions"):
                with contextlib.suppress(OSError):
                    self.api("DELETE", f"/api/sessions/{session['id']}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.shutdown_kernels()
        pgid = os.getpgid(self.proc.pid)
        os.killpg(pgid, signal.SIGTERM)  # the server shuts its kernels down on SIGTERM
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def notebook_url(self, name: str) -> str:
        """`name` alone in a fresh, reset workspace (no tabs restored from earlier tests); in
        Notebook 7, its own page."""
        if self.frontend == "notebook":
            return f"{self.url}/notebooks/{name}?token={self.token}"
        workspace = re.sub(r"[^A-Za-z0-9]+", "-", name)
        return f"{self.url}/lab/workspaces/{workspace}/tree/{name}?reset&token={self.token}"

    def use_model_server(self, server: ScriptedModelServer) -> None:
        """Make `server` the default model of the default project (read when a session starts)."""
        add_model(
            self.penguin_home,
            "default_project",
            provider=PROVIDER,
            model_id=MODEL_ID,
            base_url=server.url,
            api_key=API_KEY,
            client_type="openai-chat",
            context_window=32768,
            default=True,
        )

    def write_notebook(self, name: str, *penguin_cells: str) -> Path:
        """A notebook: `%load_ext penguin_jupyter`, then one code cell per `penguin_cells` entry."""
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.cells = [
            nbformat.v4.new_code_cell(source) for source in ("%load_ext penguin_jupyter", *penguin_cells)
        ]
        path = self.root_dir / name
        nbformat.write(nb, str(path))
        return path


# --- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    require_chromium()
    server = JupyterLab(tmp_path_factory.mktemp("jupyterlab")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def lab_rtc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """A second server with real-time collaboration on (skips without jupyter-collaboration)."""
    require_chromium()
    pytest.importorskip("jupyter_collaboration", reason="jupyter-collaboration is not installed")
    server = JupyterLab(tmp_path_factory.mktemp("jupyterlab-rtc"), rtc=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def notebook7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """A `jupyter notebook` (Notebook 7) server (skips without the `notebook` package)."""
    require_chromium()
    pytest.importorskip("notebook.app", reason="the notebook package (Notebook 7) is not installed")
    server = JupyterLab(tmp_path_factory.mktemp("notebook7"), frontend="notebook").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any, lab: JupyterLab, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        if node_failed(request):
            with contextlib.suppress(Exception):
                path = screenshot(page, request.node.name)
                print(f"screenshot of the failing page: {path}")
            print(f"jupyter lab log (tail):\n{lab.log_tail()}")
        context.close()
        lab.shutdown_kernels()


@pytest.fixture
def windows(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """`windows(lab)` → a fresh page in its own browser context (another window, or another
    collaborator); all are closed (and the server's kernels shut down) after the test."""
    opened: list[tuple[Any, Any, JupyterLab]] = []

    def new(server: JupyterLab) -> Any:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        window = context.new_page()
        opened.append((context, window, server))
        return window

    try:
        yield new
    finally:
        for number, (context, window, server) in enumerate(opened):
            if node_failed(request):
                with contextlib.suppress(Exception):
                    print(f"screenshot of window {number}: {screenshot(window, f'{request.node.name}-{number}')}")
                print(f"jupyter lab log (tail):\n{server.log_tail()}")
            with contextlib.suppress(Exception):
                context.close()
        for server in dict.fromkeys(server for _c, _w, server in opened):
            server.shutdown_kernels()


@pytest.fixture
def scripted(lab: JupyterLab) -> Iterator[Any]:
    """`scripted(entries)` → a started ScriptedModelServer that the next kernel session uses."""
    servers: list[ScriptedModelServer] = []

    def start(entries: list[dict[str, Any]]) -> ScriptedModelServer:
        server = ScriptedModelServer(entries).start()
        servers.append(server)
        lab.use_model_server(server)
        return server

    try:
        yield start
    finally:
        for server in servers:
            server.stop()


# --- page helpers --------------------------------------------------------------------------
def open_notebook(page: Any, lab: JupyterLab, name: str) -> None:
    """Open `name` and wait until its kernel is idle, with the page's websocket attached."""
    page.goto(lab.notebook_url(name))
    page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
    lab.wait_kernel_connected(name)
    wait_kernel_idle(page)


def wait_kernel_idle(page: Any, timeout_ms: int = PAGE_TIMEOUT_MS) -> None:
    page.wait_for_function(
        """() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            const status = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
            return status && status.getAttribute('data-status') === 'idle';
        }""",
        timeout=timeout_ms,
    )


def run_menu_command(page: Any, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(menu)}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).first.click()


def run_all(page: Any, timeout_ms: int = 30_000) -> None:
    """Run ▸ Run All Cells, then wait until the first cell has started (`[*]` or `[n]`)."""
    run_menu_command(page, "Run", "Run All Cells")
    cell(page, 0).locator(".jp-InputArea-prompt").filter(has_text=re.compile(r"\[(\*|\d+)\]")).wait_for(
        timeout=timeout_ms
    )


def interrupt_from_toolbar(page: Any) -> None:
    """The notebook toolbar's ■ button (Interrupt the kernel)."""
    page.locator(
        f"{CURRENT_PANEL} .jp-NotebookPanel-toolbar [data-command='notebook:interrupt-kernel']"
    ).click()


def save(page: Any, path: Path, expect: str = TRANSCRIPT_MIME, timeout: float = 30.0) -> dict[str, Any]:
    """Ctrl+S in the notebook, then wait until the file on disk holds `expect`."""
    page.locator(CURRENT_NOTEBOOK).first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, json.JSONDecodeError):
            text = path.read_text()
            if expect in text:
                return json.loads(text)
        time.sleep(0.2)
    raise AssertionError(f"{path.name} was not saved with {expect} within {timeout:.0f}s")


def transcript_text(transcript: Any, timeout_ms: int = PAGE_TIMEOUT_MS) -> str:
    """A static transcript's text once the renderer has filled it: the output node is there a
    moment before its content (a loaded CI run read '' twice)."""
    transcript.wait_for(timeout=timeout_ms)
    transcript.page.wait_for_function(
        "el => el.innerText.trim().length > 0", arg=transcript.element_handle(), timeout=timeout_ms
    )
    text: str = transcript.inner_text()
    return text


def run_cell_at(page: Any, index: int) -> None:
    """Click into code cell `index` and run it (Shift+Enter)."""
    cell(page, index).locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def cell_sources(page: Any) -> list[str]:
    """Every cell's source in the current notebook's model (what the page holds, unsaved too)."""
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.map(c => c.getSource())"
    )


def cell(page: Any, index: int) -> Any:
    return page.locator(f"{CURRENT_NOTEBOOK} .jp-CodeCell").nth(index)


def wait_cell_done(page: Any, index: int, timeout_ms: int = PAGE_TIMEOUT_MS) -> None:
    """Wait until the cell's prompt shows an execution count (not `[*]` or empty)."""
    cell(page, index).locator(".jp-InputArea-prompt").filter(has_text=re.compile(r"\[\d+\]")).wait_for(
        timeout=timeout_ms
    )


def output_text(page: Any, index: int) -> str:
    return cell(page, index).locator(".jp-Cell-outputArea").inner_text()


def ps_lines(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


def nbconvert_html(path: Path, lab: JupyterLab) -> str:
    out_dir = path.parent / "converted"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--to",
            "html",
            "--output-dir",
            str(out_dir),
            str(path),
        ],
        check=True,
        capture_output=True,
        env=lab.env(),
        timeout=120,
    )
    return (out_dir / (path.stem + ".html")).read_text()


def copy_to_docs(source: Path, name: str) -> Path:
    target = REPO_ROOT / "docs" / name
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(source, target)
    return target


def docs_shot(page: Any, name: str) -> Path:
    """A screenshot in test-artifacts/; with PENGUIN_DOCS_SCREENSHOTS=1 also docs/<name>.png."""
    path = screenshot(page, name)
    if os.environ.get("PENGUIN_DOCS_SCREENSHOTS") == "1":
        copy_to_docs(path, f"{name}.png")
    return path
