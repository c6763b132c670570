"""Large stored conversations, and the local cost of one loop iteration on them (run in its own process).

    python -m benchmarks.conversation build --db PATH --entries N [--open]
    python -m benchmarks.conversation iterate --db PATH --iterations K [--trace]

`build` stores a valid conversation of about N entries: the person's request, then rounds of a
`find_free_slots` call and its result, then either the model's answer (a complete conversation,
N even) or the answer and a new request from the person (`--open`: `resume` asks the model).

`iterate` opens the newest stored conversation the way `ask --cid` does, sends one more line and
lets the loop run K iterations against an in-process `send` that returns a ready reply (no HTTP, no
model), each asking for `find_free_slots` of a person who is not in the calendar (a tool body of a
few tens of microseconds, timed where the loop runs it and subtracted, as the time in `send` is).
The SDK is imported first, as `ask` imports it, so the interpreter's state (its heap, and whatever
`make_client` does after the import) is the one a real turn runs in. With `--trace` the CLI's trace
listens, writing to /dev/null. Prints JSON: the local seconds of each iteration after the first, and the
seconds of the reference workload (benchmarks/common.py) just before the turn and just after it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from datetime import date
from datetime import time as day_time
from pathlib import Path
from typing import Any

from benchmarks.common import DEMO_WEEK, PLACEHOLDER_KEY, TODAY, reference_workload

WINDOWS = (
    "Free windows of at least 30 minutes for Priya Raman (priya) and you in the week of Mon 2026-08-31, "
    "times in Europe/London:\n- Mon 2026-08-31 09:00-09:30\n- Mon 2026-08-31 14:00-15:00\n- Wed 2026-09-02 09:15-09:45"
)


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def messages_of(entries: int, *, open_end: bool) -> list[dict[str, Any]]:
    """A valid list of about `entries` entries (complete: even; open, ending with the person: odd)."""
    tail = 2 if open_end else 1
    rounds = max(0, (entries - 1 - tail) // 2)
    messages: list[dict[str, Any]] = [{"role": "user", "content": text("Find a slot with Priya next week.")}]
    for number in range(rounds):
        call: dict[str, Any] = {"type": "tool_use", "id": f"toolu_bench_{number:06d}", "name": "find_free_slots"}
        call["input"] = {"person": "priya", "week": DEMO_WEEK}
        messages.append({"role": "assistant", "content": [*text("Looking."), call]})
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": WINDOWS}
        messages.append({"role": "user", "content": [result]})
    messages.append({"role": "assistant", "content": text("Mon 14:00-15:00 is free for both of you.")})
    if open_end:
        messages.append({"role": "user", "content": text("Book Monday at 14:00.")})
    return messages


def pinned_clock(conn: Any) -> Any:
    from scheduler_agent.calendar.clock import Clock
    from scheduler_agent.calendar.people import get_owner

    return Clock.pinned_at(date.fromisoformat(TODAY), day_time(9, 0), get_owner(conn).tz)


def settings(max_iterations: int) -> Any:
    from scheduler_agent.session.session import Settings

    return Settings("claude-sonnet-5-5", max_iterations, strict=False)


def build(db: Path, entries: int, open_end: bool) -> int:
    """Store the conversation as `ask` would have (a Session's store, then the journal); returns its id."""
    from scheduler_agent.agent.events import ignore
    from scheduler_agent.session.session import Session
    from scheduler_agent.storage.conversations import Journal
    from scheduler_agent.storage.db import connect

    conn = connect(db)

    def never(request: Any) -> Any:
        raise AssertionError("build sends nothing")

    messages = messages_of(entries, open_end=open_end)
    session = Session(conn, pinned_clock(conn), never, settings(10), ignore, messages=messages[:1])
    session.store()
    session.sync()  # the row is written with the first turn, as `ask` writes it
    assert session.cid is not None
    # the mark a session stores with each reply: the list its last request sent passed the check
    from scheduler_agent.grammar.check import check

    sent = messages if open_end else messages[:-1]
    checked = 0 if check(sent, mode="request") else len(sent)
    Journal(conn, session.cid, messages[:1]).sync(messages, checked=checked)
    conn.close()
    return session.cid


def reply(number: int, final: bool) -> dict[str, Any]:
    content = text("Done.")
    if not final:
        call: dict[str, Any] = {"type": "tool_use", "id": f"toolu_iter_{number:04d}", "name": "find_free_slots"}
        call["input"] = {"person": "nobody", "week": DEMO_WEEK}
        content = [*text("Looking."), call]
    usage = {"input_tokens": 1000, "output_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return {
        "id": f"msg_bench{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": content,
        "stop_reason": "end_turn" if final else "tool_use",
        "stop_sequence": None,
        "usage": usage,
    }


def iterate(db: Path, iterations: int, trace: bool) -> tuple[list[float], tuple[float, float]]:
    """The local seconds of each iteration after the first, and the reference workload's seconds just before the
    turn and just after it (benchmarks/common.py)."""
    from scheduler_agent.api.client import make_client

    make_client(api_key=PLACEHOLDER_KEY, base_url="http://127.0.0.1:9")  # the SDK loaded, as in `ask`

    from scheduler_agent.agent.events import RequestSent, ignore
    from scheduler_agent.calendar.tools import CalendarTools
    from scheduler_agent.session.session import Session
    from scheduler_agent.storage import conversations
    from scheduler_agent.storage.db import connect

    conn = connect(db)
    clock = pinned_clock(conn)
    replies = [reply(n, final=n == iterations) for n in range(iterations + 1)]
    outside = [0.0]  # seconds spent so far in `send` and in the tool bodies: not the loop's own

    def send(request: Any) -> Any:
        start = time.perf_counter()
        body = replies[len(stamps) - 1]
        outside[0] += time.perf_counter() - start
        return body

    stamps: list[tuple[float, float]] = []  # (moment, seconds outside the loop so far) at each RequestSent
    listener: Any = ignore
    if trace:
        from scheduler_agent.cli.render import Trace

        listener = Trace(open(os.devnull, "w"))  # noqa: SIM115 (lives as long as the process)

    def report(event: Any) -> None:
        if isinstance(event, RequestSent):
            stamps.append((time.perf_counter(), outside[0]))
        listener(event)

    cid = conversations.latest_id(conn)
    assert cid is not None, "build a conversation first"
    session = Session.stored(conn, cid, send, settings(iterations + 5), report, clock)
    tools: CalendarTools = session.toolbox  # type: ignore[assignment]  # no `decide`: the tools themselves
    run = tools.run

    def timed_run(name: str, arguments: Any, tool_use_id: str, deadline: Any) -> str:
        start = time.perf_counter()
        try:
            return run(name, arguments, tool_use_id, deadline)
        finally:
            outside[0] += time.perf_counter() - start

    tools.run = timed_run  # type: ignore[method-assign]
    before = reference_workload()  # how fast the machine runs right then: see `loop_rows.per_iteration`
    session.ask("And the week after?")
    after = reference_workload()
    local = [now - then - (out_now - out_then) for (then, out_then), (now, out_now) in itertools.pairwise(stamps[1:])]
    return local, (before, after)


def first_request(db: Path) -> float:
    """Seconds from opening the stored conversation to its first request's arrival at a loopback server, in a
    process that has imported the SDK already: resume's own work (load, check, build, encode, send) alone."""
    from benchmarks.first_request import FirstRequestServer
    from scheduler_agent.agent.events import ignore
    from scheduler_agent.api.client import ModelAPI, make_client
    from scheduler_agent.session.session import Session
    from scheduler_agent.storage import conversations
    from scheduler_agent.storage.db import connect

    with FirstRequestServer() as server:
        api = ModelAPI(make_client(api_key=PLACEHOLDER_KEY, base_url=server.url, max_retries=0))
        start = time.perf_counter()
        conn = connect(db)
        cid = conversations.latest_id(conn)
        assert cid is not None, "build a conversation first"
        Session.stored(conn, cid, api.send, settings(10), ignore, None).resume()
        return server.arrivals[0] - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("build", "iterate", "first-request"))
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--entries", type=int, default=100)
    parser.add_argument("--open", action="store_true")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args(argv)
    if args.action == "build":
        print(json.dumps({"cid": build(args.db, args.entries, args.open)}))
    elif args.action == "first-request":
        print(json.dumps({"seconds": first_request(args.db)}))
    else:
        local, reference = iterate(args.db, args.iterations, args.trace)
        print(json.dumps({"local_seconds": local, "reference_seconds": reference}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
