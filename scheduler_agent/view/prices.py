"""Cost in money, from the `genai-prices` package (offline: its price data ships inside the package).

One function, `price_of`, so the lookup can be swapped or unified without touching the page. An unknown
model has no price (None), never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def price_of(model: str | None, usage: Mapping[str, Any] | None) -> float | None:
    """US dollars for one reply's `usage` (the API's field names), or None for an unknown model or no usage."""
    if not model or not isinstance(usage, Mapping):
        return None
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover - a dependency; the page then says "no price"
        return None
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    counted = Usage(
        input_tokens=int(usage.get("input_tokens") or 0) + read + written,  # genai-prices counts cache in input
        cache_read_tokens=read,
        cache_write_tokens=written,
        output_tokens=int(usage.get("output_tokens") or 0),
    )
    try:
        return float(calc_price(counted, model_ref=model, provider_id="anthropic").total_price)
    except LookupError:
        return None
