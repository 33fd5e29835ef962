"""Browser-level test (notebook-design.md §7): a real `jupyter lab` on 127.0.0.1 driven by Debian
chromium through playwright. Run a `%%penguin` cell against the scripted demo model, click
Approve on the live card, save, reload, and check the static transcript is what remains."""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from tests.support_kernel import kernel_env

pytestmark = pytest.mark.browser
CHROMIUM = "/usr/bin/chromium"
FINAL_TEXT = "Done — I read"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (bash scripts/setup.sh --test installs it)")
    token, port = secrets.token_hex(12), _free_port()
    env = kernel_env({"HOME": str(tmp_path / "home")})
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={tmp_path}",
            "--LabApp.news_url=",
            "--ServerApp.disable_check_xsrf=True",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.terminate()
        pytest.fail("jupyter lab did not start: " + (tmp_path / "lab.log").read_text()[-2000:])
    try:
        yield base, token, tmp_path
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _dismiss_dialogs(page) -> None:
    for _ in range(3):
        dialog = page.locator(".jp-Dialog .jp-mod-accept")
        if not dialog.count():
            return
        dialog.first.click()
        time.sleep(1)


def test_approve_in_jupyterlab_then_the_saved_notebook_holds_the_transcript(lab):
    from playwright.sync_api import sync_playwright

    base, token, root = lab
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext penguin_jupyter\nfrom penguin_jupyter.notebook.demo import start_demo_model\n"
            "demo = start_demo_model()"
        ),
        nbformat.v4.new_code_cell("%%penguin --approve read-only\nSummarize sales.csv into summary.md."),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / "browser.ipynb")
    shots = root / "screenshots"
    shots.mkdir()
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1100})
            page.goto(f"{base}/lab/tree/browser.ipynb?token={token}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90000)
            time.sleep(3)
            _dismiss_dialogs(page)
            page.locator(".jp-Cell").first.click()
            page.keyboard.press("Shift+Enter")
            page.wait_for_selector(".jp-Cell >> nth=0 >> .jp-InputPrompt:has-text('[1]')", timeout=90000)
            page.keyboard.press("Shift+Enter")
            approvals = 0
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if page.locator(f".jp-OutputArea:has-text('{FINAL_TEXT}')").count():
                    break
                button = page.locator(".jp-OutputArea button:has-text('Approve'):not([disabled])")
                if button.count():
                    if approvals == 0:
                        page.screenshot(path=str(shots / "live-approval.png"), full_page=True)
                    button.first.click()
                    approvals += 1
                    time.sleep(1)
                time.sleep(0.3)
            assert approvals == 2, "exec_command and write_file (rw) ask; read_file (r) is auto-approved"
            page.wait_for_selector(f".jp-OutputArea:has-text('{FINAL_TEXT}')", timeout=60000)
            page.screenshot(path=str(shots / "final.png"), full_page=True)
            assert not page.locator(".jp-OutputArea button:has-text('Approve')").count()
            page.keyboard.press("Control+s")
            time.sleep(3)
            page.reload()
            page.wait_for_selector(f".jp-OutputArea:has-text('{FINAL_TEXT}')", timeout=90000)
            page.screenshot(path=str(shots / "reloaded.png"), full_page=True)
        finally:
            browser.close()
    assert (root / "summary.md").read_text(encoding="utf-8").startswith("# Sales summary")
    saved = nbformat.read(root / "browser.ipynb", as_version=4)
    outputs = saved.cells[1].outputs
    assert any("application/vnd.penguin.transcript+json" in o.get("data", {}) for o in outputs)
    shutil.rmtree(root / "home", ignore_errors=True)
