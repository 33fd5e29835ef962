"""What a request costs, for every client agenthub routes to (issue 41): the scripted server sends
each protocol's own usage fields (cached input, reasoning), the model prices the token counts it
reports, and `token_usage` carries the request's and the session's USD — or nothing at all when
the model has no known price (never $0)."""

from __future__ import annotations

import json

import pytest

from penguin_jupyter.interfaces import LLMOutcome
from penguin_jupyter.llm import GenerativeModel, GenerativeModelConfig
from penguin_jupyter.omni import TokenUsagePayload, to_json, user_text
from penguin_jupyter.prices import ModelPrice, PriceError, cost_usd, list_price, parse_price
from penguin_jupyter.testing import ScriptedModelServer
from tests.llm.test_llm_provider_matrix import CLIENTS, IDS, KEY, Client
from tests.support.llm import collect

USAGE = {"prompt_tokens": 1000, "completion_tokens": 200, "cached_tokens": 400, "reasoning_tokens": 50}
STEP = {"reasoning": "Counting.", "text": "42 rows.", "usage": USAGE}
PRICE = ModelPrice(input=2.0, cached=0.5, output=8.0, source="test")
# 600 uncached input at $2/M + 400 cached at $0.5/M + 200 output (50 of them thinking) at $8/M
EXPECTED_REQUEST_USD = (600 * 2.0 + 400 * 0.5 + 200 * 8.0) / 1_000_000


def priced_model(client: Client, server: ScriptedModelServer, price: ModelPrice | None) -> GenerativeModel:
    return GenerativeModel(
        GenerativeModelConfig(
            model_id=client.model_id,
            client_type=client.client_type,
            api_key=KEY,
            base_url=client.base_url(server),
            thinking_level="medium",
            price=price,
        )
    )


def usage_of(messages: list) -> TokenUsagePayload:  # type: ignore[type-arg]
    (usage,) = [m.payload for m in messages if isinstance(m.payload, TokenUsagePayload)]
    return usage


@pytest.mark.parametrize("client", CLIENTS, ids=IDS)
async def test_the_cost_shown_is_the_tokens_times_the_price_for_every_protocol(client: Client) -> None:
    with ScriptedModelServer([STEP, STEP], model=client.model_id, api_key=KEY) as server:
        model = priced_model(client, server, PRICE)
        first, outcome = await collect(model, [user_text("How many rows?")])
        assert outcome == LLMOutcome("completed")
        usage = usage_of(first)
        # the protocol's own fields, mapped: cached input apart, reasoning counted as output
        assert (usage.request.cache_read, usage.request.cache_write, usage.request.output) == (400, 600, 200)
        assert usage.cost_usd is not None
        assert usage.cost_usd.request == pytest.approx(EXPECTED_REQUEST_USD)
        second, _ = await collect(model, [user_text("And columns?")])
        assert usage_of(second).cost_usd.session == pytest.approx(2 * EXPECTED_REQUEST_USD)  # type: ignore[union-attr]


LISTED = [client for client in CLIENTS if list_price(client.model_id) is not None]


@pytest.mark.parametrize("client", LISTED, ids=[c.label for c in LISTED])
async def test_a_model_agenthub_prices_is_charged_at_its_list_price(client: Client) -> None:
    price = list_price(client.model_id)
    assert price is not None
    with ScriptedModelServer([STEP], model=client.model_id, api_key=KEY) as server:
        messages, _ = await collect(priced_model(client, server, None), [user_text("How many rows?")])
        usage = usage_of(messages)
        assert usage.cost_usd is not None
        assert usage.cost_usd.request == pytest.approx(cost_usd(usage.request, price))
        assert usage.cost_usd.request > 0


def test_the_list_prices_cover_the_matrix_models_agenthub_prices() -> None:
    """The clients whose ids agenthub's catalogue prices (a guard: the priced test above must not
    silently shrink to nothing after an upgrade)."""
    assert {c.model_id for c in LISTED} >= {"claude-sonnet-4-6", "gpt-5.5", "deepseek-v4-pro", "glm-5.1", "minimax-m3"}
    sonnet = list_price("claude-sonnet-4-6")
    assert sonnet is not None and (sonnet.input, sonnet.cached, sonnet.output) == (3.0, 0.3, 15.0)


async def test_a_model_with_no_known_price_reports_no_cost_rather_than_zero() -> None:
    client = next(c for c in CLIENTS if c.label == "openai-chat")
    assert list_price(client.model_id) is None
    with ScriptedModelServer([STEP], model=client.model_id, api_key=KEY) as server:
        messages, _ = await collect(priced_model(client, server, None), [user_text("How many rows?")])
        usage = next(m for m in messages if isinstance(m.payload, TokenUsagePayload))
        assert usage.payload.cost_usd is None  # type: ignore[union-attr]
        assert "cost_usd" not in json.loads(to_json(usage))["payload"]  # the reference's wire, unchanged


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"input": -1, "output": 2}, "input must be a number"),
        ({"input": "abc", "output": 2}, "input must be a number"),
        ({"input": 1}, "output is required"),
        ({"input": 1, "output": 2, "cost": 3}, "unknown key 'cost'"),
        ({"input": float("nan"), "output": 2}, "input must be a number"),
        ("cheap", "must be a table"),
    ],
)
def test_a_price_table_that_does_not_parse_is_one_line(raw: object, message: str) -> None:
    with pytest.raises(PriceError, match=message) as caught:
        parse_price(raw, "config")
    assert "\n" not in str(caught.value)


def test_cached_defaults_to_the_input_price() -> None:
    assert parse_price({"input": 1.5, "output": 6}, "config") == ModelPrice(1.5, 1.5, 6.0, "config")
