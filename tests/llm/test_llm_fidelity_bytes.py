"""Opaque bytes in fidelity (issue 26): google-genai hands Gemini's `thought_signature` over as
`bytes`. The message built from it serializes (a plain text answer used to be a traceback), the
trace line keeps it, and after a resume the signature reaches the provider byte-identical.
Real parts: agenthub's Gemini client converts real google-genai response objects both ways."""

from __future__ import annotations

import base64
import json

from google.genai import types

from penguin_jupyter.llm import EventTranslator, group_history
from penguin_jupyter.notebook.transcript.transcript_bundle import make_bundle, transcript_mimebundle
from penguin_jupyter.omni import (
    BYTES_TAG,
    assistant_text,
    fidelity_for_provider,
    from_json,
    json_safe_fidelity,
    to_json,
    tool_call_output,
    user_text,
)
from penguin_jupyter.trace import TraceWriter

# not valid UTF-8, so no text decoding can stand in for the bytes
SIGNATURE = b"\xff\x00\x9c signed \xe2\x82"


def _gemini_client():  # type: ignore[no-untyped-def]
    from agenthub.gemini3_8 import Gemini3_8Client

    return Gemini3_8Client("gemini-3-flash", api_key="unused", base_url="http://127.0.0.1:9")


def _gemini_chunks() -> list[types.GenerateContentResponse]:
    call = types.Part(
        function_call=types.FunctionCall(id="fc_1", name="read_file", args={"path": "a.csv"}),
        thought_signature=SIGNATURE,
    )
    text = types.Part(text="Done.", thought_signature=SIGNATURE[::-1])
    usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=10, candidates_token_count=3)
    return [
        types.GenerateContentResponse(
            candidates=[types.Candidate(content=types.Content(role="model", parts=[call]))]
        ),
        types.GenerateContentResponse(
            candidates=[
                types.Candidate(
                    content=types.Content(role="model", parts=[text]), finish_reason=types.FinishReason.STOP
                )
            ],
            usage_metadata=usage,
        ),
    ]


def _translated():  # type: ignore[no-untyped-def]
    client = _gemini_client()
    translator = EventTranslator()
    out = []
    for chunk in _gemini_chunks():
        out += list(translator.push_event(client.transform_model_output_to_uni_event(chunk)))
    out += list(translator.finish())
    return [m for m in out if not m.payload.type.startswith("partial_")]


def test_bytes_take_the_tagged_form_and_come_back_identical() -> None:
    fidelity = {"signature": SIGNATURE, "nested": [{"blob": bytearray(b"\x00\x01")}], "text": "kept"}
    safe = json_safe_fidelity(fidelity)
    json.dumps(safe)  # JSON-safe
    assert safe["signature"] == {BYTES_TAG: "/wCcIHNpZ25lZCDigg=="}
    assert fidelity_for_provider(safe) == {
        "signature": SIGNATURE,
        "nested": [{"blob": b"\x00\x01"}],
        "text": "kept",
    }
    # objects that only look tagged are data, left alone
    for lookalike in ({BYTES_TAG: "not base64!"}, {BYTES_TAG: "AA==", "other": 1}, {BYTES_TAG: 3}):
        assert fidelity_for_provider(lookalike) == lookalike


def test_a_gemini_answer_with_signatures_serializes_and_is_written_to_the_trace(tmp_path) -> None:  # type: ignore[no-untyped-def]
    messages = _translated()
    assert [m.payload.type for m in messages] == ["tool_call", "text"]
    trace = TraceWriter(tmp_path / "t_001.jsonl")
    for msg in messages:
        trace.write(msg)  # used to raise UnicodeDecodeError
    assert trace.failure is None
    lines = (tmp_path / "t_001.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["payload"]["fidelity"] == {"signature": {BYTES_TAG: "/wCcIHNpZ25lZCDigg=="}}


async def test_after_a_resume_gemini_receives_the_signatures_byte_identical(tmp_path) -> None:  # type: ignore[no-untyped-def]
    messages = _translated()
    call, answer = messages
    resumed = [from_json(to_json(m)) for m in [user_text("go"), call]]
    resumed += [from_json(to_json(tool_call_output("rows: 3", call.payload.tool_call_id)))]
    resumed += [from_json(to_json(answer))]
    contents = await _gemini_client().transform_uni_message_to_model_input(group_history(resumed))
    signatures = [part.thought_signature for content in contents for part in content.parts or []]
    assert signatures == [None, SIGNATURE, None, SIGNATURE[::-1]]
    # and the SDK's JSON of the part is its own (url-safe) base64 of exactly those bytes
    wire = json.loads(contents[1].model_dump_json(exclude_none=True))
    assert base64.urlsafe_b64decode(wire["parts"][0]["thought_signature"]) == SIGNATURE


def test_fidelity_is_rendered_nowhere() -> None:
    message = assistant_text("The answer.", "completed", {"signature": SIGNATURE})
    bundle = make_bundle([message], session_info={"session_id": "s"}, status="completed")
    assert "fidelity" not in bundle["messages"][0]["payload"]
    shown = transcript_mimebundle(bundle)
    encoded = json_safe_fidelity(SIGNATURE)[BYTES_TAG]
    for part in shown.values():
        assert encoded not in json.dumps(part)
