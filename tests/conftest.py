"""Shared pytest setup: every test gets a private HOME and PENGUIN_HOME so nothing touches
the developer's real ~/.penguin, and login shells stay quiet. The tests are grouped by the
package layer they test (`tests/engine/`, `tests/llm/`, `tests/notebook/`, …; real-browser tests in
`tests/browser/`); helpers shared across folders live in the `tests/support/` package, one module
per area."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PENGUIN_HOME", str(home / ".penguin" / "data"))
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "CLIENT_TYPE"):
        monkeypatch.delenv(key, raising=False)
    return home


def pytest_collection_modifyitems(config, items):
    """Run the browser tests last: Playwright's sync API keeps an event loop running on the main
    thread while its session fixture lives, which would break every asyncio test after it."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
