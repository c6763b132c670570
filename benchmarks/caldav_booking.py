"""What the CalDAV calendar costs per call against a real Radicale on loopback.

    python benchmarks/caldav_booking.py        # needs the test extra (caldav, radicale)

Starts Radicale (as the tests do), fills the owner's calendar with N events, and times busy() for a
week through the tools' calendar (the store, synced first: owner and Priya's shared calendar by
free-busy), the server write of a booking, its resumed round (the same tool_use id), and a move.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from radicale_server import OWNER_USER, PRIYA_USER, RadicaleServer, calendar_url, client_for, make_calendars

from scheduler_agent.calendar.caldav import replica
from scheduler_agent.calendar.caldav.connect import Connection, load_connection, save_connection, set_contact
from scheduler_agent.calendar.caldav.remote import RemoteCalendar
from scheduler_agent.calendar.caldav.writes import Writer
from scheduler_agent.calendar.people import add_person, set_owner
from scheduler_agent.storage.db import connect

SIZES = (0, 50, 200)
MONDAY = datetime(2027, 3, 1, tzinfo=UTC)


def timed(action: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return median(times) * 1000


def main() -> None:
    print(f"{'events':>7} {'busy(week), ms':>15} {'create, ms':>11} {'resumed, ms':>12} {'move, ms':>9}")
    for size in SIZES:
        print(row(size))


def row(size: int) -> str:
    from datetime import time as clock

    from caldav.collection import Calendar

    users = {OWNER_USER: "a", PRIYA_USER: "b"}
    with tempfile.TemporaryDirectory() as folder, RadicaleServer(Path(folder) / "r", users) as server:
        make_calendars(server)
        work = Calendar(client=client_for(server, OWNER_USER), url=calendar_url(server, OWNER_USER, "work"))
        for i in range(size):
            begins = MONDAY - timedelta(days=30) + timedelta(hours=7 * i)
            work.save_event(dtstart=begins, dtend=begins + timedelta(minutes=30), summary=f"Event {i}")
        conn = connect(Path(folder) / "cal.db")
        set_owner(conn, "Jordan Lee", "Europe/London", clock(9), clock(17))
        add_person(conn, "priya", "Priya Raman", "Europe/London", clock(9), clock(17))
        set_contact(conn, "priya", "priya@example.com", calendar_url(server, PRIYA_USER, "shared"))
        url = calendar_url(server, OWNER_USER, "work")
        save_connection(conn, Connection(server.url, OWNER_USER, url, "Work", "env:X", "jordan@example.com"))
        connection = load_connection(conn)
        assert connection is not None
        calendar = Writer(conn, connection, "a")
        tools_calendar = RemoteCalendar(calendar)
        week = (MONDAY + timedelta(days=70), MONDAY + timedelta(days=77))
        busy = timed(lambda: tools_calendar.busy(["you", "priya"], *week))
        slots = iter(range(100))

        def create() -> None:
            n = next(slots)
            start = week[0] + timedelta(hours=9 + n % 8, days=n // 8)
            calendar.create(f"toolu_{n}", "Plan", start, start + timedelta(minutes=30), ["priya"])

        made = timed(create)
        resumed_start = week[0] + timedelta(hours=9)
        resumed = timed(lambda: calendar.create("toolu_0", "Plan", resumed_start, resumed_start, ["priya"]))
        resource = replica.resource_of(conn, tools_calendar.events(["you"], *week)[0].id)
        assert resource is not None
        first = resource.cid
        moves = iter(range(100))

        def move() -> None:
            n = next(moves)
            calendar.move(f"toolu_m{n}", first, week[0] + timedelta(days=4, hours=9 + n % 7), 30)

        moved = timed(move)
        conn.close()
    return f"{size:>7} {busy:>15.1f} {made:>11.1f} {resumed:>12.1f} {moved:>9.1f}"


if __name__ == "__main__":
    main()
