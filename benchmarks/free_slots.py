"""What one week's free-slot search and conflict check cost: the demo calendar against a big one.

    python benchmarks/free_slots.py [--runs N] [--singles N] [--series N]

The big calendar is the demo calendar plus 100 repeating series (weekly and daily, begun in 2024-2026,
a few with EXDATEs) and 100,000 single events spread over 2020-2031 among five people, built in a
temporary folder. Each figure is the median (and the spread, min-max) of N runs, in milliseconds of the
thread's CPU time:
`find_free_slots` for the week of 2026-08-31, the same for a week in 2031, and for the last week the tool
searches (ten years after its today, 2026-08-27: the week of 2036-08-25), and `create_event`'s conflict
check's read (both attendees' busy time over a half hour). A series is materialised about a year ahead when
it is written; the first search of a week past that materialises a span around it for every series
(calendar/series.py, `reach`), which the figures after the first search read: the first search of the week of
2036-08-25 (one run, after the week of 2031 took the far span elsewhere) has a row of its own. The last
column is each figure against its goal where it has one: any week up to ten years ahead under 1 ms on the big
calendar (issue 38). Prints a table; asserts nothing. Absolute times vary by machine (and with what else runs
on it): the ratios are the claim.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock_time
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, text

from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.people import list_people
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.calendar.types import Recurrence
from scheduler_agent.storage import db

LONDON = ZoneInfo("Europe/London")
WEEK = "2026-08-31"
FAR_WEEK = "2031-03-03"
LAST_WEEK = "2036-08-25"  # the week holding 2036-08-27: ten years after the tools' today, the last one searched
GOAL_MS = {"find_free_slots, week of 2036-08-25": 1.0}
FIRST = "the first search of 2036-08-25 (1 run)"
RULES = ("FREQ=WEEKLY;BYDAY=MO", "FREQ=WEEKLY;BYDAY=TU,TH", "FREQ=DAILY", "FREQ=WEEKLY;INTERVAL=2;BYDAY=WE")


def build(path: Path, singles: int, series: int) -> tuple[Connection, float]:
    """The demo calendar plus `series` repeating events and `singles` single events; and the build time."""
    began = time.perf_counter()
    conn = db.connect(path)
    seed_demo(conn)
    people = ["you", *(person.key for person in list_people(conn))]
    rng = random.Random(12)
    for number in range(series):
        start = datetime(2024 + number % 3, 1 + number % 12, 1 + number % 27, 7 + number % 11, 0, tzinfo=LONDON)
        exdates = (start + timedelta(days=7 * 20),) if number % 5 == 0 else ()
        add_event(
            conn,
            f"Series {number}",
            start,
            start + timedelta(minutes=15 + 15 * (number % 4)),
            [people[number % len(people)]],
            tz="Europe/London",
            recurrence=Recurrence(RULES[number % len(RULES)], exdates=exdates),
        )
    first = datetime(2020, 1, 1, tzinfo=UTC)
    span = (datetime(2032, 1, 1, tzinfo=UTC) - first).total_seconds()
    rows = []
    for _ in range(singles):
        start = first + timedelta(seconds=int(rng.random() * span) // 900 * 900)
        rows.append((start, start + timedelta(minutes=rng.choice((15, 30, 45, 60, 90, 120)))))
    form = "%Y-%m-%dT%H:%M:%SZ"
    with db.transaction(conn):
        conn.execute(
            text("INSERT INTO events (title, start_utc, end_utc) VALUES ('Busy', :start, :end)"),
            [{"start": start.strftime(form), "end": end.strftime(form)} for start, end in rows],
        )
        newest = conn.execute(text("SELECT max(id) FROM events")).scalar_one()
        conn.execute(
            text("INSERT INTO event_attendees (event_id, person_key) VALUES (:event_id, :person)"),
            [
                {"event_id": event_id, "person": people[event_id % len(people)]}
                for event_id in range(newest - singles + 1, newest + 1)
            ],
        )
    conn.execute(text("ANALYZE"))
    return conn, time.perf_counter() - began


def first(action: Callable[[], object]) -> tuple[float, float, float]:
    """One call, timed: the first search of a week, which materialises what it reaches."""
    began = time.thread_time()
    action()
    figure = (time.thread_time() - began) * 1000
    return figure, figure, figure


def timed(action: Callable[[], object], runs: int) -> tuple[float, float, float]:
    """The CPU time of the thread (a call waits for nothing but the file's pages, in memory once warm): on a
    loaded machine wall time is mostly the wait for a core."""
    action()  # warm: caches, pages, and the spans a first search materialises
    figures = []
    for _ in range(runs):
        began = time.thread_time()
        action()
        figures.append((time.thread_time() - began) * 1000)
    return statistics.median(figures), min(figures), max(figures)


def measure(conn: Connection, runs: int) -> dict[str, tuple[float, float, float]]:
    tools = CalendarTools(conn, Clock.pinned_at(date(2026, 8, 27), clock_time(9, 0), "Europe/London"))
    far = CalendarTools(conn, Clock.pinned_at(date(2031, 2, 27), clock_time(9, 0), "Europe/London"))
    meeting = (datetime(2026, 9, 1, 16, 0, tzinfo=UTC), datetime(2026, 9, 1, 16, 30, tzinfo=UTC))

    def conflict_check() -> object:  # what create_event's check reads: both attendees' busy time over the meeting
        return [events_for(conn, key, *meeting) for key in ("you", "priya")]

    week = (datetime(2026, 8, 30, 23, 0, tzinfo=UTC), datetime(2026, 9, 6, 23, 0, tzinfo=UTC))
    found = {
        "events_for, priya, week of 2026-08-31": timed(lambda: events_for(conn, "priya", *week), runs),
        "find_free_slots, week of 2026-08-31": timed(lambda: tools.find_free_slots("priya", WEEK, 30), runs),
        "find_free_slots, week of 2031-03-03": timed(lambda: far.find_free_slots("priya", FAR_WEEK, 30), runs),
    }
    found[FIRST] = first(lambda: tools.find_free_slots("priya", LAST_WEEK, 30))
    found["find_free_slots, week of 2036-08-25"] = timed(lambda: tools.find_free_slots("priya", LAST_WEEK, 30), runs)
    found["conflict check, 30 min on 2026-09-01"] = timed(conflict_check, runs)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--singles", type=int, default=100_000)
    parser.add_argument("--series", type=int, default=100)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        demo = db.connect(Path(folder) / "demo.db")
        seed_demo(demo)
        small = measure(demo, options.runs)
        big, built = build(Path(folder) / "big.db", options.singles, options.series)
        large = measure(big, options.runs)
        count = big.execute(text("SELECT count(*) FROM events")).scalar_one()
    print(f"big calendar: {count:,} events ({options.series} repeating), built in {built:.1f} s")
    print(
        f"{'figure (CPU ms, median of ' + str(options.runs) + ')':<44} "
        f"{'demo':>8} {'big':>8} {'big min-max':>15} {'ratio':>7} {'of goal':>8}"
    )
    for name, (median, low, high) in large.items():
        demo_median = small[name][0]
        goal = f"{median / GOAL_MS[name]:.2f}" if name in GOAL_MS else ""
        print(
            f"{name:<44} {demo_median:>8.2f} {median:>8.2f} {f'{low:.2f}-{high:.2f}':>15} "
            f"{median / demo_median:>6.1f}x {goal:>8}"
        )


if __name__ == "__main__":
    main()
