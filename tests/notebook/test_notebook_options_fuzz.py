"""`%%penguin` options and `%penguin` line commands, fuzzed (issue 42, defects 5 and 6): any text
either parses into values every later step can use, or is refused with the one-line
`OptionError`. Numbers are taken only as the README writes them (ASCII digits) and only within
their documented ranges. On 3758335 `%penguin rules forget ²` (or a 5,000-digit number) passed
the check and ended in a traceback, and `--python-timeout 1e306` was accepted, then
`round(inf)` raised `OverflowError` whenever run_python's definition was read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from penguin_jupyter.notebook.kernel_tools.run_python import seconds_to_ms
from penguin_jupyter.notebook.runtime.options import (
    MAX_BUDGET_USD,
    MAX_PYTHON_TIMEOUT_S,
    OPTION_PARSERS,
    OptionError,
    parse_budget,
    parse_cell_options,
    parse_line_command,
    parse_python_timeout,
)
from tests.support.fuzz import bounded, hostile_text

NUMBERS = ["0", "1", "-1", "120", "0.5", "1e306", "inf", "nan", "-0", "²", "١٢٠", "1_000", "9" * 5000, "", " 7 "]
words = st.sampled_from([*OPTION_PARSERS, "--new", "--quiet", "--rerun", "--model=a/b", "--max-turns=3", *NUMBERS])
option_lines = st.lists(words | hostile_text, max_size=6).map(" ".join) | hostile_text
COMMANDS = ["rules", "rules forget", "python-timeout", "budget", "resume", "model", "approve", "undo", "undo --task", "status", "help"]
command_lines = st.tuples(st.sampled_from(COMMANDS), st.lists(st.sampled_from(NUMBERS) | hostile_text, max_size=2)).map(
    lambda parts: " ".join([parts[0], *parts[1]])
) | hostile_text


def _one_line(error: OptionError) -> None:
    assert str(error).startswith("penguin: ") and "\n" not in str(error)


@bounded(400)
@given(line=option_lines)
def test_any_option_line_is_usable_values_or_one_line(line: str) -> None:
    try:
        opts = parse_cell_options(line)
    except OptionError as error:
        _one_line(error)
        return
    if opts.python_timeout_s is not None:
        assert 0 <= opts.python_timeout_s <= MAX_PYTHON_TIMEOUT_S
        seconds_to_ms(opts.python_timeout_s)  # what run_python's definition does with it
    if opts.max_turns is not None:
        assert opts.max_turns == -1 or 1 <= opts.max_turns < 10**9
    if opts.budget_usd is not None:
        assert 0 < opts.budget_usd <= MAX_BUDGET_USD


@bounded(400)
@given(line=command_lines)
def test_any_line_command_is_usable_values_or_one_line(line: str) -> None:
    try:
        command = parse_line_command(line)
    except OptionError as error:
        _one_line(error)
        return
    if command.name == "rules" and command.arg is not None:
        assert 0 <= int(command.arg) < 10**9  # what `rules forget N` does with it
    if command.name == "python-timeout":
        seconds_to_ms(parse_python_timeout(command.arg or ""))


@pytest.mark.parametrize("number", ["²", "١", "9" * 5000, "-3", "1.0"])
def test_rules_forget_takes_only_a_rule_number(number: str) -> None:
    with pytest.raises(OptionError, match=r"^penguin: usage: %penguin rules \[forget N\]$"):
        parse_line_command(f"rules forget {number}")
    assert parse_line_command("rules forget 12").arg == "12"


@pytest.mark.parametrize("value", ["1e306", "1e3", "inf", "604801", "١٢٠", "1_000", "-1", "nan"])
def test_python_timeout_outside_its_documented_range_is_refused(value: str) -> None:
    for parse in (lambda: parse_cell_options(f"--python-timeout {value}"), lambda: parse_line_command(f"python-timeout {value}")):
        with pytest.raises(OptionError, match=r"from 0 to 604800 \(0 = no limit\)"):
            parse()
    assert parse_python_timeout("604800") == 604800 and parse_python_timeout("2.5") == 2.5


@pytest.mark.parametrize("value", ["١٢", "1_0", "9" * 5000, "0", "-2"])
def test_max_turns_takes_ascii_integers(value: str) -> None:
    with pytest.raises(OptionError, match=r"^penguin: --max-turns"):
        parse_cell_options(f"--max-turns {value}")


@pytest.mark.parametrize("value", ["-1", "0", "abc", "1e3", "1_000", "inf", "nan", "1e400", "²", "1000001", "", "$"])
def test_a_budget_outside_plain_positive_usd_is_one_line(value: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse_budget(value)
    _one_line(caught.value)
    assert parse_budget("0.50") == 0.5 and parse_budget("$2") == 2.0 and parse_budget("1000000") == MAX_BUDGET_USD
