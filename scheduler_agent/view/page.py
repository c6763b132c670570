"""The page: one self-contained HTML file from a `Trace`. No CDN, no network: it works from disk and as an
e-mail attachment. The essentials (the timeline, the chart, every request's array) need no JavaScript; the
script adds the full array inside each request, the call/result highlight and the search.

Its Content-Security-Policy allows nothing but its own inline script and style, by their sha256 hashes:
even a string that slipped through unescaped could not run.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from importlib import resources

from scheduler_agent.view.chart import chart_svg
from scheduler_agent.view.entries import attr, entry_html, pretty
from scheduler_agent.view.figures import Figures, Totals, by_turn, figures, totals
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


def build_page(trace: Trace) -> str:
    script, style = asset("page.js"), asset("page.css")
    rows = [figures(request) for request in trace.requests]
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{attr(policy(script, style))}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>scheduler-agent · {escape(trace.title)}</title><style>{style}</style></head><body>"
    )
    body = [
        f"<header><h1>{escape(trace.title)}</h1>",
        *(f'<p class="note">{escape(note)}</p>' for note in trace.notes if note),
        "</header>",
        _summary(trace, rows),
        '<section id="chart"><h2>Input tokens per request</h2>',
        chart_svg(rows),
        "</section>",
        _timeline(trace, rows),
        _requests(trace),
        _context(trace),
    ]
    return head + "".join(body) + f"<script>{script}</script></body></html>\n"


# --- numbers ---------------------------------------------------------------------------------------------


def tokens(value: int | None, estimated: bool) -> str:
    if value is None:
        return "—"
    return f'<span class="est" title="estimate">≈{value:,}</span>' if estimated else f"{value:,}"


def money(value: float | None, estimated: bool = False) -> str:
    if value is None:
        return '<span class="no-price">no price</span>'
    text = f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
    return f'<span class="est" title="estimate">≈{text}</span>' if estimated else text


# --- the summary -----------------------------------------------------------------------------------------


def _summary(trace: Trace, rows: list[Figures]) -> str:
    whole = totals(rows)
    lines = [
        '<section id="summary"><h2>What it cost</h2>',
        f"<p>{whole.requests} request{'' if whole.requests == 1 else 's'}, "
        f"{tokens(whole.input, whole.estimated)} input tokens in all "
        f"({tokens(whole.cached, whole.estimated)} read from the cache), of which only "
        f"{tokens(whole.new, whole.estimated)} were new: every request resends the whole array.</p>",
        '<table class="turns"><thead><tr><th>turn</th><th>requests</th><th>input tokens</th>'
        "<th>if each request carried only its new entries</th><th>cost</th><th>cost, new entries only</th>"
        "</tr></thead><tbody>",
    ]
    for turn, sums in by_turn(trace, rows):
        lines.append(_turn_row(str(turn), sums))
    lines.append(_turn_row("all", whole))
    lines.append("</tbody></table>")
    if whole.estimated:
        lines.append('<p class="note">≈ marks an estimate: about four bytes of compact JSON a token.</p>')
    return "".join(lines) + "</section>"


def _turn_row(name: str, sums: Totals) -> str:
    return (
        f"<tr><td>{name}</td><td>{sums.requests}</td><td>{tokens(sums.input, sums.estimated)}</td>"
        f"<td>{tokens(sums.new, sums.estimated)}</td><td>{money(sums.cost, sums.estimated)}</td>"
        f"<td>{money(sums.cost_if_new_only, sums.estimated)}</td></tr>"
    )


# --- the timeline ----------------------------------------------------------------------------------------


def _timeline(trace: Trace, rows: list[Figures]) -> str:
    lines = [
        '<section id="timeline"><h2>Requests</h2>',
        '<form id="search" hidden><label>Find in every array sent: <input id="q" type="search" '
        'placeholder="e.g. 10am" autocomplete="off"></label> <output id="found"></output></form>',
        '<table class="timeline"><thead><tr><th>request</th><th>turn · iteration</th><th>entries sent</th>'
        "<th>bytes</th><th>input (uncached)</th><th>cache writes</th><th>cache reads</th><th>output</th>"
        '<th>cost</th><th>system · tools</th><th class="found-col">search</th></tr></thead><tbody>',
    ]
    for request, row in zip(trace.requests, rows, strict=True):
        usage = request.usage or {}
        est = request.usage_estimated
        sent = f"{len(request.indices):,} ({len(request.new):,} new)"
        if request.dropped():
            sent += ' <span class="trim">trimmed</span>'
        lines.append(
            f'<tr id="t{request.number}" data-request="{request.number}">'
            f'<td><a href="#r{request.number}">{request.number}</a></td>'
            f"<td>{request.turn} · {request.iteration}</td><td>{sent}</td><td>{request.bytes:,}</td>"
            f"<td>{tokens(usage.get('input_tokens'), est)}</td>"
            f"<td>{tokens(usage.get('cache_creation_input_tokens'), est)}</td>"
            f"<td>{tokens(usage.get('cache_read_input_tokens'), est)}</td>"
            f"<td>{tokens(row.output, est)}</td><td>{money(row.cost, est)}</td>"
            f"<td>{_context_mark(trace, request)}</td>"
            f'<td class="found-col"></td></tr>'
        )
        if request.status:
            lines.append(f'<tr class="status"><td></td><td colspan="10">no reply: {escape(request.status)}</td></tr>')
    return "".join(lines) + "</tbody></table></section>"


def _changed(trace: Trace, request: Request) -> list[str]:
    index = request.number - 1
    earlier = trace.requests[index - 1] if index else None
    marks = []
    if request.system_version >= 0 and (earlier is None or earlier.system_version != request.system_version):
        marks.append(f'<a href="#system-{request.system_version + 1}">system v{request.system_version + 1}</a>')
    if request.tools_version >= 0 and (earlier is None or earlier.tools_version != request.tools_version):
        marks.append(f'<a href="#tools-{request.tools_version + 1}">tools v{request.tools_version + 1}</a>')
    return marks


def _context_mark(trace: Trace, request: Request) -> str:
    marks = _changed(trace, request)
    if not marks:
        return "same"
    changed = ' <span class="changed">changed</span>' if request.number > 1 else ""
    return " · ".join(marks) + changed


# --- each request's array --------------------------------------------------------------------------------


def _count(entries: int) -> str:
    return f"{entries:,} entr{'y' if entries == 1 else 'ies'}"


def _links(runs: list[tuple[int, int]]) -> str:
    return ", ".join(
        f'<a href="#e{a}">{a}</a>' if a == b else f'<a href="#e{a}">{a}</a>&ndash;<a href="#e{b}">{b}</a>'
        for a, b in runs
    )


def _requests(trace: Trace) -> str:
    by_entry: dict[int, list[Finding]] = {}
    for finding in trace.findings:
        by_entry.setdefault(finding.entry, []).append(finding)
    replies = {r.reply_entry: r.number for r in trace.requests if r.reply_entry is not None}
    shown: dict[int, list[int]] = {}
    for index, home in enumerate(trace.home):
        if index not in replies:
            shown.setdefault(home, []).append(index)
    lines = ['<section id="requests"><h2>What each request sent</h2>']
    for request in trace.requests:
        lines.append(_request(trace, request, shown.get(request.number - 1, []), replies, by_entry))
    unsent = shown.get(-1, [])
    if unsent:
        count = f"{len(unsent)} entr{'y' if len(unsent) == 1 else 'ies'}"
        lines.append(f'<details class="unsent" open><summary>Not sent yet: {count} at the end of the list</summary>')
        lines += [entry_html(index, trace.entries[index], by_entry.get(index, [])) for index in unsent]
        lines.append("</details>")
    return "".join(lines) + "</section>"


def _request(
    trace: Trace, request: Request, homes: list[int], replies: dict[int, int], by_entry: dict[int, list[Finding]]
) -> str:
    ranges = ",".join(f"{a}-{b}" for a, b in request.ranges())
    new = ",".join(map(str, request.new))
    est = "≈" if request.usage_estimated else ""
    total = sum(
        int((request.usage or {}).get(k) or 0)
        for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    found = [f for f in trace.findings if f.request == request.number - 1]
    summary = (
        f'<summary><span class="found-mark"></span>Request {request.number} · turn {request.turn}, iteration '
        f"{request.iteration} · {_count(len(request.indices))}, {len(request.new):,} new · {request.bytes:,} "
        f"bytes · {est}{total:,} input tokens{' · ' + str(len(found)) + ' grammar findings' if found else ''}"
        "</summary>"
    )
    parts = [
        f'<details class="request" id="r{request.number}" data-request="{request.number}" data-ranges="{ranges}" '
        f'data-new="{new}">{summary}<div class="request-body">',
        f'<p class="sent">Sent entries {_links(request.ranges()) or "none"}.',
    ]
    if request.new:
        from_replies = [i for i in request.new if i in replies]
        parts.append(f" New since the previous request: {_links([(i, i) for i in request.new])}")
        if from_replies:
            parts.append(" (" + ", ".join(f"{i} is the reply to request {replies[i]}" for i in from_replies) + ")")
        parts.append(".")
    parts.append("</p>")
    if request.dropped():
        parts.append(f'<p class="trim">Not sent (trimmed): entries {_links(request.dropped())}.</p>')
    marks = _changed(trace, request)
    if marks and request.number > 1:
        parts.append(f'<p class="changed">The {" and ".join(marks)} changed here.</p>')
    parts.append('<div class="array" hidden></div><div class="homes">')
    for index in homes:
        parts.append(entry_html(index, trace.entries[index], by_entry.get(index, [])))
    parts.append("</div>")
    parts.append(_reply(trace, request, by_entry))
    return "".join(parts) + "</div></details>"


def _reply(trace: Trace, request: Request, by_entry: dict[int, list[Finding]]) -> str:
    if request.status:
        return f'<div class="reply"><h3>No reply</h3><p>{escape(request.status)}</p></div>'
    if request.reply_entry is None:
        return '<div class="reply"><p class="note">The reply is not in this source.</p></div>'
    stop = f" (stop_reason: {escape(str(request.stop_reason))})" if request.stop_reason else ""
    index = request.reply_entry
    label = f" · the reply to request {request.number}"
    shown = entry_html(index, trace.entries[index], by_entry.get(index, []), label)
    return f'<div class="reply"><h3>The reply{stop}</h3>{shown}</div>'


# --- the system prompt and tools, once --------------------------------------------------------------------


def _context(trace: Trace) -> str:
    lines = ['<section id="context"><h2>The system prompt and the tools</h2>']
    if not trace.systems and not trace.tools:
        lines.append('<p class="note">This source does not carry them.</p>')
    for number, system in enumerate(trace.systems, start=1):
        text = system if isinstance(system, str) else pretty(system)
        first = next((r.number for r in trace.requests if r.system_version == number - 1), None)
        lines.append(
            f'<details id="system-{number}"{" open" if len(trace.systems) > 1 else ""}><summary>System prompt v{number}'
            f"{_since(first, number)}</summary><pre>{escape(text)}</pre></details>"
        )
    for number, tools in enumerate(trace.tools, start=1):
        first = next((r.number for r in trace.requests if r.tools_version == number - 1), None)
        names = ", ".join(str(tool.get("name", "?")) for tool in tools if isinstance(tool, dict))
        lines.append(
            f'<details id="tools-{number}"><summary>Tools v{number}{_since(first, number)}: {escape(names)}</summary>'
            f"<pre>{escape(pretty(tools))}</pre></details>"
        )
    return "".join(lines) + "</section>"


def _since(first: int | None, number: int) -> str:
    if first is None:
        return ""
    if number == 1:
        return f" (from request {first})"
    return f' <span class="changed">changed at request {first}</span>'
