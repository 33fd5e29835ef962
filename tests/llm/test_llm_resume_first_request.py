"""The first request after a resume (`set_history` with a long saved history) converts the whole
history once; the event loop keeps running while it does (`llm/loop_slices.py`), for every
client agenthub routes to, and an abort stops it at the next slice. The bytes sent are checked
against the SDK's own in tests/llm/test_llm_long_history.py, whose first requests take this path."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import pytest

from penguin_jupyter.interfaces import AbortSignal, LLMOutcome
from penguin_jupyter.llm import gemini_request
from penguin_jupyter.llm.history_conversion import kept_conversion
from penguin_jupyter.llm.loop_slices import MAX_SLICE
from penguin_jupyter.omni import user_text
from penguin_jupyter.testing import ScriptedModelServer
from tests.llm.test_llm_long_history import TOOLS, long_history
from tests.support.llm import collect, scripted_model

pytestmark = pytest.mark.timeout(240)

# every protocol family agenthub routes to: (model_id, client_type, the SDK's base_url is the root)
CLIENTS = {
    "openai-chat": ("scripted-model", "openai-chat", False),
    "openai-responses": ("any-model", "openai-responses", False),
    "claude-sonnet-4-6": ("claude-sonnet-4-6", None, True),
    "ant-messages": ("claude-compatible", "ant-messages", True),
    "gemini-3-flash": ("gemini-3-flash", None, True),
}


def resumed_model(server: ScriptedModelServer, client: str) -> Any:
    model_id, client_type, at_root = CLIENTS[client]
    model = scripted_model(
        server,
        model_id=model_id,
        client_type=client_type,
        base_url=server.root_url if at_root else server.url,
        tools=TOOLS,
    )
    # no thinking in the resumed history: without its provider's signature no server takes it back
    model.set_history(long_history(2000, with_thinking=False))
    return model


class Ticker:
    """A coroutine that runs whenever the loop does, counting the steps in which `partway()` held."""

    def __init__(self, partway: Callable[[], bool]) -> None:
        self.partway = partway
        self.ticks = 0
        self.ticks_partway = 0

    async def run(self) -> None:
        while True:
            self.ticks += 1
            self.ticks_partway += self.partway()
            await asyncio.sleep(0)


async def request_while_ticking(model: Any, ticker: Ticker, **kwargs: Any) -> LLMOutcome:
    ticking = asyncio.ensure_future(ticker.run())
    try:
        _, outcome = await collect(model, [user_text("What was item 0?")], **kwargs)
    finally:
        ticking.cancel()
    return outcome


@pytest.mark.parametrize("client", sorted(CLIENTS))
async def test_the_loop_keeps_running_while_the_first_request_after_a_resume_converts_the_history(
    client: str,
) -> None:
    with ScriptedModelServer(["one", "two"]) as server:
        model = resumed_model(server, client)
        routed = model._client.protocol_client
        conversion = kept_conversion(routed)
        assert conversion is not None and conversion.converted == 0
        total = len(routed.get_history())
        ticker = Ticker(lambda: 0 < conversion.converted < total)
        assert await request_while_ticking(model, ticker) == LLMOutcome("completed")
        # the history was converted slice by slice, the loop running between slices (one agenthub
        # call over the whole history before: never seen partway)
        assert ticker.ticks_partway >= total // MAX_SLICE - 2, (ticker.ticks_partway, total)
        assert conversion.converted_last == total + 1  # the history once, and the new message
        # the next request converts only what is new
        assert (await collect(model, [user_text("And item 1?")]))[1] == LLMOutcome("completed")
        assert conversion.converted_last == 2  # the last answer and the new question
        assert server.served == 2


class GeminiContentCount:
    """How many Contents google-genai has converted so far (`count_gemini_contents`)."""

    converted = 0


def count_gemini_contents(monkeypatch: pytest.MonkeyPatch) -> GeminiContentCount:
    """Counts the Contents google-genai converts from now on in this test."""
    count = GeminiContentCount()
    sdk_conversion = gemini_request.gemini_wire_contents

    def counting_conversion(api_client: Any, contents: list[Any]) -> list[Any]:
        count.converted += len(contents)
        return sdk_conversion(api_client, contents)

    monkeypatch.setattr(gemini_request, "gemini_wire_contents", counting_conversion)
    return count


async def test_gemini_sdk_conversion_of_the_resumed_history_lets_the_loop_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """google-genai's validation and conversion of every Content (≈ 1.2 s at 4,000 messages, in one
    step before) runs slice by slice too."""
    contents = count_gemini_contents(monkeypatch)
    with ScriptedModelServer(["one"]) as server:
        model = resumed_model(server, "gemini-3-flash")
        total = len(model._client.protocol_client.get_history())
        ticker = Ticker(lambda: 0 < contents.converted < total)
        assert await request_while_ticking(model, ticker) == LLMOutcome("completed")
    assert contents.converted >= total
    assert ticker.ticks_partway >= total // MAX_SLICE - 2, (ticker.ticks_partway, total)


@pytest.mark.parametrize("client", ["gemini-3-flash", "openai-responses"])
async def test_an_abort_during_the_resumed_history_conversion_stops_it_within_a_few_loop_steps(
    client: str,
) -> None:
    with ScriptedModelServer(["one"]) as server:
        model = resumed_model(server, client)
        routed = model._client.protocol_client
        conversion = kept_conversion(routed)
        assert conversion is not None
        total = len(routed.get_history())
        signal = AbortSignal()
        progress: list[int] = []  # conversion progress seen at each loop step from the abort on

        def abort_partway() -> bool:
            if progress or conversion.converted > 0:
                if not progress:
                    signal.abort("user")
                progress.append(conversion.converted)
            return False

        outcome = await request_while_ticking(model, Ticker(abort_partway), signal=signal)
        assert outcome.status == "aborted"
        assert server.served == 0  # no request left
        # the model sees the abort and stops the upstream within a few loop steps (a slice each)
        steps_converting = sum(1 for a, b in itertools.pairwise(progress) if b > a)
        assert steps_converting <= 8 and progress[-1] < total, progress[:20]
        # the next request converts the history again (a history shorter than the kept one) and completes
        assert (await collect(model, [user_text("What was item 0?")]))[1] == LLMOutcome("completed")
        assert server.served == 1


async def test_a_retry_after_an_abort_converts_only_what_the_aborted_request_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Aborted while google-genai converted the Contents (agenthub's conversion done, the new
    question converted too): the retry reuses the kept conversion up to the history and the
    Contents JSON the aborted request's slices made."""
    contents = count_gemini_contents(monkeypatch)
    with ScriptedModelServer(["one"]) as server:
        model = resumed_model(server, "gemini-3-flash")
        conversion = kept_conversion(model._client.protocol_client)
        assert conversion is not None
        total = len(model._client.protocol_client.get_history())
        signal = AbortSignal()

        def abort_partway() -> bool:
            if 0 < contents.converted < total and not signal.aborted:
                signal.abort("user")
            return False

        outcome = await request_while_ticking(model, Ticker(abort_partway), signal=signal)
        assert outcome.status == "aborted" and server.served == 0
        at_stop = contents.converted
        assert 0 < at_stop < total and conversion.converted == total + 1  # the question was converted
        _, outcome = await collect(model, [user_text("What was item 0?")])
        assert outcome == LLMOutcome("completed") and server.served == 1
    assert conversion.converted_last == 1  # the new question only (before: the whole history again)
    assert contents.converted <= total + 2  # every Content converted once over both requests, and each question
