"""The database's own overhead per loop iteration, PostgreSQL beside SQLite.

What the store writes in one iteration of a stored turn, exactly as `Session` writes it: the lease renewed
before the request, the reply and the assistant entry in one transaction on arrival, the lease renewed
before the tool runs, the round's tool_result entry in one transaction. Nothing else (no model, no tool
body, no check), so the figure is the database's part of an iteration. SQLite is a file in the suite's
folder (WAL, synchronous=NORMAL, as `connect` opens it); PostgreSQL is the server at
SCHEDULER_AGENT_BENCH_PG (a URL) or, without it, one started on loopback from /usr/lib/postgresql
(scheduler_agent/testing/postgres.py) with its defaults: fsync on, synchronous_commit on, as in production.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from benchmarks.common import Row, interleaved, ratio_text

FIGURE = "the database's own overhead per iteration"


def iteration_writes(location: Path | str, iterations: int) -> float:
    """The median seconds of `iterations` iterations' writes on a new conversation at `location`."""
    from scheduler_agent.storage import conversations, lease
    from scheduler_agent.storage.db import open_db

    conn = open_db(location)
    context = conversations.Context("claude-sonnet-5-5", 1024, "You schedule meetings.", [])
    cid = conversations.create(conn, context, started_on="2026-08-27", clock_pin=None)
    holder = lease.Holder.me()
    lease.claim(conn, cid, holder)
    messages: list[dict[str, object]] = [{"role": "user", "content": [{"type": "text", "text": "Book it."}]}]
    journal = conversations.Journal(conn, cid, [])
    journal.sync(messages)
    times = []
    for n in range(iterations):
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "find_free_slots", "input": {"person": "priya"}}
        reply = conversations.Reply(len(messages), n + 1, "claude-sonnet-5-5", "tool_use", {"output_tokens": 40}, 900)
        started = time.perf_counter()
        lease.renew(conn, cid, holder)  # RequestSent
        messages.append({"role": "assistant", "content": [call]})
        journal.sync(messages, reply)  # the reply, stored on arrival
        lease.renew(conn, cid, holder)  # ToolCalled
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": "Free: Mon 14:00-15:00."}
        messages.append({"role": "user", "content": [result]})
        journal.sync(messages)  # the round's results, one transaction
        times.append(time.perf_counter() - started)
    lease.release(conn, cid, holder)
    conn.close()
    return statistics.median(times[1:] if len(times) > 1 else times)


@contextmanager
def postgres_url(folder: Path) -> Iterator[str]:
    """SCHEDULER_AGENT_BENCH_PG, or a new database on a server started for the suite."""
    given = os.environ.get("SCHEDULER_AGENT_BENCH_PG")
    if given:
        yield given
        return
    from scheduler_agent.testing.postgres import PostgresServer

    with PostgresServer(durable=True) as server:
        yield server.new_database()


def per_iteration_overhead(folder: Path, runs: int, iterations: int) -> list[Row]:
    """Two rows: PostgreSQL as installed (a WAL flush per commit), and with synchronous_commit off, the
    setting that matches SQLite's synchronous=NORMAL (a crash loses no committed row; a power cut may lose
    the last commits), each beside SQLite."""
    try:
        import psycopg  # noqa: F401  # the `postgres` extra
    except ImportError:
        return [Row(f"{FIGURE}: PostgreSQL", "not measured: pip install -e '.[postgres]'")]
    from scheduler_agent.testing.postgres import ServerUnavailable

    with ExitStack() as stack:
        try:
            url = stack.enter_context(postgres_url(folder))
        except ServerUnavailable as exc:
            return [Row(f"{FIGURE}: PostgreSQL", f"not measured: {exc}"[:200])]
        relaxed = url + ("&" if "?" in url else "?") + "options=-c%20synchronous_commit%3Doff"
        counter = iter(range(1_000_000))

        def on(location: Callable[[], Path | str]) -> Callable[[], float]:
            return lambda: iteration_writes(location(), iterations)

        durable, fast, sqlite = interleaved(
            runs, on(lambda: url), on(lambda: relaxed), on(lambda: folder / f"overhead-{next(counter)}.db")
        )
    what = f"{FIGURE} (renew, reply + entry, renew, results: 4 commits; {iterations} iterations a run)"
    return [
        Row(
            f"{what}, PostgreSQL on loopback, a WAL flush per commit (baseline: SQLite, WAL, synchronous=NORMAL)",
            durable.ms(),
            sqlite.ms(),
            ratio_text(durable, sqlite),
            "measured beside SQLite",
            None,
        ),
        Row(
            f"{what}, PostgreSQL with synchronous_commit=off, SQLite's guarantee (baseline: SQLite)",
            fast.ms(),
            sqlite.ms(),
            ratio_text(fast, sqlite),
            "measured beside SQLite",
            None,
        ),
    ]
