"""`scheduler-agent models` and the `-m` check: the models of the SDK's model list that the price table prices.

Both the SDK and the price table (genai-prices, about a second to load) are imported inside: the list is read
only by `models`, and by a command given `-m`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache


@dataclass(frozen=True)
class PricedModel:
    """A model and its prices in US dollars per million tokens (None: not a flat price, e.g. tiered)."""

    name: str
    input: Decimal | None
    output: Decimal | None
    cache_read: Decimal | None
    cache_write: Decimal | None


def sdk_models() -> list[str]:
    """The model names the installed SDK lists (`anthropic.types.Model`), in its order."""
    from anthropic.types.model import Model

    names: list[str] = []
    for arm in typing.get_args(Model):
        names += [value for value in typing.get_args(arm) if isinstance(value, str)]
    return names


@lru_cache(maxsize=1)
def priced_models() -> tuple[PricedModel, ...]:
    """The SDK's models that genai-prices prices for the provider `anthropic`."""
    from genai_prices.data_snapshot import get_snapshot

    provider = next(p for p in get_snapshot().providers if p.id == "anthropic")
    found = []
    for name in sdk_models():
        info = provider.find_model(name)
        if info is None or isinstance(info.prices, list):  # not priced, or priced by date: not one flat row
            continue
        prices = info.prices
        found.append(
            PricedModel(
                name,
                _flat(prices.input_mtok),
                _flat(prices.output_mtok),
                _flat(prices.cache_read_mtok),
                _flat(prices.cache_write_mtok),
            )
        )
    return tuple(found)


def _flat(price: object) -> Decimal | None:
    return price if isinstance(price, Decimal) else None


def is_known(name: str) -> bool:
    """Whether `name` is one of `priced_models()`."""
    return any(model.name == name for model in priced_models())
