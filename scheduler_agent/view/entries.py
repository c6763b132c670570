"""One entry of the list as HTML: its blocks, each `tool_use` linked to its `tool_result`, findings in place.

Everything here came from the model, a tool, a person or an imported calendar: every string is escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from scheduler_agent.view.trace import Finding


def attr(value: object) -> str:
    return escape(str(value), quote=True)


def pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def entry_html(index: int, entry: Any, findings: Sequence[Finding], label: str = "") -> str:
    role = entry.get("role") if isinstance(entry, dict) else None
    content = entry.get("content") if isinstance(entry, dict) else entry
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    head = f'<div class="entry-head">[{index}] {escape(str(role))}{escape(label)}</div>'
    parts = [
        f'<div class="entry role-{attr(role)}" id="e{index}" data-e="{index}">',
        head,
        *(_finding(f) for f in findings if f.block is None),
    ]
    if isinstance(blocks, list):
        for position, block in enumerate(blocks):
            parts.append(_block(block, [f for f in findings if f.block == position]))
    else:
        parts.append(f'<pre class="other">{escape(pretty(content))}</pre>')
    parts.append("</div>")
    return "".join(parts)


def _finding(finding: Finding) -> str:
    kind = "warning" if finding.warning else "error"
    return (
        f'<p class="finding {kind}">grammar {kind} (request {finding.request + 1}, {escape(finding.where)}): '
        f"{escape(finding.cause)}</p>"
    )


def _block(block: Any, findings: Sequence[Finding]) -> str:
    notes = "".join(_finding(f) for f in findings)
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return f'<div class="block text">{notes}<pre>{escape(str(block.get("text", "")))}</pre></div>'
    if kind == "tool_use":
        call = str(block.get("id", ""))
        return (
            f'<div class="block tool_use" id="call-{attr(call)}" data-call="{attr(call)}">{notes}'
            f'<div class="block-head">→ <b>{escape(str(block.get("name", "?")))}</b> '
            f'<a class="link" href="#res-{attr(call)}">{escape(call)}</a></div>'
            f"<pre>{escape(pretty(block.get('input')))}</pre></div>"
        )
    if kind == "tool_result":
        call = str(block.get("tool_use_id", ""))
        error = block.get("is_error") is True
        mark = ' <span class="is-error">is_error</span>' if error else ""
        return (
            f'<div class="block tool_result{" error" if error else ""}" id="res-{attr(call)}" '
            f'data-answers="{attr(call)}">{notes}'
            f'<div class="block-head">← result of <a class="link" href="#call-{attr(call)}">{escape(call)}</a>'
            f"{mark}</div>{_result_content(block.get('content'))}</div>"
        )
    return (
        f'<div class="block other">{notes}<div class="block-head">{escape(str(kind))}</div>'
        f"<pre>{escape(pretty(block))}</pre></div>"
    )


def _result_content(content: Any) -> str:
    if isinstance(content, str):
        return f"<pre>{escape(content)}</pre>"
    if isinstance(content, list):
        return "".join(
            f"<pre>{escape(str(part.get('text', '')))}</pre>"
            if isinstance(part, dict) and part.get("type") == "text"
            else f"<pre>{escape(pretty(part))}</pre>"
            for part in content
        )
    return f"<pre>{escape(pretty(content))}</pre>"
