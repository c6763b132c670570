"""`events_for`'s indexed query gives exactly the rows the plain one did, and the length bound it relies on holds.

The plain query (what `events_for` was before the index work): every event of the person that overlaps the
window or repeats at all, a table scan, with each repeating one expanded by the library for that window.
The indexed one reads single events by a range on start_utc bounded below by the longest event, and
materialised occurrences the same way. Both are run here, on a calendar with every kind of event the
writers make (long, all-day, repeating, imported series with moved and cancelled occurrences, moved and
cancelled events, feeds), over many windows; an equivalence test, not a timing test.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.calendar import busy as busy_time
from scheduler_agent.calendar.backend import SqliteCalendar
from scheduler_agent.calendar.busy import busy_for, events_for
from scheduler_agent.calendar.events import add_event, cancel_event
from scheduler_agent.calendar.fixtures import SAME_EVENT, seed_demo
from scheduler_agent.calendar.ics.importing import import_file
from scheduler_agent.calendar.ics.read import read_ics
from scheduler_agent.calendar.imports import import_events
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.series import live_occurrences, store_series
from scheduler_agent.calendar.types import Event, Recurrence, from_utc_text
from scheduler_agent.storage import db
from scheduler_agent.storage.migrations import HEAD
from scheduler_agent.storage.statement import Statement

LONDON = ZoneInfo("Europe/London")

# Every repeating event, expanded for the window, and every other event that overlaps it: a scan.
PLAIN = """
SELECT e.id, e.title, e.start_utc, e.end_utc, e.tz, e.rrule, e.rdates, e.exdates,
       s.components, s.zone, s.day_zone,
       (SELECT group_concat(k.person_key, ' ') FROM event_attendees k WHERE k.event_id = e.id) AS keys
FROM events e LEFT JOIN event_series s ON s.event_id = e.id
WHERE EXISTS (SELECT 1 FROM event_attendees a WHERE a.event_id = e.id AND a.person_key = :person)
  AND ((e.start_utc < :end AND e.end_utc > :start) OR e.rrule IS NOT NULL OR e.rdates <> '')
"""

SERIES_FILE = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:weekly@test
DTSTAMP:20260801T120000Z
DTSTART;TZID=Europe/London:20260907T090000
DTEND;TZID=Europe/London:20260907T093000
RRULE:FREQ=WEEKLY;BYDAY=MO,WE
EXDATE;TZID=Europe/London:20260916T090000
SUMMARY:Imported weekly
END:VEVENT
BEGIN:VEVENT
UID:weekly@test
DTSTAMP:20260801T120000Z
RECURRENCE-ID;TZID=Europe/London:20260914T090000
DTSTART;TZID=Europe/London:20260914T160000
DTEND;TZID=Europe/London:20260914T170000
SUMMARY:Imported weekly (moved)
END:VEVENT
BEGIN:VEVENT
UID:weekly@test
DTSTAMP:20260801T120000Z
RECURRENCE-ID;TZID=Europe/London:20260921T090000
STATUS:CANCELLED
SUMMARY:Imported weekly
END:VEVENT
BEGIN:VEVENT
UID:later@test
DTSTAMP:20260801T120000Z
DTSTART:20261005T090000Z
DTEND:20261005T100000Z
RRULE:FREQ=WEEKLY
SUMMARY:Begins in October
END:VEVENT
BEGIN:VEVENT
UID:later@test
DTSTAMP:20260801T120000Z
RECURRENCE-ID:20261005T090000Z
DTSTART:20261001T090000Z
DTEND:20261001T100000Z
SUMMARY:Begins in October (moved before its start)
END:VEVENT
BEGIN:VEVENT
UID:holiday@test
DTSTAMP:20260801T120000Z
DTSTART;VALUE=DATE:20260909
DTEND;VALUE=DATE:20260912
SUMMARY:Holiday
END:VEVENT
BEGIN:VEVENT
UID:allday-series@test
DTSTAMP:20260801T120000Z
DTSTART;VALUE=DATE:20260904
RRULE:FREQ=WEEKLY;COUNT=6
SUMMARY:Friday off
END:VEVENT
BEGIN:VEVENT
UID:cancelled@test
DTSTAMP:20260801T120000Z
DTSTART:20260908T100000Z
DTEND:20260908T110000Z
STATUS:CANCELLED
SUMMARY:Cancelled in the file
END:VEVENT
BEGIN:VEVENT
UID:single@test
DTSTAMP:20260801T120000Z
DTSTART:20260910T130000Z
DTEND:20260910T140000Z
SUMMARY:Imported single
END:VEVENT
END:VCALENDAR
"""


