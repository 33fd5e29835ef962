"""What a model's tokens cost (docs/cost.md): the price of a model and the cost of token counts.
A leaf module (it imports nothing of the package), so the config reader, the model and the
notebook share it.

Owns `ModelPrice` (USD per million tokens: uncached input, cached input, output — reasoning is
output), `list_price(model_id)` (agenthub's list prices, `agenthub.registry.list_supported_models`,
looked up by the exact model id), `parse_price` (a project-config `price = {input, cached,
output}` table, one-line errors) and `cost_usd(counts, price)`. Which price a model uses (a
configured one wins over the list) is decided where the model's config is built; budgets and
the spend ledger are `llm/spend.py`'s and `spending.py`'s.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class _Counts(Protocol):
    """Token counts as the wire has them (omni.TokenCounts)."""

    cache_read: int
    cache_write: int
    output: int


PER_TOKENS = 1_000_000
PRICE_KEYS = ("input", "cached", "output")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens. `source` says where it came from ("list price", a config file)."""

    input: float
    cached: float
    output: float
    source: str = "list price"


def cost_usd(counts: _Counts, price: ModelPrice) -> float:
    """Uncached input (`cache_write`) at the input price, cached input (`cache_read`) at the
    cached price, output (thinking included) at the output price."""
    return (
        counts.cache_write * price.input + counts.cache_read * price.cached + counts.output * price.output
    ) / PER_TOKENS


def _usd(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


@functools.cache
def _list_prices() -> dict[str, ModelPrice]:
    try:
        from agenthub.registry import list_supported_models
    except ImportError:  # an agenthub without the catalogue: every price is unknown
        return {}
    prices: dict[str, ModelPrice] = {}
    for entry in list_supported_models():
        pricing = entry.get("pricing") if isinstance(entry, Mapping) else None
        if not isinstance(pricing, Mapping) or pricing.get("currency", "USD") != "USD":
            continue
        prompt = _usd(pricing.get("prompt_tokens"))
        response = _usd(pricing.get("response_tokens"))
        if prompt is None or response is None:
            continue
        cached = _usd(pricing.get("cached_tokens"))
        thoughts = _usd(pricing.get("thoughts_tokens"))
        # output carries thinking and answer together: the dearer of the two, never less
        output = max(response, thoughts) if thoughts is not None else response
        prices[str(entry.get("model"))] = ModelPrice(prompt, prompt if cached is None else cached, output)
    return prices


def list_price(model_id: str) -> ModelPrice | None:
    """agenthub's list price for `model_id` (the exact id, else the one id equal to it but for
    case: `minimax-m3` is `MiniMax-M3`), or None when it has none."""
    prices = _list_prices()
    exact = prices.get(model_id)
    if exact is not None:
        return exact
    folded = [price for name, price in prices.items() if name.lower() == model_id.lower()]
    return folded[0] if len(folded) == 1 else None


class PriceError(ValueError):
    """A price table that cannot be used; `str()` is the one line (without the file)."""


def parse_price(raw: Any, source: str) -> ModelPrice:
    """A `price = {input = …, cached = …, output = …}` table (USD per million tokens; `cached`
    defaults to `input`) → ModelPrice; PriceError naming the first bad key."""
    if not isinstance(raw, Mapping):
        raise PriceError("must be a table { input = …, cached = …, output = … } (USD per million tokens)")
    unknown = sorted(str(key) for key in raw if key not in PRICE_KEYS)
    if unknown:
        raise PriceError(f"unknown key {unknown[0]!r} (use input, cached, output)")
    values: dict[str, float] = {}
    for key in PRICE_KEYS:
        if key not in raw:
            continue
        value = _usd(raw[key])
        if value is None:
            raise PriceError(
                f"{key} must be a number of USD per million tokens, 0 or more (got {raw[key]!r})"
            )
        values[key] = value
    for key in ("input", "output"):
        if key not in values:
            raise PriceError(f"{key} is required (USD per million tokens)")
    return ModelPrice(values["input"], values.get("cached", values["input"]), values["output"], source)


def format_usd(amount: float | None) -> str:
    """`$0.0123`, `$0.11`, `$1.24`, `$1,250.00`: under a dollar up to four decimals (trailing zeros
    dropped down to two) so a small Task is visible; None is "price unknown", never $0."""
    if amount is None:
        return "price unknown"
    if 0 < amount < 0.0001:
        return "<$0.0001"
    if amount != 0 and abs(amount) < 1:
        text = f"{amount:.4f}"
        while text.endswith("0") and len(text.split(".")[1]) > 2:
            text = text[:-1]
        return f"${text}"
    return f"${amount:,.2f}"
