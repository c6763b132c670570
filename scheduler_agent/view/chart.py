"""The chart: an inline SVG bar per request, its input tokens stacked by what was new, what was resent
uncached and what was read from the cache. Pure; numbers only, so nothing in it needs escaping but titles."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from scheduler_agent.view.figures import Figures

HEIGHT = 200  # the plot's height in px
TOP, BOTTOM, LEFT = 12, 24, 56


def chart_svg(rows: Sequence[Figures]) -> str:
    if not rows:
        return "<p>No requests.</p>"
    peak = max(max(row.total for row in rows), 1)
    bar = max(3, min(36, 720 // len(rows)))
    gap = max(1, bar // 4)
    width = LEFT + len(rows) * (bar + gap) + gap
    total_height = TOP + HEIGHT + BOTTOM
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_height}" '
        f'viewBox="0 0 {width} {total_height}" role="img" aria-label="input tokens per request">',
        f'<line class="axis" x1="{LEFT - 4}" y1="{TOP}" x2="{LEFT - 4}" y2="{TOP + HEIGHT}"/>',
        f'<text class="tick" x="{LEFT - 8}" y="{TOP + 4}" text-anchor="end">{peak:,}</text>',
        f'<text class="tick" x="{LEFT - 8}" y="{TOP + HEIGHT}" text-anchor="end">0</text>',
    ]
    for number, row in enumerate(rows, start=1):
        x = LEFT + gap + (number - 1) * (bar + gap)
        mark = "≈" if row.estimated else ""
        title = (
            f"Request {number}: {mark}{row.total:,} input tokens: {row.new:,} new, {row.resent:,} resent uncached, "
            f"{row.cached:,} read from the cache"
        )
        parts.append(f'<a href="#r{number}"><g class="bar" data-request="{number}" data-total="{row.total}">')
        parts.append(f"<title>{escape(title)}</title>")
        y: float = TOP + HEIGHT
        for kind, tokens in (("cached", row.cached), ("resent", row.resent), ("new", row.new)):
            height = round(HEIGHT * tokens / peak, 2)
            if height > 0:
                y -= height
                parts.append(f'<rect class="{kind}" x="{x}" y="{round(y, 2)}" width="{bar}" height="{height}"/>')
        parts.append("</g></a>")
        if len(rows) <= 40:
            parts.append(
                f'<text class="tick" x="{x + bar / 2}" y="{TOP + HEIGHT + 16}" text-anchor="middle">{number}</text>'
            )
    parts.append("</svg>")
    legend = (
        '<p class="legend"><span class="key new"></span> new in the request '
        '<span class="key resent"></span> resent, not cached (the system prompt and tools too) '
        '<span class="key cached"></span> read from the cache'
        "</p>"
    )
    return "".join(parts) + legend
