"""A damaged trace resumes into a history every provider accepts (issue 42, defect 1).

Real sessions (parallel tool calls, thinking, three Tasks) are recorded against the scripted
model server in each wire protocol; their trace files are then damaged — cut at every byte
offset of their last lines, lines duplicated, swapped, deleted, garbage lines inserted (bytes
that are not UTF-8, JSON of the wrong types, lone surrogate escapes, deep nesting, NaN) — and each
damaged file is read and replayed the way `resume_session` does, and its first request is sent
through the real `GenerativeModel` to a server that validates it as the provider would. Reading
never raises, and every request the resumed history makes is accepted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from penguin_jupyter import create_agent
from penguin_jupyter.interfaces import LLMOutcome
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import OmniMessage, to_json, tool_call, tool_call_output, user_text
from penguin_jupyter.state import add_model
from penguin_jupyter.testing import ScriptedModelServer
from penguin_jupyter.trace import parse_trace_lines, resume_trace
from tests.support.fuzz import bounded, nested
from tests.support.llm import collect

KEY = "sk-fuzz"
TWO_CALLS = {
    "reasoning": "Both files are needed.",
    "tool_calls": [
        {"name": "read_file", "arguments": {"file_path": "a.csv"}},
        {"name": "read_file", "arguments": {"file_path": "b.csv"}},
    ],
}
ONE_CALL = {"reasoning": "One more look.", "tool_calls": [{"name": "read_file", "arguments": {"file_path": "a.csv"}}]}
SCRIPT = [
    TWO_CALLS,
    {"reasoning": "Now I can answer.", "text": "Both have 2 rows."},
    ONE_CALL,
    {"reasoning": "Done.", "text": "a.csv starts with x."},
    {"reasoning": "Easy.", "text": "Goodbye."},
]
PROMPTS = ["How many rows do a.csv and b.csv have?", "And the first column of a.csv?", "Thanks!"]


@dataclass(frozen=True)
class Protocol:
    label: str
    model_id: str
    client_type: str | None
    provider_root: bool

    def base_url(self, server: ScriptedModelServer) -> str:
        return server.root_url if self.provider_root else server.url


PROTOCOLS = [
    Protocol("openai-chat", "any-model", "openai-chat", False),
    Protocol("openai-responses", "gpt-5.5", None, False),
    Protocol("anthropic", "claude-sonnet-4-6", None, True),
    Protocol("gemini", "gemini-3-flash", None, True),
]


async def _allow(_call: OmniMessage) -> str:
    return "allow"


async def _record(protocol: Protocol, root: Path, server: ScriptedModelServer) -> bytes:
    """The trace of a real three-Task session with parallel tool calls and thinking."""
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "a.csv").write_text("x,y\n1,2\n")
    (workspace / "b.csv").write_text("x,y\n3,4\n")
    add_model(
        root,
        "default_project",
        provider="fuzz",
        model_id=protocol.model_id,
        base_url=protocol.base_url(server),
        api_key=KEY,
        client_type=protocol.client_type,
        context_window=200_000,
        default=True,
    )
    agent = await create_agent(root=root)
    session = await agent.create_session(workspace_dir=workspace)
    for prompt in PROMPTS:
        async for _ in session.run([user_text(prompt)], approve=_allow):
            pass
    await session.aclose()
    return Path(session.trace_path).read_bytes()


class Resumer:
    """Replays damaged trace texts and sends each distinct resumed history's first request."""

    def __init__(self, protocol: Protocol, server: ScriptedModelServer, trace: bytes, tools: list) -> None:
        self.protocol = protocol
        self.server = server
        self.trace = trace
        self.tools = tools
        self.runner = asyncio.Runner()
        self.checked: dict[str, str | None] = {}
        self.models: list[GenerativeModel] = []  # kept until the loop closes (their SDK clients close with it)

    def lines(self) -> list[bytes]:
        return self.trace.split(b"\n")

    def check(self, data: bytes) -> None:
        """Read and replay `data` as a trace file; its first request must be accepted."""
        parsed = parse_trace_lines(data.decode("utf-8", errors="replace"))
        replay = resume_trace(parsed.messages)
        if replay.meta is None:
            return  # resume refuses with one line (no session_meta): nothing is sent
        first = [*([replay.pending_summary] if replay.pending_summary else []), *replay.carry_over]
        key = json.dumps([to_json(m) for m in [*replay.history, *first]])
        if key not in self.checked:
            self.checked[key] = self.runner.run(self._first_request(replay.history, first))
        if self.checked[key] is not None:
            Path("/tmp/fz/failed.jsonl").write_bytes(data)
        assert self.checked[key] is None, self.checked[key]

    async def _first_request(self, history: list[OmniMessage], first: list[OmniMessage]) -> str | None:
        self.server.add({"text": "ok"})
        model = GenerativeModel(
            GenerativeModelConfig(
                model_id=self.protocol.model_id,
                client_type=self.protocol.client_type,
                api_key=KEY,
                base_url=self.protocol.base_url(self.server),
                tools=self.tools,
                thinking_level="medium",
            )
        )
        self.models.append(model)
        model.set_history(history)
        _, outcome = await collect(model, [*first, user_text("continue")])
        if outcome == LLMOutcome("completed"):
            return None
        refusals = [call.error for call in self.server.calls[-1:] if call.error]
        return f"{outcome.status}: {outcome.message} {refusals}"

    def close(self) -> None:
        self.runner.close()