def plain_events_for(conn: Connection, person: str, start: datetime, end: datetime) -> list[Event]:
    args = {"person": person, "start": f"{start:%Y-%m-%dT%H:%M:%SZ}", "end": f"{end:%Y-%m-%dT%H:%M:%SZ}"}
    found: list[Event] = []
    for row in conn.execute(sql(PLAIN), args):
        attendees = tuple(sorted(row._mapping["keys"].split(), key=lambda key: (key != "you", key)))
        if row.rrule is None and row.rdates == "":
            start_at, end_at = from_utc_text(row.start_utc), from_utc_text(row.end_utc)
            found.append(Event(row.id, row.title, start_at, end_at, attendees, recurring=False))
            continue
        found += [
            Event(row.id, o.title, o.start, o.end, attendees, recurring=True) for o in live_occurrences(row, start, end)
        ]
    return sorted(found, key=lambda event: (event.start, event.id))


def assert_bounds_hold(conn: Connection) -> None:
    """The bounds read are exactly the longest single event and the longest materialised occurrence."""

    def longest(table: str, where: str = "") -> float:
        rows = conn.execute(sql(f"SELECT start_utc, end_utc FROM {table} {where}")).fetchall()
        lengths = [(from_utc_text(end) - from_utc_text(start)).total_seconds() for start, end in rows]
        return max(lengths, default=0)

    event, occurrence = (days * 86400 if days is not None else 0 for days in busy_time._LONGEST.first(conn))
    assert event == pytest.approx(longest("events", "WHERE rrule IS NULL AND rdates = ''"), abs=0.01)
    assert occurrence == pytest.approx(longest("occurrences"), abs=0.01)


@pytest.fixture
def varied(tmp_path: Path) -> Connection:
    """The demo calendar, and every kind of event each write path makes, the bounds checked after each."""
    conn = db.connect(tmp_path / "cal.db")
    seed_demo(conn)
    keys = ["you", *(person.key for person in list_people(conn))]
    calendar = SqliteCalendar(conn)

    def answer(event: Event) -> str:
        return f"#{event.id}"

    at = datetime(2026, 9, 1, 9, 0, tzinfo=LONDON)
    add_event(conn, "Three days away", at - timedelta(days=2), at + timedelta(days=1), ["you", "priya"])
    assert_bounds_hold(conn)
    add_event(
        conn,
        "Ends as the week starts",
        datetime(2026, 8, 30, 21, tzinfo=LONDON),
        datetime(2026, 8, 31, tzinfo=LONDON),
        ["you"],
    )
    add_event(conn, "Starts as it ends", datetime(2026, 9, 5, tzinfo=LONDON), at + timedelta(days=4, hours=1), ["you"])
    for number, rule in enumerate(("FREQ=DAILY;COUNT=40", "FREQ=WEEKLY;BYDAY=TU,TH", "FREQ=WEEKLY;INTERVAL=2")):
        first = at + timedelta(days=number - 10, hours=number)
        add_event(
            conn,
            f"Series {number}",
            first,
            first + timedelta(minutes=45 + 30 * number),
            [keys[number % len(keys)], "priya"],
            tz="Europe/London",
            recurrence=Recurrence(rule, exdates=(first + timedelta(days=14),) if number else ()),
        )
        assert_bounds_hold(conn)
    far = datetime(2045, 3, 6, 8, 0, tzinfo=LONDON)  # begins past the materialised horizon: expanded per window
    add_event(
        conn,
        "Far series",
        far,
        far + timedelta(hours=1),
        ["priya"],
        tz="Europe/London",
        recurrence=Recurrence("FREQ=WEEKLY"),
    )
    ics = tmp_path / "team.ics"
    ics.write_text(SERIES_FILE.replace("\n", "\r\n"))
    import_file(conn, ics, "priya")
    assert_bounds_hold(conn)
    import_file(conn, ics, "priya")  # again: nothing doubles
    longer = SERIES_FILE.replace("DTEND:20260910T140000Z", "DTEND:20260914T140000Z")  # a re-import lengthens one
    ics.write_text(longer.replace("\n", "\r\n"))
    import_file(conn, ics, "priya")
    assert_bounds_hold(conn)
    owner, priya = get_owner(conn), next(p for p in list_people(conn) if p.key == "priya")
    feed = read_ics(longer.replace("Holiday", "Feed holiday"), name="feed", owner=owner, person=priya)
    import_events(conn, "priya", feed.events, feed.dropped, origin="feed:1", replace_all=True)
    assert_bounds_hold(conn)
    # moves and cancellations, of single events and of one occurrence of a series
    single = add_event(conn, "To move", at + timedelta(days=1), at + timedelta(days=1, hours=1), ["you", "priya"])
    stored = calendar.event(single.id)
    assert stored is not None
    calendar.move(stored, single, at + timedelta(days=2), at + timedelta(days=2, hours=9), None, answer)
    assert_bounds_hold(conn)
    doomed = add_event(conn, "To cancel", at + timedelta(hours=5), at + timedelta(hours=6), ["priya"])
    cancel_event(conn, doomed.id)
    series = next(e for e in events_for(conn, "priya", at, at + timedelta(days=7)) if e.title == "Series 1")
    stored = calendar.event(series.id)
    assert stored is not None
    calendar.move(stored, series, series.start + timedelta(hours=3), series.end + timedelta(hours=20), None, answer)
    assert_bounds_hold(conn)
    later = [e for e in events_for(conn, "priya", at, at + timedelta(days=21)) if e.title == "Series 2"]
    stored = calendar.event(later[-1].id)
    assert stored is not None
    calendar.cancel(stored, later[-1], None, answer)
    assert_bounds_hold(conn)
    return conn


