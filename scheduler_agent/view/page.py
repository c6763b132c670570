"""The page: one self-contained HTML file from a `Trace`, rendered from the Jinja2 templates in
`templates/` with autoescaping on: a string from the model, a tool or a calendar is text on the page
unless a template marks it otherwise, and none does. No CDN, no network: it works from disk and as an
e-mail attachment. The essentials (the timeline, the chart, every request's array) need no JavaScript;
the script adds the full array inside each request, the call/result highlight and the search.

Its Content-Security-Policy allows nothing but its own inline script and style, by their sha256 hashes:
even a string that slipped through unescaped could not run.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from scheduler_agent.view.chart import chart
from scheduler_agent.view.entries import pretty
from scheduler_agent.view.figures import Figures, by_turn, figures, totals
from scheduler_agent.view.trace import Finding, Request, Trace


def asset(name: str) -> str:
    return resources.files("scheduler_agent.view").joinpath(name).read_text(encoding="utf-8")


def digest(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def policy(script: str, style: str) -> str:
    return (
        f"default-src 'none'; script-src '{digest(script)}'; style-src '{digest(style)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def thousands(value: int) -> str:
    return f"{value:,}"


def usd(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def entries(count: int) -> str:
    return f"{count:,} entr{'y' if count == 1 else 'ies'}"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("scheduler_agent.view", "templates"),
        autoescape=True,  # every template, .html and .svg alike
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pretty=pretty, thousands=thousands, usd=usd, entries=entries)
    return env


@dataclass(frozen=True)
class RequestView:
    """What the page shows of one request, beside the request itself."""

    request: Request
    row: Figures
    usage: dict[str, Any]
    total: int  # every input token: uncached, cache reads, cache writes
    ranges: str  # for the script: "0-4,6-9"
    new: str  # for the script: "5,6"
    new_runs: list[tuple[int, int]]
    from_replies: list[int]  # its new entries that are replies to earlier requests
    dropped: list[tuple[int, int]]
    changes: list[tuple[str, int]]  # ("system" or "tools", version from 1) first sent here
    homes: list[int]  # the entries shown in full under it
    found: int  # grammar findings of its check


def build_page(trace: Trace) -> str:
    script, style = asset("page.js"), asset("page.css")
    rows = [figures(request) for request in trace.requests]
    by_entry: dict[int, list[Finding]] = {}
    for finding in trace.findings:
        by_entry.setdefault(finding.entry, []).append(finding)
    replies = {r.reply_entry: r.number for r in trace.requests if r.reply_entry is not None}
    shown: dict[int, list[int]] = {}
    for index, home in enumerate(trace.home):
        if index not in replies:
            shown.setdefault(home, []).append(index)
    views = [
        _view(trace, request, row, shown.get(request.number - 1, []), replies)
        for request, row in zip(trace.requests, rows, strict=True)
    ]
    return (
        environment()
        .get_template("page.html")
        .render(
            trace=trace,
            policy=policy(script, style),
            script=Markup(script),  # the package's own files, hashed into the policy above
            style=Markup(style),
            whole=totals(rows),
            turns=[(str(turn), sums) for turn, sums in by_turn(trace, rows)],
            bars=chart(rows),
            requests=views,
            replies=replies,
            by_entry=by_entry,
            unsent=shown.get(-1, []),
            systems=[
                {"text": system if isinstance(system, str) else pretty(system), "first": _first(trace, "system", n)}
                for n, system in enumerate(trace.systems)
            ],
            toolsets=[
                {
                    "names": ", ".join(str(tool.get("name", "?")) for tool in tools if isinstance(tool, dict)),
                    "text": pretty(tools),
                    "first": _first(trace, "tools", n),
                }
                for n, tools in enumerate(trace.tools)
            ],
        )
        + "\n"
    )


def _first(trace: Trace, kind: str, version: int) -> int | None:
    return next((r.number for r in trace.requests if getattr(r, f"{kind}_version") == version), None)


def _view(trace: Trace, request: Request, row: Figures, homes: list[int], replies: dict[int, int]) -> RequestView:
    usage = request.usage or {}
    kinds = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    total = sum(int(usage.get(kind) or 0) for kind in kinds)
    return RequestView(
        request=request,
        row=row,
        usage=usage,
        total=total,
        ranges=",".join(f"{a}-{b}" for a, b in request.ranges()),
        new=",".join(map(str, request.new)),
        new_runs=[(i, i) for i in request.new],
        from_replies=[i for i in request.new if i in replies],
        dropped=request.dropped(),
        changes=_changed(trace, request),
        homes=homes,
        found=sum(1 for f in trace.findings if f.request == request.number - 1),
    )


def _changed(trace: Trace, request: Request) -> list[tuple[str, int]]:
    index = request.number - 1
    earlier = trace.requests[index - 1] if index else None
    changes = []
    if request.system_version >= 0 and (earlier is None or earlier.system_version != request.system_version):
        changes.append(("system", request.system_version + 1))
    if request.tools_version >= 0 and (earlier is None or earlier.tools_version != request.tools_version):
        changes.append(("tools", request.tools_version + 1))
    return changes
