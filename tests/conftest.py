"""Shared pytest setup: every test gets a private HOME and PENGUIN_HOME so nothing touches
the developer's real ~/.penguin, and login shells stay quiet. The tests are grouped by the
package layer they test (`tests/engine/`, `tests/llm/`, `tests/notebook/`, …; real-browser tests in
`tests/browser/`); helpers shared across folders live in the `tests/support/` package, one module
per area.

Property-based tests (the `*_fuzz.py` files) run under one fixed hypothesis profile, `penguin`:
derandomized and without an example database, so every run (CI included) tries the same
examples; each test bounds its own `max_examples` (`tests.support.fuzz.bounded`).
`PENGUIN_HYPOTHESIS_PROFILE=explore` draws fresh random examples, ten times as many, to look for
new failures locally."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "penguin",
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=10),  # a bound for a runaway example, far above a loaded machine's
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("explore", parent=settings.get_profile("penguin"), derandomize=False)
settings.load_profile(os.environ.get("PENGUIN_HYPOTHESIS_PROFILE", "penguin"))


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
