"""The seams registry (penguin_jupyter/seams/__init__.py, docs/seams.md): every seam module is
listed, every seam has a status line, a failed check turns a seam off with one logged line and
its reason, `PENGUIN_SDK_INTERNALS=off` turns fast paths off and nothing else, and the lines a
`%%penguin` cell shows are the rules' and protections' that are off."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

import penguin_jupyter.seams as seams
from penguin_jupyter.seams import NotInUse, Seam, all_seams, declare, off_lines, status_lines


@pytest.fixture
def scratch() -> Iterator[list[Seam]]:
    """Seams declared by a test, taken out of the registry after it."""
    made: list[Seam] = []
    yield made
    for seam in made:
        seams._SEAMS.pop(seam.name, None)


def _declare(made: list[Seam], name: str, kind: seams.Kind, problem: str | None) -> Seam:
    seam = declare(name, what="x", kind=kind, when_off=f"{name} falls back", check=lambda: problem)
    made.append(seam)
    return seam


def test_every_module_of_the_package_is_listed_and_every_seam_has_a_status_line() -> None:
    package = Path(seams.__file__).parent
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    assert modules == set(seams.SEAM_MODULES), "a seam module %penguin status would not list"
    names = [seam.name for seam in all_seams()]
    assert len(names) == len(set(names)) >= 15
    lines = status_lines()
    assert [line.split(":", 1)[0] for line in lines] == names


def test_a_failed_check_turns_the_seam_off_once_logged_and_the_cell_line_is_the_rules(
    scratch: list[Seam], caplog: pytest.LogCaptureFixture
) -> None:
    fast = _declare(scratch, "test.fast", "fast path", "the attribute moved")
    rule = _declare(scratch, "test.rule", "rule", "the method is gone")
    fine = _declare(scratch, "test.fine", "protection", None)
    with caplog.at_level(logging.INFO, logger="penguin_jupyter.seams"):
        assert not fast.enabled() and not fast.enabled() and not rule.enabled() and fine.enabled()
    assert [r.getMessage() for r in caplog.records] == [
        "penguin: test.fast is off (the attribute moved): test.fast falls back",
        "penguin: test.rule is off (the method is gone): test.rule falls back",
    ], "one line each, however often asked"
    assert fast.status_line() == "test.fast: off — the attribute moved; test.fast falls back"
    assert fine.status_line() == "test.fine: on"
    assert "penguin: test.rule is off (the method is gone): test.rule falls back" in off_lines()
    assert not [line for line in off_lines() if "test.fast" in line], "a fast path says nothing in the cell"
    fine.turn_off("one object did not fit")
    assert fine.status_line().startswith("test.fine: off — one object did not fit")


def test_the_switch_turns_fast_paths_off_without_running_their_checks(
    scratch: list[Seam], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PENGUIN_SDK_INTERNALS", "off")
    ran: list[str] = []
    fast = declare("test.switch.fast", what="x", kind="fast path", when_off="slow", check=lambda: ran.append("f"))
    rule = declare("test.switch.rule", what="x", kind="rule", when_off="said", check=lambda: ran.append("r"))
    scratch.extend([fast, rule])
    assert not fast.enabled() and rule.enabled()
    assert ran == ["r"] and fast.status_line() == "test.switch.fast: off — PENGUIN_SDK_INTERNALS=off; slow"


def test_a_seam_with_nothing_to_do_here_is_not_in_use(scratch: list[Seam]) -> None:
    def absent() -> str | None:
        raise NotInUse("its library is not imported")

    seam = declare("test.absent", what="x", kind="protection", when_off="y", check=absent)
    scratch.append(seam)
    assert seam.status_line() == "test.absent: not in use (its library is not imported)"
    assert seam.verify(None) and seam.status_line() == "test.absent: on", "a use that checked its own object"
