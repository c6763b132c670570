"""What the grammar check costs per request as the list grows: incremental against a full walk.

    python benchmarks/grammar_check.py

Builds a valid conversation round by round (one call and its result per round) and, at each
size, times the check of the request about to be sent. Prints figures; asserts nothing.
"""

from __future__ import annotations

import time
from typing import Any

from scheduler_agent.grammar.check import IncrementalChecker, check

SIZES = (11, 101, 1_001, 4_001)


def grown(rounds: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "Book Priya."}]}]
    for i in range(rounds):
        call = {"type": "tool_use", "id": f"toolu_{i}", "name": "find_free_slots", "input": {"week": "2026-08-31"}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Looking."}, call]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "- Mon 2026-08-31 14:00-15:00"}
        messages.append({"role": "user", "content": [result]})
    return messages


def main() -> None:
    print(f"{'entries':>8} {'full check, µs':>15} {'incremental, µs':>16} {'entries examined':>17}")
    for size in SIZES:
        messages = grown((size - 1) // 2)
        start = time.perf_counter()
        repeats = 20
        for _ in range(repeats):
            check(messages, mode="request")
        full = (time.perf_counter() - start) / repeats * 1e6
        newest = messages[-2:]
        del messages[-2:]
        checker = IncrementalChecker()
        checker.check(messages, mode="request")  # checked when it was sent, one iteration earlier
        messages.extend(newest)  # the same list grows by a round, as in the loop
        start = time.perf_counter()
        checker.check(messages, mode="request")
        incremental = (time.perf_counter() - start) * 1e6
        print(f"{size:>8} {full:>15,.0f} {incremental:>16,.0f} {checker.examined:>17}")


if __name__ == "__main__":
    main()
