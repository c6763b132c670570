"""What assembling a streamed reply costs as its text grows: it must stay linear.

    python benchmarks/sse_assembly.py

Builds the events of one text block cut into 16-byte deltas and times `sse.assemble` on them.
Before the text was joined once per block (`text = text + delta` on every delta), 1.6 MB took
over 60 s. Prints figures; asserts nothing.
"""

from __future__ import annotations

import time
from typing import Any

from scheduler_agent.api.sse import assemble

SIZES = (100_000, 400_000, 1_600_000, 6_400_000)
PIECE = 16


def events(size: int) -> list[tuple[str, dict[str, Any]]]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {}}
    found: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": message})]
    found.append(("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}))
    delta = {"type": "text_delta", "text": "x" * PIECE}
    found += [("content_block_delta", {"index": 0, "delta": delta})] * (size // PIECE)
    found += [("content_block_stop", {"index": 0}), ("message_delta", {"delta": {"stop_reason": "end_turn"}})]
    return [*found, ("message_stop", {})]


def main() -> None:
    print(f"{'text bytes':>11} {'deltas':>8} {'assemble, s':>12} {'µs per delta':>13}")
    for size in SIZES:
        stream = events(size)
        began = time.perf_counter()
        reply = assemble(stream)
        took = time.perf_counter() - began
        assert len(reply["content"][0]["text"]) == size // PIECE * PIECE
        print(f"{size:>11,} {len(stream) - 5:>8,} {took:>12.3f} {took / (len(stream) - 5) * 1e6:>13.2f}")


if __name__ == "__main__":
    main()
