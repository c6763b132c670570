"""The figures of a trace: each request's input tokens split into new, resent uncached and read from the cache,
and the cost of each request against the cost had it carried only its new entries. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from scheduler_agent.view.prices import price_of
from scheduler_agent.view.trace import Request, Trace


@dataclass(frozen=True)
class Figures:
    """One request's tokens and cost. `new + resent + cached == total` (all input tokens)."""

    total: int
    new: int  # what this request sent for the first time (its share of the bytes, in tokens)
    resent: int  # sent before, and not read from the cache
    cached: int  # cache reads
    written: int  # cache writes (part of `new` and `resent`)
    output: int | None
    estimated: bool
    cost: float | None
    cost_if_new_only: float | None  # the same reply, had the request carried only its new entries, uncached


def figures(request: Request) -> Figures:
    usage = request.usage or {}
    uncached = int(usage.get("input_tokens") or 0)
    cached = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    total = uncached + cached + written
    share = request.new_bytes / request.bytes if request.bytes else 1.0
    new = min(round(total * share), total - cached)
    output = usage.get("output_tokens")
    output = int(output) if isinstance(output, int) else None
    cost = price_of(request.model, usage) if request.usage else None
    alone = {"input_tokens": new, "output_tokens": output or 0}
    cost_alone = price_of(request.model, alone) if request.usage else None
    return Figures(total, new, total - cached - new, cached, written, output, request.usage_estimated, cost, cost_alone)


@dataclass(frozen=True)
class Totals:
    requests: int
    input: int
    new: int
    cached: int
    output: int
    cost: float | None  # None when any request has no price
    cost_if_new_only: float | None
    estimated: bool


def totals(rows: list[Figures]) -> Totals:
    priced = all(row.cost is not None for row in rows) and bool(rows)
    return Totals(
        len(rows),
        sum(row.total for row in rows),
        sum(row.new for row in rows),
        sum(row.cached for row in rows),
        sum(row.output or 0 for row in rows),
        sum(row.cost or 0.0 for row in rows) if priced else None,
        sum(row.cost_if_new_only or 0.0 for row in rows) if priced else None,
        any(row.estimated for row in rows),
    )


def by_turn(trace: Trace, rows: list[Figures]) -> list[tuple[int, Totals]]:
    turns: dict[int, list[Figures]] = {}
    for request, row in zip(trace.requests, rows, strict=True):
        turns.setdefault(request.turn, []).append(row)
    return [(turn, totals(group)) for turn, group in turns.items()]
