"""What a connected CalDAV calendar costs now that it is synced into the store (issue 37).

    python -m benchmarks --only caldav        # or: python benchmarks/caldav_sync.py [--events N] [--runs N]

Starts Radicale on loopback (as the tests do) with N events (10,000) in the owner's calendar, written into
its storage folder before the first request, and measures:

- `find_free_slots` for one week and `create_event`'s conflict check's read (both attendees' busy time over
  a half hour) on the connected calendar, freshly synced (no request is made), against the same calls on
  a local calendar holding the same events as local events: goal within 2x;
- an empty sync (a sync token, nothing new: one REPORT), against one read of a week of the owner's events
  the way the tools read the server before this version (a time-range calendar-query);
- the first sync of all N events into an empty store, against the caldav library's own fetch of them
  (`Calendar.events()`: one calendar-query with the data).

Prints a table; asserts nothing. Absolute times vary by machine: the ratios are the claim.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock
from pathlib import Path

from sqlalchemy import text

from benchmarks.common import Row, Sample, interleaved, print_table, ratio_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

FIGURE = "connected CalDAV calendar"
GOAL_RATIO = 2.0
MONDAY = datetime(2027, 3, 1, tzinfo=UTC)
WEEK = "2027-03-29"
PASSWORD_ENV = "BENCH_CALDAV_PASSWORD"
DEADLINE = 600.0  # a first sync of many events is one long REPORT: the tools' 10 s is not what is measured


def _event(number: int) -> tuple[str, str]:
    """The name and text of event `number`: half an hour, every 7 hours from 30 days before MONDAY."""
    begins = MONDAY - timedelta(days=30) + timedelta(hours=7 * number)
    ends = begins + timedelta(minutes=30)
    uid = f"bench-{number}"
    text = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:{begins:%Y%m%dT%H%M%SZ}\r\n"
        f"DTEND:{ends:%Y%m%dT%H%M%SZ}\r\nSUMMARY:Event {number}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    return f"{uid}.ics", text


@contextmanager
def server_with(folder: Path, count: int) -> Iterator[object]:
    from radicale_server import OWNER_USER, RadicaleServer, make_calendars

    with RadicaleServer(folder / "radicale", {OWNER_USER: "a", "priya": "b"}) as server:
        make_calendars(server)
        work = folder / "radicale" / "collections" / "collection-root" / OWNER_USER / "work"
        for number in range(count):
            name, text = _event(number)
            (work / name).write_text(text, encoding="utf-8")
        yield server


def _people(conn: object) -> None:
    from scheduler_agent.calendar.people import add_person, set_owner

    set_owner(conn, "Jordan Lee", "Europe/London", clock(9), clock(17))  # type: ignore[arg-type]
    add_person(conn, "priya", "Priya Raman", "Europe/London", clock(9), clock(17))  # type: ignore[arg-type]


def rows(folder: Path, runs: int, count: int = 10_000) -> list[Row]:
    from caldav.collection import Calendar
    from radicale_server import OWNER_USER, calendar_url, client_for

    from scheduler_agent.agent.deadline import Deadline
    from scheduler_agent.calendar.caldav.connect import Connection, save_connection
    from scheduler_agent.calendar.caldav.sync import sync
    from scheduler_agent.calendar.clock import Clock
    from scheduler_agent.calendar.events import add_events, checked_row
    from scheduler_agent.calendar.opening import open_calendar
    from scheduler_agent.calendar.tools import CalendarTools
    from scheduler_agent.calendar.types import Recurrence
    from scheduler_agent.storage.db import connect

    label = f"{count:,}"
    with server_with(folder, count) as server:
        os.environ[PASSWORD_ENV] = "a"
        url = calendar_url(server, OWNER_USER, "work")  # type: ignore[arg-type]
        connection = Connection(server.url, OWNER_USER, url, "Work", f"env:{PASSWORD_ENV}")  # type: ignore[attr-defined]

        def first_sync() -> float:
            path = folder / f"first-{time.perf_counter_ns()}.db"
            conn = connect(path)
            _people(conn)
            save_connection(conn, connection)
            began = time.perf_counter()
            sync(conn, connection, "a", deadline_seconds=DEADLINE)
            took = time.perf_counter() - began
            conn.close()
            path.unlink()
            return took

        library = Calendar(client=client_for(server, OWNER_USER), url=url)  # type: ignore[arg-type]
        library.client.timeout = DEADLINE

        def library_fetch() -> float:
            began = time.perf_counter()
            fetched = list(library.events())
            took = time.perf_counter() - began
            assert len(fetched) == count
            return took

        library_fetch()  # Radicale reads its new files once, into its own cache: not a sync's cost
        first, fetch = interleaved(max(1, runs // 3), first_sync, library_fetch)

        remote_db = connect(folder / "remote.db")
        _people(remote_db)
        save_connection(remote_db, connection)
        sync(remote_db, connection, "a", deadline_seconds=DEADLINE)
        local_db = connect(folder / "local.db")
        _people(local_db)
        made = [checked_row(f"Event {n}", *_span(n)) for n in range(count)]
        add_events(local_db, "you", made, [(Recurrence(), None)] * count)

        clock_ = Clock.pinned_at(date(2027, 3, 1), clock(9), "Europe/London")
        remote_tools = CalendarTools(remote_db, clock_, calendar=open_calendar(remote_db))
        local_tools = CalendarTools(local_db, clock_)
        args = {"person": "priya", "week": WEEK}

        def slots(tools: CalendarTools) -> Callable[[], float]:
            def one() -> float:
                fresh_now(remote_db)
                began = time.perf_counter()
                tools.run("find_free_slots", args, "t", Deadline.after(30))
                return time.perf_counter() - began

            return one

        half = (MONDAY + timedelta(days=28, hours=11), MONDAY + timedelta(days=28, hours=11, minutes=30))

        def check(tools: CalendarTools) -> Callable[[], float]:
            def one() -> float:
                fresh_now(remote_db)
                began = time.perf_counter()
                tools.calendar.busy(["you", "priya"], *half)
                return time.perf_counter() - began

            return one

        slots_remote, slots_local = interleaved(runs * 5, slots(remote_tools), slots(local_tools))
        check_remote, check_local = interleaved(runs * 5, check(remote_tools), check(local_tools))

        week = (MONDAY + timedelta(days=28), MONDAY + timedelta(days=35))

        def empty_sync() -> float:
            # the sync itself, with the suite's deadline: a reader's sync (`fresh.refresh`) waits READ_DEADLINE_SECONDS
            # on each request, which a loaded machine's server can pass, and that would time the deadline, not the sync
            began = time.perf_counter()
            changes = sync(remote_db, connection, "a", deadline_seconds=DEADLINE)
            took = time.perf_counter() - began
            if changes.changes or changes.full:  # what it did, not an empty assertion
                raise RuntimeError(
                    f"the empty sync was not empty: {len(changes.changes)} change(s), full={changes.full}"
                )
            return took

        def old_read() -> float:
            began = time.perf_counter()
            list(library.search(event=True, start=week[0], end=week[1], expand=True))  # what the tools sent before
            return time.perf_counter() - began

        empty, old = interleaved(runs, empty_sync, old_read)
        remote_db.close()
        local_db.close()
    return [
        _row(f"`find_free_slots` for one week, {FIGURE} of {label} events, freshly synced (baseline: the same "
             "events in a local calendar)", slots_remote, slots_local, goal=True),
        _row(f"`create_event`'s conflict check's read, {FIGURE} of {label} events, freshly synced (baseline: "
             "local)", check_remote, check_local, goal=True),
        _row(f"an empty sync of a {FIGURE} of {label} events, one REPORT (baseline: one week read from the "
             "server, as the tools did before)", empty, old),
        _row(f"the first sync of {label} events of a {FIGURE} into an empty store (baseline: the caldav "
             "library's own fetch of them)", first, fetch),
    ]  # fmt: skip


def fresh_now(conn: object) -> None:
    """As if synced a moment ago: a reader makes no request."""
    conn.execute(  # type: ignore[attr-defined]
        text("UPDATE caldav_connections SET synced_at = :now"),
        {"now": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")},
    )


def _span(number: int) -> tuple[datetime, datetime]:
    begins = MONDAY - timedelta(days=30) + timedelta(hours=7 * number)
    return begins, begins + timedelta(minutes=30)


def _row(figure: str, ours: Sample, baseline: Sample, goal: bool = False) -> Row:
    ratio = ours.median / baseline.median
    return Row(
        figure,
        ours.ms(),
        baseline.ms(),
        ratio_text(ours, baseline),
        f"<= {GOAL_RATIO:g}x" if goal else "-",
        (ratio <= GOAL_RATIO) if goal else None,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print_table(rows(Path(folder), options.runs, options.events))


if __name__ == "__main__":
    main()
