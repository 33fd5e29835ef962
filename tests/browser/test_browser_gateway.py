"""Browser test of a remote kernel: JupyterLab runs its kernels on a real Jupyter Kernel Gateway
started from another directory (tests/support/gateway.py), so the kernel gets no
`JPY_SESSION_NAME` and its working directory is the gateway's. The notebook sits in a sub-folder
of the server's root with a data file next to it: the Task's workspace is that folder (the
header says so and a command finds the data file), the notebook tools insert and run a cell, and
a fresh kernel's Run All — what Restart & Run All gives the kernel: `%load_ext` and the
`%%penguin` cell before the page's hello — shows the saved transcript without a model request.
Fixtures and page helpers: tests/support/browser.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

pytest.register_assert_rewrite("tests.support.browser")

from penguin_jupyter.notebook.link.frontend_bridge import PAGE_TARGET  # noqa: E402
from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    CURRENT_NOTEBOOK,
    JupyterLab,
    cell,
    output_text,
    require_chromium,
    run_all,
    run_menu_command,
    save,
    wait_cell_done,
    wait_kernel_idle,
)
from tests.support.gateway import KernelGateway  # noqa: E402
from tests.support.session import request_messages  # noqa: E402

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(420)]

FOLDER = "project"
NOTEBOOK = f"{FOLDER}/remote.ipynb"
CODE = "import os\nprint('kernel cwd', os.getcwd())\nrows = 3\nprint('rows', rows)"
CODE_CELL_ID = "{{match:code cell with id (\\S+) at}}"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """This module's JupyterLab: its kernels run on a kernel gateway (overrides the plugin's)."""
    require_chromium()
    base = tmp_path_factory.mktemp("gateway-lab")
    server = JupyterLab(base / "lab", windowing=None)  # JupyterLab's default windowing, covered here
    gateway = KernelGateway(base, server.penguin_home, server.home).start()  # shares the data root
    server.extra_args = list(gateway.lab_args())
    try:
        server.start()
        yield server
    finally:
        server.stop()
        gateway.stop()
        print(f"kernel gateway log (tail):\n{gateway.log_tail()}")


def _tool_texts(request: dict) -> str:
    return "\n".join(content for role, content in request_messages(request) if role == "tool")


def _wait_gateway_kernel_idle(page) -> None:
    """The kernel idle on the page; through a gateway a page's first kernel connection is sometimes
    left "Unknown" (the upstream websocket race of docs/notebook-runtime.md "Remote kernels", with
    or without penguin): reload once, as a user would."""
    try:
        wait_kernel_idle(page)
    except PlaywrightTimeoutError:
        page.reload()
        page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
        wait_kernel_idle(page, timeout_ms=120_000)


def _fresh_kernel_then_run_all(page, lab: JupyterLab) -> None:
    """Shut the notebook's kernel down on the gateway, reload the page (JupyterLab starts a new
    kernel there) and Run All: the kernel sees what Restart & Run All gives it — a fresh kernel,
    then `%load_ext` and the `%%penguin` cell sent at once, before the page's hello.

    Not the "Restart Kernel and Run All Cells…" menu item, nor a restart through the REST API
    followed by a reload: through a gateway those sometimes lose the execute requests (JupyterLab
    shows the cells `[*]`, or clears them, while the kernel is idle) — also for a notebook without
    penguin; see docs/notebook-runtime.md "Remote kernels"."""
    sessions = [s for s in lab.api("GET", "/api/sessions") if s.get("path") == NOTEBOOK]
    for session in sessions:
        lab.api("DELETE", f"/api/sessions/{session['id']}")
    page.reload()
    page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
    lab.wait_kernel_connected(NOTEBOOK)
    _wait_gateway_kernel_idle(page)
    run_all(page)


def test_remote_kernel_uses_the_notebooks_folder_and_run_all_reproduces_without_the_model(page, lab, scripted):
    folder = lab.root_dir / FOLDER
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "penguins.csv").write_text("species,bill\nAdelie,39.1\n")
    server = scripted(
        [
            {
                "tool_calls": [
                    {"name": "exec_command", "id": "call_ls", "arguments": {"cmd": "pwd; ls data"}},
                    {
                        "name": "insert_cell",
                        "id": "call_code",
                        "arguments": {"cell_type": "code", "source": CODE, "description": "Count"},
                    },
                ]
            },
            {
                "tool_calls": [
                    {
                        "name": "run_cell",
                        "id": "call_run",
                        "arguments": {"cell_id": CODE_CELL_ID, "description": "Run the count"},
                    }
                ]
            },
            {"text": "Done: 3 rows.", "delay_ms": 200},
        ]
    )
    (lab.root_dir / FOLDER).mkdir(exist_ok=True)
    path = lab.write_notebook(NOTEBOOK, "%%penguin --approve allow-all\nCount the rows")
    page.goto(lab.notebook_url(NOTEBOOK))
    page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
    lab.wait_kernel_connected(NOTEBOOK)
    _wait_gateway_kernel_idle(page)
    run_all(page)

    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for(timeout=120_000)
    expect(transcript).to_contain_text("Done: 3 rows.")  # the renderer fills the node it attached
    assert len(server.requests) == 3
    first_tools = _tool_texts(server.requests[1])
    assert str(folder) in first_tools and "penguins.csv" in first_tools, first_tools
    assert "rows 3" in _tool_texts(server.requests[2]), "run_cell's outputs did not reach the model"
    inserted = page.locator(f"{CURRENT_NOTEBOOK} .jp-CodeCell").nth(2)
    # The bridge answered from the cell's model; the page renders it on its own schedule, and the
    # cell sits below a tall transcript, where JupyterLab's content-visibility may skip it.
    inserted.scroll_into_view_if_needed()
    expect(inserted.locator(".jp-OutputArea")).to_contain_text("rows 3", timeout=15_000)
    # The kernel really is remote-like: its own working directory is the gateway's, not the folder.
    assert f"kernel cwd {folder}" not in inserted.locator(".jp-OutputArea").inner_text()
    assert str(folder) in output_text(page, 1), "the header does not name the notebook's folder"

    notebook = save(page, path)
    assert notebook["metadata"]["penguin"]["session_id"].startswith("session-")

    _fresh_kernel_then_run_all(page, lab)
    wait_cell_done(page, 2, timeout_ms=120_000)
    replayed = output_text(page, 1)
    assert "the model was not called" in replayed, replayed
    assert "Done: 3 rows." in replayed
    assert len(server.requests) == 3, "Restart & Run All through the gateway called the model again"


RESTART_NOTEBOOK = f"{FOLDER}/restart.ipynb"
KERNEL_CHANNELS = re.compile(r".*/api/kernels/[^/]+/channels.*")


def _drop_page_hellos(page) -> list[int]:
    """From now on the page's bridge hello (its comm_open to the kernel's page target) never
    reaches the kernel: what a kernel sees when the page's hello does not come in time. Every
    other message passes both ways. Returns the list the dropped messages are counted in."""
    dropped: list[int] = []
    marker = PAGE_TARGET.encode()

    def route(ws) -> None:
        server = ws.connect_to_server()

        def from_page(message) -> None:
            data = message.encode() if isinstance(message, str) else message
            if b"comm_open" in data and marker in data:
                dropped.append(len(data))
                return
            server.send(message)

        ws.on_message(from_page)
        server.on_message(ws.send)

    page.route_web_socket(KERNEL_CHANNELS, route)
    return dropped


LAST_CELL = "import uuid\nprint('run', uuid.uuid4().hex)"  # a new line on every run


def _run_all_until_done(page, attempts: int = 3) -> None:
    """Run All until the last cell printed a new line; when the upstream gateway race leaves the
    cells not run (`[*]` or `[ ]` with the kernel idle, docs/notebook-runtime.md "Remote kernels"),
    reload and Run All again, as a user does. (A reloaded page shows the saved prompts and
    outputs, so only a new output says the cells ran.)"""
    for attempt in range(attempts):
        before = output_text(page, 2) if cell(page, 2).count() else ""
        run_all(page)
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            now = output_text(page, 2)
            if now.startswith("run ") and now != before:
                wait_cell_done(page, 2)
                return
            time.sleep(0.25)
        if attempt == attempts - 1:
            raise AssertionError(f"Run All did not run the cells {attempts} times in a row")
        page.reload()
        page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
        _wait_gateway_kernel_idle(page)


def test_restart_and_run_all_then_reload_and_run_all_replays_without_the_model(page, lab, scripted):
    """Kernel ▸ Restart Kernel and Run All Cells, the page reloaded at once (what a user does when
    the upstream race of docs/notebook-runtime.md "Remote kernels" leaves the cells `[*]`; here the
    reload comes right after the restart, every time), then Run All — with the page's bridge hello
    never reaching the kernel (the hello that names the notebook came too late): the kernel
    finds its saved notebook by the cell's id in the gateway's `KERNEL_WORKING_DIR`, the completed
    `%%penguin` cell shows its saved transcript and the model gets no request."""
    server = scripted([{"text": "Counted: 3 rows.", "delay_ms": 200}, {"text": "asked again"}])
    (lab.root_dir / FOLDER).mkdir(exist_ok=True)
    path = lab.write_notebook(RESTART_NOTEBOOK, "%%penguin\nCount the rows", LAST_CELL)
    page.goto(lab.notebook_url(RESTART_NOTEBOOK))
    page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
    lab.wait_kernel_connected(RESTART_NOTEBOOK)
    _wait_gateway_kernel_idle(page)
    _run_all_until_done(page)
    transcript = cell(page, 1).locator(".penguin-transcript")
    transcript.wait_for(timeout=120_000)
    expect(transcript).to_contain_text("Counted: 3 rows.")
    assert len(server.requests) == 1
    save(page, path)

    dropped = _drop_page_hellos(page)
    run_menu_command(page, "Kernel", "Restart Kernel and Run All Cells…")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    page.reload()  # right after the restart: the page that asked for Run All is gone
    page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell").first.wait_for()
    _wait_gateway_kernel_idle(page)
    _run_all_until_done(page)
    replayed = output_text(page, 1)
    assert dropped, "the page sent no bridge hello to drop"
    assert len(server.requests) == 1, f"Run All after the reload called the model again:\n{replayed}"
    assert "the model was not called" in replayed, replayed
    assert "Counted: 3 rows." in replayed
