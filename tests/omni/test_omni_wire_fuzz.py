"""The wire JSON parser, fuzzed (issue 42, defect 3): `from_json` turns anything into an
OmniMessage or raises its one-line `ValueError`; a message it returns can be written back as
standard JSON in UTF-8 and reads back equal; `read_trace` reads any file. On 3758335 a payload
`type` that was a list or an object raised `TypeError`, deep nesting `RecursionError` (either one
in the middle of a trace crashed `read_trace`), a lone surrogate was accepted but could not be
written back as UTF-8, and `NaN` in `fidelity` was accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from penguin_jupyter import omni
from penguin_jupyter.omni import OmniMessage, from_json, loads_strict, to_dict, to_json
from penguin_jupyter.trace import read_trace
from tests.support.fuzz import bounded, hostile_text, json_values, nested

MESSAGES = [
    omni.user_text("hello"),
    omni.assistant_text("hi", fidelity={"signature": "abc", "n": 1.5}),
    omni.thinking("hmm", fidelity={"phase": "final"}),
    omni.tool_call("read_file", '{"file_path":"a.csv"}', "call_1"),
    omni.tool_call_output("1,2", "call_1"),
    omni.request_begin(),
    omni.request_end("completed"),
    omni.token_usage(omni.empty_token_counts(), omni.empty_token_counts()),
    omni.abort("aborted by user"),
    omni.compaction_begin("context", "summarize", 10, 2),
]


@st.composite
def wire_lines(draw: st.DrawFn) -> str:
    """A real message's line with one part replaced by anything, or any JSON, or any text."""
    kind = draw(st.sampled_from(["mutated", "mutated", "json", "text", "deep"]))
    if kind == "text":
        return draw(hostile_text)
    if kind == "json":
        return json.dumps(draw(json_values), ensure_ascii=draw(st.booleans()))
    if kind == "deep":
        return nested(draw(st.sampled_from([10, 500, 990, 3000])))
    data = to_dict(draw(st.sampled_from(MESSAGES)))
    target = data if draw(st.booleans()) else data["payload"]
    key = draw(st.sampled_from([*target, "fidelity", "type", "origin"]))
    target[key] = draw(json_values | hostile_text | st.just(float("nan")) | st.just(float("inf")))
    return json.dumps(data, ensure_ascii=draw(st.booleans()))


def _written_back(message: OmniMessage) -> None:
    line = to_json(message)
    line.encode("utf-8")  # strict: no lone surrogate
    loads_strict(line)  # standard JSON: no NaN or Infinity
    assert from_json(line) == message


@bounded(600)
@given(line=wire_lines())
def test_any_line_is_a_message_or_one_line_value_error(line: str) -> None:
    try:
        message = from_json(line)
    except ValueError as error:
        assert "\n" not in str(error)
        return
    _written_back(message)


@bounded(200)
@given(data=st.binary(max_size=80))
def test_any_bytes_are_a_message_or_one_line_value_error(data: bytes) -> None:
    try:
        message = from_json(data)
    except ValueError as error:
        assert "\n" not in str(error)
        return
    _written_back(message)


@bounded(60)
@given(lines=st.lists(wire_lines(), min_size=1, max_size=6), position=st.integers(0, 3))
def test_read_trace_reads_any_file(tmp_path_factory: pytest.TempPathFactory, lines: list[str], position: int) -> None:
    path = tmp_path_factory.mktemp("trace") / "t.jsonl"
    good = [to_json(m) for m in MESSAGES[:4]]
    body = [*good[:position], *lines, *good[position:]]
    path.write_bytes("\n".join(body).encode("utf-8", "surrogatepass") + b"\n\xff\xfe\n")
    records = read_trace(path)
    found = iter(to_json(m) for m in records)
    assert all(line in found for line in good)  # every good record, in order, whatever surrounds it
    for message in records:
        _written_back(message)


# --- the measured defects ---------------------------------------------------------------------

def line(payload: str) -> str:
    return '{"timestamp":"t","type":"model_msg","payload":' + payload + "}"


def text_with_fidelity(fidelity: str) -> str:
    return line('{"type":"text","role":"assistant","text":"x","fidelity":' + fidelity + "}")


@pytest.mark.parametrize("kind", ['["text"]', '{"a":1}', "[]", "3", "true"])
def test_a_payload_type_of_the_wrong_json_type_is_a_value_error(kind: str) -> None:
    with pytest.raises(ValueError, match=r"model_msg payload type must be a string"):
        from_json(line('{"type":' + kind + ',"role":"user","text":"x"}'))


@pytest.mark.parametrize("depth", [1000, 3000, 100_000])
def test_deep_nesting_is_a_value_error(depth: int) -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        from_json(text_with_fidelity(nested(depth)))


def test_a_lone_surrogate_is_repaired_and_can_be_written_back() -> None:
    message = from_json(line('{"type":"text","role":"user","text":"a\\ud800b\\ud83d\\ude00"}'))
    assert message.payload.text == "a\ufffdb\U0001f600"
    _written_back(message)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_numbers_json_does_not_have_are_refused(number: str) -> None:
    with pytest.raises(ValueError, match="not JSON"):
        from_json(text_with_fidelity('{"n":' + number + "}"))


def test_read_trace_skips_such_lines_in_the_middle(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    bad = [
        line('{"type":["text"],"role":"user","text":"x"}'),
        text_with_fidelity(nested(3000)),
        line('{"type":"text","role":"user","text":"lone \\udc80"}'),
    ]
    path.write_text("\n".join([to_json(MESSAGES[0]), *bad, to_json(MESSAGES[1])]) + "\n")
    records = read_trace(path)
    assert [m.payload.text for m in records] == ["hello", "lone \ufffd", "hi"]
