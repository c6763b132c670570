"""The rows measured inside a process: one loop iteration's local cost, and the calendar tools at scale.

The tools are called as the loop calls them, `CalendarTools(conn, clock).run(name, args, id, deadline)`,
on a calendar opened with `storage.db.connect`; the iteration is timed by benchmarks/conversation.py
in a process of its own that has imported the SDK, as `ask` has.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEMO_WEEK,
    NEUTRAL_CWD,
    Row,
    Sample,
    bench_env,
    copy_db,
    fmt_ms,
    interleaved,
    module_command,
    ratio_text,
)
from benchmarks.conversation import pinned_clock

ITERATION_GOAL, SLOTS_GOAL, CONFLICT_GOAL = 0.0003, 0.001, 0.001
ITERATION_RUNS = 3  # times the suite's runs, in processes: see `per_iteration`


def iteration_run(folder: Path, built: Path, iterations: int, trace: bool) -> float:
    """One process: the median local seconds of its iterations (after the first) on a copy of `built`."""
    db = copy_db(built, folder / "iterate.db")
    command = [*module_command("conversation"), "iterate", "--db", str(db)]
    command += ["--iterations", str(iterations), *(["--trace"] if trace else [])]
    done = subprocess.run(command, capture_output=True, env=bench_env(), check=False, cwd=NEUTRAL_CWD)
    if done.returncode != 0:
        raise RuntimeError(f"the iteration worker failed: {done.stderr.decode(errors='replace')[-400:]}")
    values: list[float] = json.loads(done.stdout)["local_seconds"]
    return statistics.median(values)


def per_iteration(
    folder: Path, small: Path, large: Path, labels: tuple[str, str], runs: int, iterations: int = 10
) -> list[Row]:
    """Check, store, build, dispatch (no model call, no tool body): at a small and a large list, trace off and on.

    One process is steady (its iterations agree within a few percent), but processes differ: on this machine the
    same command runs at about 0.28 ms in one process and 0.5 ms in the next, whichever core it is on and
    whatever its hash seed. So, as pyperf does, the figure is over many processes: ITERATION_RUNS times the
    suite's runs, each process's median, and the median of those."""
    runs *= ITERATION_RUNS
    rows = []
    goal = "<= 0.3 ms"
    for trace in (False, True):
        how = "through the CLI's trace" if trace else "no trace"

        def run(built: Path, trace: bool = trace) -> Callable[[], float]:
            return lambda: iteration_run(folder, built, iterations, trace)

        few, many = interleaved(runs, run(small), run(large))
        figure = f"one loop iteration's local cost, {labels[0]} entries, {how}"
        rows.append(Row(figure, few.ms(), "-", "-", goal, few.median <= ITERATION_GOAL))
        figure = f"one loop iteration's local cost, {labels[1]} entries, {how} (baseline: {labels[0]})"
        ratio = ratio_text(many, few)
        rows.append(Row(figure, many.ms(), few.ms(), ratio, f"{goal}, flat (~1x)", many.median <= ITERATION_GOAL))
    return rows


def tool_call(db: Path) -> Callable[[str, dict[str, Any]], float]:
    """A timer of one tool call on the calendar at `db`, as the loop makes it."""
    from scheduler_agent.agent.deadline import Deadline
    from scheduler_agent.calendar.tools import CalendarTools
    from scheduler_agent.storage.db import connect

    conn = connect(db)
    tools = CalendarTools(conn, pinned_clock(conn))
    ids = iter(range(1_000_000))

    def call(name: str, arguments: dict[str, Any]) -> float:
        start = time.perf_counter()
        tools.run(name, arguments, f"toolu_bench_{next(ids)}", Deadline.after(30))
        return time.perf_counter() - start

    return call


def best_of(call: Callable[[], float], times: int = 7) -> float:
    """The median of a few calls in a row (a tool is called warm, in a loop that has the file open)."""
    return statistics.median(call() for _ in range(times))


def free_slots(demo: Path, large: Path, runs: int, label: str) -> Row:
    args = {"person": "priya", "week": DEMO_WEEK}
    big, small = tool_call(large), tool_call(demo)
    ours, baseline = interleaved(
        runs,
        lambda: best_of(lambda: big("find_free_slots", args)),
        lambda: best_of(lambda: small("find_free_slots", args)),
    )
    figure = f"`find_free_slots` for one week, {label} events in the calendar (baseline: the demo calendar, 28)"
    return Row(figure, ours.ms(), baseline.ms(), ratio_text(ours, baseline), "<= 1 ms", ours.median <= SLOTS_GOAL)


WINDOW = re.compile(r"^- \w{3} (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2})-", re.MULTILINE)


def free_starts(demo: Path, count: int) -> list[str]:
    """`count` meeting starts free for the owner and Priya in the demo calendar, one per week after the demo's."""
    from datetime import date, timedelta

    from scheduler_agent.agent.deadline import Deadline
    from scheduler_agent.calendar.tools import CalendarTools
    from scheduler_agent.storage.db import connect

    conn = connect(demo)
    tools = CalendarTools(conn, pinned_clock(conn))
    starts: list[str] = []
    week = date.fromisoformat(DEMO_WEEK)
    while len(starts) < count:
        week += timedelta(days=7)
        text = tools.run("find_free_slots", {"person": "priya", "week": week.isoformat()}, "t", Deadline.after(30))
        found = WINDOW.search(text)
        if found:
            starts.append(f"{found[1]}T{found[2]}")
    conn.close()
    return starts


def conflict_check(folder: Path, demo: Path, large: Path, runs: int, label: str) -> Row:
    """A booking that passes every check, at `label` events, above the same booking on the demo calendar.

    The difference is what the large calendar adds: the conflict check (the insert and its commit
    cost the same on both files). Each run books a different free slot, on copies of both files.
    """
    starts = iter(free_starts(demo, runs))
    big, small = tool_call(copy_db(large, folder / "book-large.db")), tool_call(copy_db(demo, folder / "book-demo.db"))
    pending: list[str] = []

    def book(call: Callable[[str, dict[str, Any]], float]) -> float:
        if not pending:
            pending.extend([next(starts)] * 2)  # the same slot on both files, then the next
        return call("create_event", {"with": "priya", "start": pending.pop(), "minutes": 30})

    ours, baseline = interleaved(runs, lambda: book(big), lambda: book(small))
    above = Sample(tuple(a - b for a, b in zip(ours.values, baseline.values, strict=True)))
    figure = f"`create_event`'s conflict check at {label} events (a booking, above the same on the demo calendar)"
    row_ours = f"{above.ms(signed=True)}; whole call {fmt_ms(ours.median)}"
    return Row(figure, row_ours, baseline.ms(), ratio_text(ours, baseline), "<= +1 ms", above.median <= CONFLICT_GOAL)
