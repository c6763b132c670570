"""What the trace viewer's page costs as the conversation grows: its size and the time to build it.

    python benchmarks/view_page.py

Builds a stored-conversation trace (one person's turn, then rounds of one call and its result; each
request sends the whole list so far) at each size, and times `build_page`. Prints figures; asserts
nothing. The size per entry stays flat: each entry is in the page once, each request a few references.
"""

from __future__ import annotations

import time
from typing import Any

from scheduler_agent.view.page import build_page
from scheduler_agent.view.trace import Exchange, assemble

SIZES = (11, 101, 1_001, 4_001)


def exchanges(entries: int) -> list[Exchange]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "Book Priya."}]}]
    out = []
    while len(messages) < entries:
        n = len(messages)
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "find_free_slots", "input": {"week": "2026-08-31"}}
        reply = {"content": [call], "stop_reason": "tool_use", "usage": {"input_tokens": 10 * n, "output_tokens": 20}}
        out.append(Exchange(messages[:n], "System.", [], "claude-sonnet-5-5", 100 * n, reply))
        messages.append({"role": "assistant", "content": [call]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "- Mon 2026-08-31 14:00-15:00"}
        messages.append({"role": "user", "content": [result]})
    return out


def main() -> None:
    print(f"{'entries':>8} {'requests':>9} {'entries sent':>13} {'page bytes':>11} {'bytes/entry':>12} {'build, s':>9}")
    for size in SIZES:
        given = exchanges(size)
        started = time.perf_counter()
        page = build_page(assemble(given))
        took = time.perf_counter() - started
        sent = sum(len(e.messages) for e in given)
        print(f"{size:>8,} {len(given):>9,} {sent:>13,} {len(page):>11,} {len(page) / size:>12,.0f} {took:>9.2f}")


if __name__ == "__main__":
    main()
