"""Browser test of `examples/agent-in-notebook.ipynb`: a real JupyterLab (Debian chromium +
playwright) opens a copy of the example (with examples/data), Run All, and the scripted Task
(penguin_jupyter/testing/notebook_tools_script.py, served by the notebook's own demo model)
inserts a markdown and a code cell below its `%%penguin` cell and runs the code cell: the table
and the plot land in the inserted cell and `by_species` exists for the next cell. Then save and
Restart & Run All: the `%%penguin` cell shows its saved transcript without the model and the
inserted cell recreates the analysis. Fixtures and page helpers: tests/support/browser.py.
"""

from __future__ import annotations

import shutil
import time

import pytest

pytest.register_assert_rewrite("tests.support.browser")

from penguin_jupyter.testing.notebook_tools_script import ANALYSIS_CODE  # noqa: E402
from tests.support.browser import (  # noqa: E402  (after register_assert_rewrite)
    CURRENT_NOTEBOOK,
    REPO_ROOT,
    cell,
    open_notebook,
    run_all,
    run_menu_command,
    save,
    transcript_text,
    wait_kernel_idle,
)

pytest_plugins = ["tests.support.browser"]
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

EXAMPLE = "agent-in-notebook.ipynb"
ANSWER_START = "I added two cells below this one and ran the code cell"


def _source(notebook_cell: dict) -> str:
    source = notebook_cell["source"]
    return "".join(source) if isinstance(source, list) else source


def test_agent_in_notebook_example_inserts_and_runs_its_cells(page, lab):
    shutil.copy(REPO_ROOT / "examples" / EXAMPLE, lab.root_dir / EXAMPLE)
    shutil.copytree(REPO_ROOT / "examples" / "data", lab.root_dir / "data", dirs_exist_ok=True)
    open_notebook(page, lab, EXAMPLE)
    run_all(page)

    cells = page.locator(f"{CURRENT_NOTEBOOK} .jp-Cell")
    agent = cell(page, 2)  # code cells: load_ext, demo, %%penguin, inserted code, by_species, stop
    agent.locator(".penguin-transcript", has_text=ANSWER_START).wait_for(timeout=180_000)
    time.sleep(1.0)
    wait_kernel_idle(page, timeout_ms=120_000)

    assert cells.count() == 11, "the Task did not insert exactly two cells"
    assert "Penguins by species" in cells.nth(5).inner_text()
    inserted = cells.nth(6)
    assert "penguins.groupby" in inserted.inner_text()
    out = inserted.locator(".jp-OutputArea")
    assert "Gentoo" in out.inner_text() and "5116.7" in out.inner_text(), "no table in the inserted cell"
    assert out.locator("img").count() >= 1, "the plot did not land in the inserted cell"
    assert "Gentoo" in cell(page, 4).locator(".jp-OutputArea").inner_text(), "by_species is not in the kernel"
    transcript = transcript_text(agent.locator(".penguin-transcript"))
    for tool in ("read_notebook", "insert_cell", "run_cell"):
        assert tool in transcript

    notebook = save(page, lab.root_dir / EXAMPLE)
    assert _source(notebook["cells"][6]) == ANALYSIS_CODE
    assert notebook["metadata"]["penguin"]["session_id"].startswith("session-")

    run_menu_command(page, "Kernel", "Restart Kernel and Run All Cells…")
    page.locator(".jp-Dialog .jp-mod-accept").click()
    agent.locator(".jp-OutputArea", has_text="the model was not called").wait_for(timeout=120_000)
    time.sleep(1.0)
    wait_kernel_idle(page, timeout_ms=120_000)
    assert cells.count() == 11, "Run All asked the model again (cells were inserted again)"
    assert ANSWER_START in transcript_text(agent.locator(".penguin-transcript"))
    cell(page, 4).locator(".jp-OutputArea", has_text="Gentoo").wait_for(timeout=60_000)
    assert inserted.locator(".jp-OutputArea img").count() >= 1
