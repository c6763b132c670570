"""What a reply cost in money, from its usage and model, priced by the `genai-prices` package (offline).

genai-prices (pydantic's kept price list, https://github.com/pydantic/genai-prices) ships its data
inside the package: no network is used. Its version is the source's date; `SOURCE` names it.
A model it does not know has no price: `Cost.usd` is None, shown as "no price", never as $0.
Costs of scripted replies (lessons, tests) are estimates and say so.

genai-prices and pydantic cost about a second to import: the module is imported only where a cost
is shown (`-u`, `/tokens`, `conversations show`, `ask --json`), and loads the package on first use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from importlib.metadata import version
from typing import Any


@dataclass(frozen=True)
class Cost:
    """US dollars, or None when the model has no known price; `estimated` for scripted replies."""

    usd: Decimal | None
    estimated: bool = False

    def __add__(self, other: Cost) -> Cost:
        usd = None if self.usd is None or other.usd is None else self.usd + other.usd
        return Cost(usd, self.estimated or other.estimated)

    def text(self) -> str:
        """`$0.0123`, `~$0.0123 (estimate)`, or `no price`."""
        if self.usd is None:
            return "no price"
        amount = f"${self.usd:.4f}" if self.usd < 1 else f"${self.usd:,.2f}"
        return f"~{amount} (estimate)" if self.estimated else amount

    def json(self) -> dict[str, Any]:
        return {"usd": None if self.usd is None else float(self.usd), "estimated": self.estimated}


FREE = Cost(Decimal(0))


def source() -> str:
    """Where the prices come from, for people who ask."""
    return f"genai-prices {version('genai-prices')} (offline data shipped with the package)"


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) else 0


def price_of(model: str, usage: Mapping[str, Any], *, estimated: bool = False) -> Cost:
    """The cost of one reply: `usage` is the API's usage object as it came."""
    import genai_prices

    read = _count(usage, "cache_read_input_tokens")
    written = _count(usage, "cache_creation_input_tokens")
    tokens = genai_prices.Usage(
        # genai-prices counts cache reads and writes inside input_tokens; the Messages API does not
        input_tokens=_count(usage, "input_tokens") + read + written,
        cache_read_tokens=read,
        cache_write_tokens=written,
        output_tokens=_count(usage, "output_tokens"),
    )
    try:
        priced = genai_prices.calc_price(tokens, model, provider_id="anthropic")
    except LookupError:
        return Cost(None, estimated)
    return Cost(Decimal(priced.total_price), estimated)


def total(costs: Iterable[Cost]) -> Cost:
    """The sum; "no price" as soon as one part has none (a partial sum would pass for the whole)."""
    result = FREE
    for cost in costs:
        result = result + cost
    return result