def windows() -> list[tuple[datetime, datetime]]:
    """Every day and every week from late August to October 2026, some short windows on the edges of events,
    and weeks past the materialised horizon."""
    found = []
    day = datetime(2026, 8, 20, tzinfo=UTC)
    while day < datetime(2026, 11, 1, tzinfo=UTC):
        found += [(day, day + timedelta(days=1)), (day, day + timedelta(days=7))]
        found += [(day + timedelta(hours=hour), day + timedelta(hours=hour, minutes=30)) for hour in (7, 8, 13, 23)]
        day += timedelta(days=1)
    found += [(datetime(2031, 3, 3, tzinfo=UTC), datetime(2031, 3, 10, tzinfo=UTC))]  # inside it
    found += [(datetime(2045, 3, 6, tzinfo=UTC), datetime(2045, 3, 13, tzinfo=UTC))]  # past it: expanded
    found += [(datetime(2026, 8, 31, 8, 0, tzinfo=UTC), datetime(2026, 8, 31, 8, 0, 1, tzinfo=UTC))]
    return found


def test_the_indexed_query_returns_exactly_the_rows_of_the_plain_one(varied: Connection) -> None:
    people = ["you", *(person.key for person in list_people(varied))]
    compared = 0
    for person in people:
        for start, end in windows():
            indexed = events_for(varied, person, start, end)
            assert indexed == plain_events_for(varied, person, start, end), (person, start, end)
            compared += len(indexed)
    assert compared > 1000  # the windows really held events: long, all-day, repeating, moved
    span = (datetime(2026, 8, 20, tzinfo=UTC), datetime(2026, 11, 1, tzinfo=UTC))
    titles = {e.title for person in people for e in events_for(varied, person, *span)}
    for title in ("Three days away", "Holiday", "Feed holiday", "Friday off", "Imported weekly (moved)", "To move"):
        assert title in titles
    assert "Begins in October (moved before its start)" in titles
    assert "Cancelled in the file" not in titles
    assert "To cancel" not in titles


def groups(people: list[str]) -> list[list[str]]:
    """Who the busy time is asked for: each person alone, pairs either way round, everyone, a key twice,
    a key nobody has, and no one."""
    pairs = [[a, b] for a in people for b in people if a != b]
    return [[p] for p in people] + pairs + [people, [people[0], people[1], people[0]], [people[1], "nobody"], []]


def test_busy_for_gives_each_person_the_times_of_events_for(varied: Connection) -> None:
    """The one read for everyone in a meeting: per person, the id, start and end of each event
    `events_for` gives, in its order (events several of them attend, series, long and moved ones)."""
    people = ["you", *(person.key for person in list_people(varied))]
    shared = 0
    for start, end in windows()[::3]:
        alone = {key: [(e.id, e.start, e.end) for e in events_for(varied, key, start, end)] for key in people}
        for keys in groups(people):
            found = busy_for(varied, keys, start, end)
            assert list(found) == list(dict.fromkeys(keys)), keys
            for key in found:
                assert found[key] == alone.get(key, []), (keys, key, start, end)
        shared += len({busy for busy in alone["you"]} & {busy for busy in alone["priya"]})
    assert shared > 50  # events both attend were read once and given to each


