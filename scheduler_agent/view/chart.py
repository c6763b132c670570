"""The chart's geometry: a bar per request, its input tokens stacked by what was new, what was resent
uncached and what was read from the cache. Pure numbers; templates/chart.svg draws them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from scheduler_agent.view.figures import Figures

HEIGHT = 200  # the plot's height in px
TOP, BOTTOM, LEFT = 12, 24, 56


@dataclass(frozen=True)
class Bar:
    number: int  # the request, 1-based
    x: int
    total: int
    title: str
    parts: list[tuple[str, float, float]]  # (kind, y, height), bottom first: cached, resent, new


@dataclass(frozen=True)
class Chart:
    bars: list[Bar] = field(default_factory=list)
    width: int = 0
    height: int = TOP + HEIGHT + BOTTOM
    bar: int = 0  # a bar's width
    peak: int = 1
    top: int = TOP
    left: int = LEFT
    plot: int = HEIGHT
    numbered: bool = True  # each bar's number under it (up to 40 bars)


def chart(rows: Sequence[Figures]) -> Chart:
    if not rows:
        return Chart()
    peak = max(max(row.total for row in rows), 1)
    bar = max(3, min(36, 720 // len(rows)))
    gap = max(1, bar // 4)
    bars = []
    for number, row in enumerate(rows, start=1):
        mark = "≈" if row.estimated else ""
        title = (
            f"Request {number}: {mark}{row.total:,} input tokens: {row.new:,} new, {row.resent:,} resent uncached, "
            f"{row.cached:,} read from the cache"
        )
        parts = []
        y: float = TOP + HEIGHT
        for kind, tokens in (("cached", row.cached), ("resent", row.resent), ("new", row.new)):
            height = round(HEIGHT * tokens / peak, 2)
            if height > 0:
                y -= height
                parts.append((kind, round(y, 2), height))
        bars.append(Bar(number, LEFT + gap + (number - 1) * (bar + gap), row.total, title, parts))
    width = LEFT + len(rows) * (bar + gap) + gap
    return Chart(bars, width, bar=bar, peak=peak, numbered=len(rows) <= 40)