@pytest.fixture(scope="module", params=PROTOCOLS, ids=[p.label for p in PROTOCOLS])
def resumer(request, tmp_path_factory) -> Iterator[Resumer]:
    protocol: Protocol = request.param
    root = tmp_path_factory.mktemp(f"fuzz-{protocol.label}")
    with ScriptedModelServer(SCRIPT, model=protocol.model_id, api_key=KEY) as server:
        trace = asyncio.run(_record(protocol, root, server))
        assert server.remaining == [] and all(call.error is None for call in server.calls)
        tools = [spec for spec in _recorded_tools(trace)]
        resumer = Resumer(protocol, server, trace, tools)
        try:
            yield resumer
        finally:
            resumer.close()


def _recorded_tools(trace: bytes) -> list[dict]:
    for line in trace.split(b"\n"):
        if b'"tool_list_ready"' in line:
            tools = json.loads(line)["payload"]["tools"]
            return [{"name": t["name"], "description": t["description"], "parameters": t["parameters"]} for t in tools]
    raise AssertionError("the recorded trace has no tool_list_ready")


def test_the_undamaged_trace_resumes_and_is_accepted(resumer: Resumer) -> None:
    resumer.check(resumer.trace)
    assert len(resumer.lines()) > 20


def test_cut_at_every_byte_offset_of_the_last_lines(resumer: Resumer) -> None:
    """A crash mid-write leaves the file cut anywhere: every offset in the last six lines."""
    data = resumer.trace.rstrip(b"\n")
    starts = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    for offset in range(starts[-6], len(data) + 1):
        resumer.check(data[:offset])


GARBAGE = [
    b"\xff\xfe\x00garbage",
    b'{"type":"model_msg","payload":{"type":["tool_call"]}}',
    b'{"type":"event_msg","payload":{"type":{"x":1}}}',
    b'{"type":"model_msg","payload":{"type":"text","role":"assistant","text":"a","fidelity":{"n":NaN}},"timestamp":"t"}',
    nested(3000).encode(),
    b'{"type":"model_msg","payload":{"type":"text","role":"user","text":"\\ud800 lone"},"timestamp":"t"}',
    b"42",
    b"null",
    b'{"type":"event_msg","payload":{"type":"request_end","status":"completed"},"timestamp":"t"}',
    b'{"type":"event_msg","payload":{"type":"request_begin"},"timestamp":"t"}',
]


@st.composite
def damaged(draw: st.DrawFn, lines: list[bytes]) -> bytes:
    """`lines` after one to four of: a line copied again further on (re-appended after a crash, a
    sync tool), two neighbours swapped (writers racing), delete one, insert a garbage line, put a lone surrogate escape into a line, cut the
    file short. (A line moved far from its request can take opaque provider data with it — a
    reasoning item away from its call — which no replay can put back: that history gets the
    provider's refusal, once, see test_llm_permanent_rejection.py.)"""
    lines = list(lines)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["duplicate", "duplicate", "swap", "delete", "garbage", "surrogate", "cut"]))
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(i + 1, len(lines)))
        if kind == "duplicate":
            lines.insert(j, lines[i])
        elif kind == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "garbage":
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(GARBAGE) | st.binary(max_size=30)))
        elif kind == "surrogate" and b'"text":"' in lines[i]:
            lines[i] = lines[i].replace(b'"text":"', b'"text":"\\udc00', 1)
        elif kind == "cut":
            joined = b"\n".join(lines)
            cut = draw(st.integers(len(joined) // 2, len(joined)))
            lines = joined[:cut].split(b"\n")
    return b"\n".join(lines)


def test_duplicated_reordered_and_garbage_lines(resumer: Resumer) -> None:
    @bounded(60)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        resumer.check(data.draw(damaged(resumer.lines())))

    run()


def _calls_and_outputs(lines: list[bytes]) -> list[int]:
    return [i for i, line in enumerate(lines) if b'"tool_call"' in line or b'"tool_call_output"' in line]


def test_every_call_and_output_line_duplicated_anywhere(resumer: Resumer) -> None:
    """The measured defect: one `tool_call` or `tool_call_output` line appearing twice (right
    after itself, at the end of its request, at the end of the file) breaks the resumed session
    for good on 3758335."""
    lines = resumer.lines()
    for i in _calls_and_outputs(lines):
        for j in (i + 1, i + 3, len(lines)):
            mutated = [*lines[:j], lines[i], *lines[j:]]
            resumer.check(b"\n".join(mutated))


def test_replay_notes_each_repair() -> None:
    records = [
        user_text("go"),
        *_event("request_begin"),
        tool_call("read_file", "{}", "c1"),
        tool_call("read_file", "{}", "c1"),
        *_event("request_end"),
        tool_call_output("one", "c1"),
        tool_call_output("two", "c1"),
        tool_call_output("who?", "c9"),
    ]
    replay = resume_trace(records)
    assert [m.payload.type for m in replay.history] == ["text", "tool_call"]
    assert [m.payload.output for m in replay.carry_over] == ["one"]
    assert replay.notes == [
        "dropped a second record of tool call c1 (the first is kept)",
        "dropped a second output of tool call c1 (the first is kept)",
        "dropped an output of tool call c9, whose call is not in the trace",
    ]


def _event(kind: str) -> list[OmniMessage]:
    from penguin_jupyter import omni

    return [omni.request_begin()] if kind == "request_begin" else [omni.request_end("completed")]