def test_busy_for_on_a_calendar_made_by_version_one(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    shutil.copyfile(Path(__file__).parent / "data" / "v1.db", path)
    conn = db.connect(path)
    people = ["you", *(person.key for person in list_people(conn))]
    found = 0
    for start, end in windows()[::7]:
        busy = busy_for(conn, people, start, end)
        for key in people:
            assert busy[key] == [(e.id, e.start, e.end) for e in events_for(conn, key, start, end)]
            found += len(busy[key])
    assert found > 0


# The bounds read as one hour each: below the longest event of `varied`, which lasts three days.
TOO_SMALL = Statement("SELECT 1.0 / 24, 1.0 / 24")


def test_busy_for_misses_a_long_event_when_the_bound_is_too_small(
    varied: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It uses the same bound: forced below the longest event, that event goes missing (the comparison
    above can fail)."""

    window = (datetime(2026, 9, 1, 6, 0, tzinfo=UTC), datetime(2026, 9, 1, 7, 0, tzinfo=UTC))
    ids = [e.id for e in plain_events_for(varied, "priya", *window) if e.title == "Three days away"]
    assert ids and ids[0] in {busy[0] for busy in busy_for(varied, ["you", "priya"], *window)["priya"]}
    monkeypatch.setattr(busy_time, "_LONGEST", TOO_SMALL)
    assert ids[0] not in {busy[0] for busy in busy_for(varied, ["you", "priya"], *window)["priya"]}


def test_the_plain_query_really_differs_from_a_bound_too_small(
    varied: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison can fail: with the bound forced below the longest event, the long event goes missing."""

    window = (datetime(2026, 9, 1, 6, 0, tzinfo=UTC), datetime(2026, 9, 1, 7, 0, tzinfo=UTC))
    monkeypatch.setattr(busy_time, "_LONGEST", TOO_SMALL)
    assert [e.title for e in plain_events_for(varied, "priya", *window)].count("Three days away") == 1
    assert "Three days away" not in [e.title for e in events_for(varied, "priya", *window)]


def test_every_read_goes_through_an_index(varied: Connection) -> None:

    args = {"person": "priya", "start": "2026-09-01T00:00:00Z", "end": "2026-09-08T00:00:00Z"}
    args |= {"event_lower": "2026-08-20T00:00:00Z", "occurrence_lower": "2026-08-30T00:00:00Z"}
    covered, indexed, live = busy_time._busy_queries(3, "sqlite")  # busy_for's, for three people
    single = busy_time._INDEXED_BY_DIALECT["sqlite"].clause
    single_covered = busy_time._EVERY_SERIES_COVERED_BY_DIALECT["sqlite"].clause
    for query in (single, single_covered, busy_time._LIVE_BY_DIALECT["sqlite"], covered.clause, indexed.clause, live):
        plan = " / ".join(
            row[3]
            for row in varied.execute(
                sql(f"EXPLAIN QUERY PLAN {query.text}"), args | {"p0": "you", "p1": "priya", "p2": "x"}
            )
        )
        assert "SCAN e" not in plan and "SCAN o" not in plan, plan
        if query in (
            single,
            single_covered,
            covered.clause,
            indexed.clause,
        ):  # m021's: single events and occurrences by time
            assert "USING INDEX events_single_by_time" in plan
            assert "INDEX occurrences_by_time_event" in plan  # busy_for's covering: it reads no title
    plan = " / ".join(
        row[3] for row in varied.execute(sql(f"EXPLAIN QUERY PLAN {SAME_EVENT['sqlite'].text}"), {"title": "x"} | args)
    )
    # the fixture check, without m001's index of every event by time (m036 dropped it)
    assert "SCAN e" not in plan and "events_single_by_time" in plan and "events_repeating" in plan, plan
    plan = " / ".join(row[3] for row in varied.execute(sql(f"EXPLAIN QUERY PLAN {busy_time._LONGEST.clause.text}")))
    # m035's: the longest single event and occurrence, each from the end of an index on its length
    assert "SEARCH events USING INDEX events_single_by_length" in plan, plan
    assert "SEARCH occurrences USING INDEX occurrences_by_length" in plan, plan


def test_a_series_that_begins_inside_the_horizon_is_read_from_the_index_before_it_begins(
    varied: Connection,
) -> None:
    """Materialised over the whole horizon, not from the day before it begins: a window before a series'
    first occurrence is covered, so no series is expanded by the library for any window inside the horizon
    (each cost 2-6 ms a search), and an occurrence moved before the first one is in the index."""

    written = datetime(2026, 9, 1, tzinfo=UTC)  # each series written again then: the horizon, 2025-08 to 2028-09
    for event_id, components, zone, day_zone in varied.execute(
        sql("SELECT event_id, components, zone, day_zone FROM event_series")
    ).fetchall():
        store_series(varied, event_id, components, zone, day_zone, now=written)
    begins = varied.execute(sql("SELECT min(start_utc) FROM events WHERE rrule IS NOT NULL")).fetchone()[0]
    inside = [window for window in windows() if window[1] < written + timedelta(days=700)]
    assert any(window[0] < from_utc_text(begins) for window in inside)  # windows before a series begins
    people = ["you", *(person.key for person in list_people(varied))]
    for person in people:
        for start, end in inside:
            args = {"person": person, **busy_time._window(varied, start, end)}
            assert varied.execute(busy_time._LIVE_BY_DIALECT["sqlite"], args).fetchall() == [], (person, start, end)
            assert events_for(varied, person, start, end) == plain_events_for(varied, person, start, end)
    week = (datetime(2026, 9, 28, tzinfo=UTC), datetime(2026, 10, 5, tzinfo=UTC))  # before that series begins
    assert "Begins in October (moved before its start)" in [e.title for e in events_for(varied, "priya", *week)]


def test_a_dense_series_that_begins_inside_the_near_span_is_still_materialised(tmp_path: Path) -> None:
    """The cap on what is materialised counts the occurrences a rule can give from the day it begins, not
    over the part of the span before it: thirty a day beginning in 100 days gives about 9,000 in the near
    span, under the cap of 20,000, though the span's 766 days hold 22,980."""

    conn = db.connect(tmp_path / "cal.db")
    seed_demo(conn)
    written = datetime(2026, 9, 1, tzinfo=UTC)
    first = written + timedelta(days=100)
    event = add_event(
        conn,
        "Half-hourly",
        first,
        first + timedelta(minutes=10),
        ["you"],
        tz="UTC",
        recurrence=Recurrence("FREQ=HOURLY;BYHOUR=6,7,8,9,10,11,12,13,14,15,16,17,18,19,20;BYMINUTE=0,30"),
    )
    components, zone, day_zone = conn.execute(
        sql("SELECT components, zone, day_zone FROM event_series WHERE event_id = :id"), {"id": event.id}
    ).fetchone()
    store_series(conn, event.id, components, zone, day_zone, now=written)
    stored = conn.execute(sql("SELECT count(*) FROM occurrences WHERE event_id = :id"), {"id": event.id}).fetchone()[0]
    assert 8_500 < stored < 20_000
    day = (first + timedelta(days=30), first + timedelta(days=31))
    args = {"person": "you", **busy_time._window(conn, *day)}
    assert conn.execute(busy_time._LIVE_BY_DIALECT["sqlite"], args).fetchall() == []
    assert [e.title for e in events_for(conn, "you", *day)].count("Half-hourly") == 30


def test_a_series_is_written_with_its_near_span_and_a_search_past_it_materialises_what_it_reaches(
    varied: Connection,
) -> None:
    """Writing a series materialises about a year ahead, not the ten a search may reach; a search past that
    extends the near span or makes a far one (moved when a search goes elsewhere), once, for every series, and
    every answer on the way is the plain expansion's, with no occurrence stored twice."""
    from scheduler_agent.calendar import series

    written = datetime(2026, 9, 1, tzinfo=UTC)
    for event_id, components, zone, day_zone in varied.execute(
        sql("SELECT event_id, components, zone, day_zone FROM event_series")
    ).fetchall():
        store_series(varied, event_id, components, zone, day_zone, now=written)
    latest = varied.execute(sql("SELECT max(start_utc) FROM occurrences")).fetchone()[0]
    assert from_utc_text(latest) < written + timedelta(days=410)  # the write stops at the near span
    people = ["you", *(person.key for person in list_people(varied))]
    week = timedelta(days=7)
    mondays = [
        datetime(2031, 3, 3, tzinfo=UTC),  # far ahead: a far span of its own
        datetime(2031, 3, 10, tzinfo=UTC),  # inside it
        datetime(2031, 5, 26, tzinfo=UTC),  # just past it: the far span extended
        datetime(2036, 8, 25, tzinfo=UTC),  # ten years ahead: the far span moves there
        datetime(2027, 10, 4, tzinfo=UTC),  # just past the near span (2027-10-06): the near span extended
        datetime(2028, 3, 27, tzinfo=UTC),  # and again
        datetime(2036, 9, 1, tzinfo=UTC),  # back to the far span
        datetime(2031, 3, 3, tzinfo=UTC),  # and it moves back
        datetime(2045, 3, 6, tzinfo=UTC),  # the series that begins in 2045
    ]
    reached = 0
    for monday in mondays:
        window = (monday, monday + week)
        stale = series._UNCOVERED.rows(varied, busy_time._window(varied, *window))
        reached += len(stale)
        for person in people:
            assert events_for(varied, person, *window) == plain_events_for(varied, person, *window), (person, monday)
            args = {"person": person, **busy_time._window(varied, *window)}
            assert varied.execute(busy_time._LIVE_BY_DIALECT["sqlite"], args).fetchall() == [], (
                person,
                monday,
            )  # read from the index
        found = busy_for(varied, people, *window)
        for person in people:
            expected = [(e.id, e.start, e.end) for e in plain_events_for(varied, person, *window)]
            assert found[person] == expected, (person, monday)
        for row in stale:  # a search that read the spans before this one moved them changes nothing
            series._extend(
                varied, row, from_utc_text(busy_time._window(varied, *window)["occurrence_lower"]), monday + week
            )
        twice = "SELECT event_id, start_utc FROM occurrences GROUP BY event_id, start_utc HAVING count(*) > 1"
        assert varied.execute(sql(twice)).fetchall() == [], monday
    assert_bounds_hold(varied)
    assert reached > 10  # the stale rows above were the spans' before a search moved them


def test_m021_on_a_calendar_made_by_version_one(tmp_path: Path) -> None:
    """tests/data/v1.db (0.1.0) gets the indexes, and its busy time reads as the plain scan gives it."""
    path = tmp_path / "v1.db"
    shutil.copyfile(Path(__file__).parent / "data" / "v1.db", path)
    conn = db.connect(path)
    assert db.revision(conn) == HEAD  # m012, m021 and the rest applied on connect
    names = {row[0] for row in conn.execute(sql("SELECT name FROM sqlite_master WHERE type = 'index'"))}
    assert {"events_single_by_time", "occurrences_by_time_event"} <= names
    assert "occurrences_by_time" not in names
    people = ["you", *(person.key for person in list_people(conn))]
    found = 0
    for person in people:
        for start, end in windows()[::7]:
            indexed = events_for(conn, person, start, end)
            assert indexed == plain_events_for(conn, person, start, end)
            found += len(indexed)
    assert found > 0


def test_an_all_day_occurrence_beginning_before_a_window_ends_at_midnight_utc_is_in_it() -> None:
    """Found by the comparison above: Friday in London begins at 23:00 UTC on Thursday, so a window that ends
    at midnight UTC on Friday holds an hour of it; the expansion left it out (the materialised rows had it)."""
    from scheduler_agent.calendar.recurrence import expand

    text = "\r\n".join(
        [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//test//EN",
            "BEGIN:VEVENT",
            "UID:off@test",
            "DTSTART;VALUE=DATE:20260904",
            "RRULE:FREQ=WEEKLY;COUNT=3",
            "SUMMARY:Friday off",
            "END:VEVENT",
            "END:VCALENDAR",
            "",
        ]
    )
    found = expand(
        text, "Europe/London", "Europe/London", datetime(2026, 9, 4, tzinfo=UTC), datetime(2026, 9, 11, tzinfo=UTC)
    )
    assert [(o.start, o.end) for o in found] == [
        (datetime(2026, 9, 3, 23, tzinfo=UTC), datetime(2026, 9, 4, 23, tzinfo=UTC)),
        (datetime(2026, 9, 10, 23, tzinfo=UTC), datetime(2026, 9, 11, 23, tzinfo=UTC)),
    ]
