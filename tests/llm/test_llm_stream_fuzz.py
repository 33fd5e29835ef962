"""Fuzzed provider streams (issue 42): whatever a provider streams, a request ends with one outcome
and one-line message, every message it yields can be written as UTF-8 JSON, and a well-formed
answer — any text, any parallel tool calls, interleaved or not — arrives exactly.

The scripted model server serves hypothesis-drawn entries (hostile text with lone surrogates,
tool calls with arbitrary JSON arguments or broken argument text, interleaved deltas, unreadable
`data:` lines, dropped connections, mid-stream errors) in every protocol, through the real
`GenerativeModel`; the event translator alone gets arbitrary well-typed event sequences.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from penguin_jupyter.llm import EventTranslator, GenerativeModel
from penguin_jupyter.omni import repair_strings, repair_surrogates, to_json, user_text
from penguin_jupyter.testing import ScriptedModelServer
from tests.llm.test_llm_stream_shapes import CLIENTS, Client
from tests.support.fuzz import bounded, hostile_text, json_values
from tests.support.llm import collect

NAMES = st.sampled_from(["read_file", "exec_command", "f", "tool_with_a_long_name"])
arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
tool_calls = st.lists(st.fixed_dictionaries({"name": NAMES, "arguments": arguments}), max_size=3)
UNREADABLE_DATA = ["42", "null", "[]", '"s"', "{not json", "\udcff\udcfe", '{"choices":[{"index":0,"delta":null}]}']
faults = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "kind": st.just("malformed"),
            "after": st.integers(0, 6),
            "data": st.sampled_from(UNREADABLE_DATA) | st.text(max_size=20).filter(lambda t: "\n" not in t and "\r" not in t),
        }
    ),
    st.fixed_dictionaries({"kind": st.just("drop"), "after": st.integers(0, 6)}),
    st.fixed_dictionaries(
        {"kind": st.just("error_event"), "after": st.integers(0, 6), "status": st.sampled_from([400, 429, 500])}
    ),
)


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "text": draw(st.lists(hostile_text.filter(bool), max_size=4)),
        "tool_calls": draw(tool_calls),
        "interleave_tool_calls": draw(st.booleans()),
        "chunk": draw(st.integers(1, 9)),
        "fault": draw(faults),
    }
    if not entry["text"] and not entry["tool_calls"]:
        entry["text"] = ["x"]
    if draw(st.booleans()):
        entry["reasoning"] = draw(st.lists(hostile_text.filter(bool), min_size=1, max_size=2))
    return entry


class Streamer:
    def __init__(self, client: Client, server: ScriptedModelServer) -> None:
        self.client = client
        self.server = server
        self.runner = asyncio.Runner()
        self.models: list[GenerativeModel] = []  # kept until the loop closes (their SDK clients close with it)

    def request(self, entry: dict[str, Any]) -> tuple[list, Any]:
        self.server.add(entry)
        model = self.client.model(self.server)
        self.models.append(model)
        return self.runner.run(collect(model, [user_text("go")]))


@pytest.fixture(scope="module", params=CLIENTS, ids=[c.label for c in CLIENTS])
def streamer(request) -> Iterator[Streamer]:
    client: Client = request.param
    with ScriptedModelServer([], model=client.model_id) as server:
        streamer = Streamer(client, server)
        try:
            yield streamer
        finally:
            streamer.runner.close()


def test_any_stream_ends_in_one_outcome_with_one_readable_line(streamer: Streamer) -> None:
    @bounded(25)
    @given(entry=entries())
    def run(entry: dict[str, Any]) -> None:
        messages, outcome = streamer.request(entry)
        for message in messages:
            to_json(message).encode("utf-8")  # nothing the provider sent fails to encode
        fault = entry["fault"]
        if fault is None:
            assert outcome.status == "completed", outcome
            _check_answer(entry, messages)
            return
        message = outcome.message or ""
        assert "\n" not in message and "Traceback" not in message, outcome
        expected = {"malformed": ("malformed", "completed"), "drop": ("timeout", "malformed", "completed")}.get(
            fault["kind"], ("failed", "timeout", "completed", "malformed")
        )
        assert outcome.status in expected, (fault, outcome)

    run()


def _check_answer(entry: dict[str, Any], messages: list) -> None:
    """The text and every tool call arrive exactly (lone surrogates as U+FFFD)."""
    texts = "".join(m.payload.text for m in messages if m.payload.type == "text")
    assert texts == "".join(repair_surrogates(delta) for delta in entry["text"])  # each text is one delta
    calls = [m.payload for m in messages if m.payload.type == "tool_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        (c["name"], repair_strings(c["arguments"])) for c in entry["tool_calls"]
    ]


# --- the event translator alone ----------------------------------------------------------------

valid_text = st.text(max_size=12)
items = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": valid_text}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": valid_text}),
    st.fixed_dictionaries(
        {
            "type": st.just("partial_tool_call"),
            "tool_call_id": st.sampled_from(["", "a", "b"]),
            "name": st.sampled_from(["", "f", "g"]),
            "arguments": valid_text,
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("tool_call"),
            "tool_call_id": st.sampled_from(["", "a", "b", "c"]),
            "name": st.sampled_from(["f", "g"]),
            "arguments": st.none() | arguments.map(repair_strings),
        }
    ),
)
fidelities = st.none() | st.fixed_dictionaries({"signature": st.text(max_size=4)}) | st.fixed_dictionaries(
    {"phase": st.sampled_from(["commentary", "final"])}
)


@st.composite
def events(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(0, 8))):
        content = draw(st.lists(items, max_size=3))
        fidelity = draw(fidelities)
        if content and fidelity:
            content[-1] = {**content[-1], "fidelity": fidelity}
        out.append({"content_items": content, "finish_reason": None, "usage_metadata": None})
    out.append({"content_items": [], "finish_reason": draw(st.sampled_from(["stop", "tool_call", "length"])),
                "usage_metadata": {"prompt_tokens": 1, "response_tokens": 1}})
    return out


@bounded(300)
@given(stream=events(), interrupted=st.booleans())
def test_the_translator_takes_any_event_sequence(stream: list[dict[str, Any]], interrupted: bool) -> None:
    translator = EventTranslator()
    out = []
    for event in stream:
        out.extend(translator.push_event(event))
    out.extend(translator.finish_interrupted("aborted") if interrupted else translator.finish())
    for message in out:
        to_json(message).encode("utf-8")
    starts = [m for m in out if m.payload.type.startswith("partial_") and m.payload.event_type == "start"]
    stops = [m for m in out if m.payload.type.startswith("partial_") and m.payload.event_type == "stop"]
    assert len(starts) == len(stops)  # every partial segment is closed
    ids = [m.payload.tool_call_id for m in out if m.payload.type == "tool_call"]
    assert len(ids) == len(set(ids))  # one complete call per allocated id
