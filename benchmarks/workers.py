"""Many workers, one database (issue 16): does throughput grow with the workers when the model dominates?

    python -m benchmarks.workers                     # 100 conversations x 3 replies, 300 ms each; 1, 2, 4 workers
    python -m benchmarks.workers --store both        # SQLite, then a temporary PostgreSQL server
    python -m benchmarks.workers --quick             # 8 conversations, 50 ms replies: checks that it runs

Each worker is a `scheduler-agent worker` process (one turn at a time) against a loopback scripted
API that answers every request after the delay, so the model's time dominates as in life. The
workers are started and idle before the turns are submitted; the time is from the first claim to
the last completion, as the queue recorded them (worker start-up excluded). The local cost per
iteration is what one worker spends beyond the model's delay: the SDK, the checks, the tools and
the store, of which the database is the part that differs between SQLite and PostgreSQL.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.common import Row, cli, print_table

GOAL = 3.5  # 4 workers at least this many times one worker's throughput


@dataclass(frozen=True)
class Run:
    workers: int
    seconds: float  # first claim to last completion
    iterations: int


def worker_command() -> list[str]:
    return [*cli(), "worker"]


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def one_run(target: str, workers: int, conversations: int, delay: float) -> Run:
    """Retired with the home-made queue (issue 36): the workers run on Temporal now, and these rows are being
    ported to a Temporal dev server."""
    raise RuntimeError("benchmarks.workers measured the retired work queue; the workers run on Temporal now (issue 36)")


def _open(db: Any, target: str) -> Any:
    """The store at `target`, migrated: a SQLite file, or a PostgreSQL URL (storage.db.open_db takes both)."""
    return db.open_db(target if target.startswith("postgresql://") else Path(target))


@contextmanager
def databases(store: str, folder: Path) -> Iterator[Callable[[str], str]]:
    """Where each run's new, empty database is: a file in `folder`, or a database on a PostgreSQL server
    started for the benchmark (scheduler_agent/testing/postgres.py), durable as in production."""
    if store == "sqlite":
        yield lambda name: str(folder / f"{name}.db")
        return
    from scheduler_agent.testing.postgres import PostgresServer

    server = PostgresServer(durable=True).start()
    try:
        yield lambda name: server.new_database()
    finally:
        server.stop()


def suite_rows(folder: Path, quick: bool, say: Callable[[str], None]) -> list[Row]:
    """The suite's rows (benchmarks/run.py): SQLite, then PostgreSQL where a server can be started here.

    `--quick` only checks that the rows run: 4 conversations, 1 and 2 workers, SQLite.

    Not measured since issue 36: the workers run on Temporal now, and these rows still drive the retired queue
    (its claim times, `worker --lease`); they are to be ported to a Temporal dev server."""
    why = "not measured: the workers run on Temporal now (issue 36); this row is still to be ported to it"
    return [Row("workers (SQLite)", why), Row("workers (PostgreSQL)", why)]


def _queue_rows(folder: Path, quick: bool, say: Callable[[str], None]) -> list[Row]:
    """The rows as they were measured on the retired queue (issue 16), kept until the port."""
    if quick:
        skipped = Row("workers (PostgreSQL)", "not measured in --quick: `python -m benchmarks.workers --store both`")
        return [*rows(folder, 4, 0.05, [1, 2], "sqlite", say), skipped]
    table = rows(folder, 100, 0.3, [1, 2, 4], "sqlite", say)
    from scheduler_agent.testing.postgres import ServerUnavailable

    try:
        table += rows(folder, 100, 0.3, [1, 2, 4], "postgresql", say)
    except ServerUnavailable as exc:
        table.append(Row("workers (PostgreSQL)", f"not measured: no PostgreSQL server here ({exc})"))
    return table


def rows(
    folder: Path, conversations: int, delay: float, counts: list[int], store: str, say: Callable[[str], None]
) -> list[Row]:
    with databases(store, folder) as new_database:
        return _rows(new_database, conversations, delay, counts, store, say)


def _rows(
    new_database: Callable[[str], str],
    conversations: int,
    delay: float,
    counts: list[int],
    store: str,
    say: Callable[[str], None],
) -> list[Row]:
    runs: list[Run] = []
    for count in counts:
        started = time.perf_counter()
        runs.append(one_run(new_database(f"workers-{count}"), count, conversations, delay))
        say(f"  {count} worker(s): {runs[-1].seconds:.1f} s (in {time.perf_counter() - started:.1f} s with start-up)")
    name = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}[store]
    base = runs[0]
    table: list[Row] = []
    for run in runs:
        speedup = base.seconds / run.seconds * (run.iterations / base.iterations)
        claim = run.workers == 4 and delay >= 0.3  # the claim is for a model that takes its time
        goal = f">= {GOAL}x" if claim else "-"
        table.append(
            Row(
                f"workers ({name}): {conversations} conversations x 3 replies, {delay * 1000:.0f} ms each, "
                f"{run.workers} worker(s)",
                f"{run.seconds:.1f} s, {conversations / run.seconds:.2f} turns/s",
                f"1 worker: {base.seconds:.1f} s" if run.workers != 1 else "-",
                f"{speedup:.2f}x",
                goal,
                speedup >= GOAL if claim else None,
            )
        )
    per_iteration = base.seconds / base.iterations - delay
    table.append(
        Row(
            f"workers ({name}): local cost per iteration, one worker (all but the model's delay)",
            f"{per_iteration * 1000:.1f} ms",
        )
    )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workers", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 conversations, 50 ms replies")
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.3, help="seconds the scripted API takes per reply")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated (the first is the base)")
    parser.add_argument(
        "--store",
        choices=("sqlite", "postgresql", "both"),
        default="sqlite",
        help="the database (PostgreSQL: a temporary server, as the tests start one)",
    )
    parser.add_argument(
        "--suite-rows",
        action="store_true",
        help="print the suite's rows (benchmarks/run.py) as JSON, one object a row, and nothing else on stdout",
    )
    args = parser.parse_args(argv)
    if args.suite_rows:
        with tempfile.TemporaryDirectory(prefix="scheduler-agent-bench-workers-") as tmp:
            found = suite_rows(Path(tmp), args.quick, lambda line: print(line, file=sys.stderr, flush=True))
        print(json.dumps([dataclasses.asdict(row) for row in found]))
        return 0
    raise SystemExit("benchmarks.workers measures the retired queue; the workers run on Temporal now (issue 36)")
    conversations, delay = (8, 0.05) if args.quick else (args.conversations, args.delay)
    counts = [int(n) for n in args.workers.split(",")]

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="scheduler-agent-bench-workers-") as tmp:
        stores = ["sqlite", "postgresql"] if args.store == "both" else [args.store]
        table = [row for store in stores for row in rows(Path(tmp), conversations, delay, counts, store, say)]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"workers benchmark: {os.cpu_count()} cores, load average {load}{'; QUICK' if args.quick else ''}\n")
    print_table(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
