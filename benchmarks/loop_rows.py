"""The rows measured inside a process: one iteration of the loop outside `send`, and the calendar tools at scale.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEMO_WEEK,
    NEUTRAL_CWD,
    Row,
    Sample,
    Timed,
    bench_env,
    copy_db,
    fmt_ms,
    interleaved,
    interleaved_timed,
    module_command,
    ratio_text,
)
from benchmarks.conversation import pinned_clock

ITERATION_GOAL, SLOTS_GOAL, CONFLICT_GOAL = 0.0003, 0.001, 0.001
ITERATION_RUNS = 3  # times the suite's runs, in processes: see `per_iteration`


# What the row measures: the loop's own work in an iteration (check, store, build, dispatch), with no `send`
# (no encoding of the request, no HTTP, no parse of the reply) and no tool body; benchmarks/http_iteration.py
# measures an iteration with `send` in it.
ITERATION_FIGURE = "one iteration of the loop outside `send` and the tool"
FULL_SPEED = 1.15  # a process ran at full speed when its reference workload took at most this times the fastest


@dataclass(frozen=True)
class IterationRun:
    """One process: the median local seconds of its iterations, and its reference workload just before and after."""

    seconds: float
    reference: tuple[float, float]


def iteration_run(folder: Path, built: Path, iterations: int, trace: bool) -> IterationRun:
    """One process: its iterations (after the first) on a copy of `built`, and how fast the machine ran then."""
    db = copy_db(built, folder / "iterate.db")
    command = [*module_command("conversation"), "iterate", "--db", str(db)]
    command += ["--iterations", str(iterations), *(["--trace"] if trace else [])]
    done = subprocess.run(command, capture_output=True, env=bench_env(), check=False, cwd=NEUTRAL_CWD)
    if done.returncode != 0:
        raise RuntimeError(f"the iteration worker failed: {done.stderr.decode(errors='replace')[-400:]}")
    found = json.loads(done.stdout)
    before, after = found["reference_seconds"]
    return IterationRun(statistics.median(found["local_seconds"]), (before, after))


def per_iteration(
    folder: Path, small: Path, large: Path, labels: tuple[str, str], runs: int, iterations: int = 10
) -> list[Row]:
    """Check, store, build, dispatch (no model call, no tool body): at a small and a large list, trace off and on.

    One process is steady, but this machine is not: its host runs it at full speed, or at about half of it, for
    seconds to minutes at a time, and a process's iterations cost a steady multiple of the reference workload
    (benchmarks/common.py) measured in the same process, at either speed (0.45-0.5 at 100 entries). So, as
    pyperf does, each figure is over many processes (ITERATION_RUNS times the suite's runs: each process's
    median, and the median of those), and each process also times the reference workload just before its turn
    and just after it. A second row per
    figure takes only the processes that ran at full speed (`_at_full_speed`: a criterion that does not look at
    the code's own times)."""
    runs *= ITERATION_RUNS
    measured: dict[tuple[bool, bool], list[IterationRun]] = {}  # (the large list?, the trace?) -> its processes
    for trace in (False, True):

        def run(built: Path, key: tuple[bool, bool]) -> Callable[[], float]:
            def one() -> float:
                found = iteration_run(folder, built, iterations, key[1])
                measured.setdefault(key, []).append(found)
                return found.seconds

            return one

        interleaved(runs, run(small, (False, trace)), run(large, (True, trace)))
    rows = []
    for trace in (False, True):
        how = "through the CLI's trace" if trace else "no trace"
        for full_speed in (False, True):
            kept = [measured[(big, trace)] for big in (False, True)]
            kept = [_at_full_speed(series) for series in kept] if full_speed else kept
            rows += _iteration_rows(labels, how, kept, len(measured[(False, trace)]) if full_speed else None)
    return rows


def _at_full_speed(series: list[IterationRun]) -> list[IterationRun]:
    """The processes of one series whose reference workload took, before and after, at most FULL_SPEED times the
    fastest of the series: compared within one series (the same list, the same listener), nothing but the machine
    differs between the processes compared. A series none of whose processes ran at full speed keeps too many."""
    fastest = min(min(found.reference) for found in series)
    return [found for found in series if max(found.reference) <= FULL_SPEED * fastest]


def _iteration_rows(labels: tuple[str, str], how: str, kept: list[list[IterationRun]], of: int | None) -> list[Row]:
    """The small list's row and the large list's (against the small one); `of`: out of how many processes, when
    `kept` holds only those that ran at full speed."""
    goal = "<= 0.3 ms"
    few, many = (Sample(tuple(found.seconds for found in series)) for series in kept)
    rows = []
    for label, sample, series in ((labels[0], few, kept[0]), (labels[1], many, kept[1])):
        figure = f"{ITERATION_FIGURE}, {label} entries, {how}"
        if of is not None:
            figure += f", at the machine's full speed ({len(series)} of {of} processes)"
        if label == labels[1]:
            figure += f" (baseline: {labels[0]})"
        if len(few.values) < 3 or len(sample.values) < 3:
            rows.append(Row(figure, "-", goal=goal, met=None))  # too few processes ran at full speed to say
        elif label == labels[0]:
            rows.append(Row(figure, sample.ms(), "-", "-", goal, sample.median <= ITERATION_GOAL))
        else:
            # the processes kept at full speed are not the same rounds for both lists: then only the medians pair
            ratio = ratio_text(many, few) if of is None else f"{many.median / few.median:.2f}x"
            rows.append(Row(figure, many.ms(), few.ms(), ratio, f"{goal}, flat (~1x)", many.median <= ITERATION_GOAL))
    return rows


def tool_call(db: Path) -> Callable[[str, dict[str, Any]], Timed]:
    """A timer of one tool call on the calendar at `db`, as the loop makes it: its wall time, and the CPU time of
    the thread that made it (a tool call waits for nothing but the file's pages, which are in memory)."""
    from scheduler_agent.agent.deadline import Deadline
    from scheduler_agent.calendar.tools import CalendarTools
    from scheduler_agent.storage.db import connect

    conn = connect(db)
    tools = CalendarTools(conn, pinned_clock(conn))
    ids = iter(range(1_000_000))

    def call(name: str, arguments: dict[str, Any]) -> Timed:
        wall, cpu = time.perf_counter(), time.thread_time()
        tools.run(name, arguments, f"toolu_bench_{next(ids)}", Deadline.after(30))
        return Timed(time.perf_counter() - wall, time.thread_time() - cpu)

    return call


def best_of(call: Callable[[], Timed], times: int = 7) -> Timed:
    """The medians of a few calls in a row (a tool is called warm, in a loop that has the file open)."""
    found = [call() for _ in range(times)]
    return Timed(statistics.median(t.wall for t in found), statistics.median(t.cpu for t in found))


def free_slots(demo: Path, large: Path, runs: int, label: str) -> Row:
    """Judged on CPU time, wall time beside it: on a loaded machine a call's wall time is mostly its wait for a core."""
    args = {"person": "priya", "week": DEMO_WEEK}
    big, small = tool_call(large), tool_call(demo)
    (ours, ours_wall), (baseline, baseline_wall) = interleaved_timed(
        runs,
        lambda: best_of(lambda: big("find_free_slots", args)),
        lambda: best_of(lambda: small("find_free_slots", args)),
    )
    figure = f"`find_free_slots` for one week, {label} events in the calendar (baseline: the demo calendar, 28)"
    return Row(
        figure,
        f"CPU {ours.ms()}; wall {ours_wall.ms()}",
        f"CPU {baseline.ms()}; wall {baseline_wall.ms()}",
        f"CPU {ratio_text(ours, baseline)}; wall {ours_wall.median / baseline_wall.median:.2f}x",
        "<= 1 ms (CPU)",
        ours.median <= SLOTS_GOAL,
    )


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
    cost the same on both files). Each run books a different free slot, on copies of both files. Judged on
    the CPU time of the thread, as `free_slots` is: on a loaded machine a call's wall time is mostly its wait
    for a core.
    """
    starts = iter(free_starts(demo, runs))
    big, small = tool_call(copy_db(large, folder / "book-large.db")), tool_call(copy_db(demo, folder / "book-demo.db"))
    pending: list[str] = []

    def book(call: Callable[[str, dict[str, Any]], Timed]) -> float:
        if not pending:
            pending.extend([next(starts)] * 2)  # the same slot on both files, then the next
        return call("create_event", {"with": "priya", "start": pending.pop(), "minutes": 30}).cpu

    ours, baseline = interleaved(runs, lambda: book(big), lambda: book(small))
    above = Sample(tuple(a - b for a, b in zip(ours.values, baseline.values, strict=True)))
    figure = f"`create_event`'s conflict check at {label} events (a booking, above the same on the demo calendar)"
    row_ours = f"CPU {above.ms(signed=True)}; whole call {fmt_ms(ours.median)}"
    return Row(
        figure,
        row_ours,
        f"CPU {baseline.ms()}",
        ratio_text(ours, baseline),
        "<= +1 ms (CPU)",
        above.median <= CONFLICT_GOAL,
    )
