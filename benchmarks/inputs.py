"""The suite's inputs, built in a temporary folder: the demo calendar, a large calendar, a large .ics file.

The large calendar keeps the weeks the benchmarks search and book in (2026-08-24 to 2026-12-31) as
the demo has them, and puts its other events in the years around them, eight a weekday, the way a
calendar that has been used for decades looks: most of it history, some of it planned far ahead.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from benchmarks.common import bench_env, cli, copy_db

KEPT_FROM, KEPT_UNTIL = date(2026, 8, 3), date(2027, 1, 4)  # no generated event in between
OTHERS = ("priya", "marco", "aiko")


def demo_db(folder: Path) -> Path:
    """The demo calendar, put in by the CLI (`calendar seed-demo`)."""
    path = folder / "demo.db"
    subprocess.run(
        [*cli(), "calendar", "seed-demo", "--db", str(path)], check=True, capture_output=True, env=bench_env()
    )
    return path


def weekdays(count: int) -> list[date]:
    """`count` weekdays outside the kept weeks: alternately one further back and one further ahead."""
    back, ahead = KEPT_FROM, KEPT_UNTIL - timedelta(days=1)
    days: list[date] = []
    while len(days) < count:
        back -= timedelta(days=1)
        ahead += timedelta(days=1)
        days += [day for day in (back, ahead) if day.weekday() < 5]
    return days[:count]


def large_calendar(folder: Path, demo: Path, events: int) -> Path:
    """The demo calendar plus `events` more for the owner and one colleague each, added in one transaction."""
    from scheduler_agent.calendar.events import add_event
    from scheduler_agent.storage.db import connect, transaction

    path = copy_db(demo, folder / f"calendar-{events}.db")
    conn = connect(path)
    per_day = 8
    with transaction(conn):
        for number, day in enumerate(weekdays(-(-events // per_day))):
            for slot in range(per_day):
                index = number * per_day + slot
                if index >= events:
                    break
                start = datetime(day.year, day.month, day.day, 8 + slot, 0, tzinfo=UTC)
                other = OTHERS[index % len(OTHERS)]
                add_event(conn, f"Meeting {index}", start, start + timedelta(minutes=45), ["you", other])
    conn.close()
    return path


VTIMEZONE = """BEGIN:VTIMEZONE
TZID:Europe/London
BEGIN:DAYLIGHT
TZOFFSETFROM:+0000
TZOFFSETTO:+0100
TZNAME:BST
DTSTART:19700329T010000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0100
TZOFFSETTO:+0000
TZNAME:GMT
DTSTART:19701025T020000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE"""


def ics_file(folder: Path, events: int) -> Path:
    """An .ics file as a calendar program exports it: a VTIMEZONE, then `events` VEVENTs (1 in 50 repeating)."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//scheduler-agent benchmarks//EN", "CALSCALE:GREGORIAN"]
    lines += VTIMEZONE.splitlines()
    for index, day in enumerate(weekdays(-(-events // 4))[: -(-events // 4)]):
        for slot in range(4):
            number = index * 4 + slot
            if number >= events:
                break
            start = datetime(day.year, day.month, day.day, 9 + 2 * slot, 0)
            end = start + timedelta(minutes=50)
            lines += [
                "BEGIN:VEVENT",
                f"UID:bench-{number}@example.org",
                "DTSTAMP:20260801T120000Z",
                f"DTSTART;TZID=Europe/London:{start:%Y%m%dT%H%M%S}",
                f"DTEND;TZID=Europe/London:{end:%Y%m%dT%H%M%S}",
                f"SUMMARY:Busy {number}",
            ]
            if number % 50 == 0:
                lines.append("RRULE:FREQ=WEEKLY;COUNT=10")
            lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    path = folder / f"calendar-{events}.ics"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path
