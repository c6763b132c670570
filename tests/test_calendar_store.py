"""The SQLite calendar: migrations, transactions, people, events, fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from helpers import open_in_database
from sqlalchemy import Connection
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.events import add_event, event_records, get_event
from scheduler_agent.calendar.fixtures import demo_fixture, export_fixture, load_fixture, seed_demo
from scheduler_agent.calendar.imports import import_events
from scheduler_agent.calendar.people import add_person, find_person, get_owner, list_people, set_owner
from scheduler_agent.calendar.recurrence import occurrences
from scheduler_agent.calendar.types import (
    UTC_FORMAT,
    CalendarError,
    ImportedEvent,
    Recurrence,
    from_utc_text,
    parse_hours,
    to_utc_text,
)
from scheduler_agent.cli.options import default_db_path
from scheduler_agent.storage import db
from scheduler_agent.storage.migrations import HEAD

NINE, FIVE = time(9), time(17)


@pytest.fixture
def empty_conn(any_db: Path | str) -> Iterator[Connection]:
    """An empty calendar, on SQLite and on PostgreSQL (conftest.py `any_db`): these tests run on both."""
    conn = db.open_db(any_db)
    yield conn
    conn.close()


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# --- the database -------------------------------------------------------------------------


def test_migrations_are_applied_once_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "calendar.db"  # no folders are made for a given path (tests/test_reliability.py)
    first = db.connect(path)
    assert db.revision(first) == HEAD
    first.close()

    again = db.connect(path)
    db.migrate(path)  # nothing left to apply: still the head, one row
    assert [tuple(row) for row in again.execute(sql("SELECT version_num FROM alembic_version"))] == [(HEAD,)]
    tables = {row[0] for row in again.execute(sql("SELECT name FROM sqlite_master WHERE type = 'table'"))}
    assert {"people", "events", "event_attendees", "alembic_version"} <= tables


def test_a_new_migration_is_applied_on_the_next_connect(tmp_path: Path) -> None:
    path = tmp_path / "calendar.db"
    old = db.connect(path, to="m035")  # as the version before m036 left it
    assert db.revision(old) == "m035"
    old.close()
    conn = db.connect(path)
    assert db.revision(conn) == HEAD
    indexes = {row[0] for row in conn.execute(sql("SELECT name FROM sqlite_master WHERE type = 'index'"))}
    assert "events_by_time" not in indexes  # m036 dropped it


def test_connection_settings(tmp_path: Path) -> None:
    conn = db.connect(tmp_path / "calendar.db")
    assert conn.connection.dbapi_connection.isolation_level is None  # SQLAlchemy's begin event says BEGIN
    assert conn.execute(sql("PRAGMA synchronous")).fetchone()[0] == 1  # NORMAL
    assert conn.execute(sql("PRAGMA foreign_keys")).fetchone()[0] == 1
    assert conn.execute(sql("PRAGMA journal_mode")).fetchone()[0] == "wal"
    assert conn.execute(sql("PRAGMA busy_timeout")).fetchone()[0] == 5000


def test_open_db_defaults_to_the_users_data_directory() -> None:
    conn = db.open_db(None)
    assert default_db_path().exists()
    assert str(default_db_path()).startswith(str(Path.home()))  # HOME is the test's tmp dir
    conn.close()


def test_transaction_commits_or_rolls_back(empty_conn: Connection) -> None:
    with db.transaction(empty_conn):
        empty_conn.execute(
            sql("INSERT INTO people (key, name, tz, work_start, work_end) VALUES ('a', 'A', 'UTC', '09:00', '17:00')")
        )
    with pytest.raises(RuntimeError), db.transaction(empty_conn):
        empty_conn.execute(
            sql("INSERT INTO people (key, name, tz, work_start, work_end) VALUES ('b', 'B', 'UTC', '09:00', '17:00')")
        )
        raise RuntimeError("boom")
    assert [row[0] for row in empty_conn.execute(sql("SELECT key FROM people"))] == ["a"]
    assert not open_in_database(empty_conn)


def test_a_nested_transaction_rolls_back_only_its_own_part(empty_conn: Connection) -> None:
    with db.transaction(empty_conn):
        empty_conn.execute(
            sql("INSERT INTO people (key, name, tz, work_start, work_end) VALUES ('a', 'A', 'UTC', '09:00', '17:00')")
        )
        with pytest.raises(RuntimeError), db.transaction(empty_conn):
            empty_conn.execute(
                sql(
                    "INSERT INTO people (key, name, tz, work_start, work_end) VALUES ('b', 'B', 'UTC', "
                    "'09:00', '17:00')"
                )
            )
            raise RuntimeError("boom")
    assert [row[0] for row in empty_conn.execute(sql("SELECT key FROM people"))] == ["a"]


def test_foreign_keys_are_enforced(empty_conn: Connection) -> None:
    empty_conn.execute(
        sql(
            "INSERT INTO events (title, start_utc, end_utc) "
            "VALUES ('x', '2026-01-01T09:00:00Z', '2026-01-01T10:00:00Z')"
        )
    )
    with pytest.raises(IntegrityError):
        empty_conn.execute(sql("INSERT INTO event_attendees VALUES (1, 'nobody')"))


# --- people -------------------------------------------------------------------------------


def test_no_owner_says_how_to_set_one(empty_conn: Connection) -> None:
    with pytest.raises(CalendarError) as raised:
        get_owner(empty_conn)
    assert "calendar set-owner" in str(raised.value)
    assert "calendar seed-demo" in str(raised.value)


def test_set_owner_creates_then_replaces(empty_conn: Connection) -> None:
    set_owner(empty_conn, "Jordan Lee", "Europe/London", NINE, FIVE)
    set_owner(empty_conn, "  Jordan   Lee ", "Europe/Paris", time(8), time(16))
    owner = get_owner(empty_conn)
    assert (owner.key, owner.name, owner.tz, owner.work_start, owner.work_end) == (
        "you",
        "Jordan Lee",
        "Europe/Paris",
        time(8),
        time(16),
    )
    assert list_people(empty_conn) == []  # the owner is not one of "the people"


@pytest.mark.parametrize(
    ("key", "name", "tz", "hours", "expected"),
    [
        ("Priya", "Priya Raman", "Europe/London", (NINE, FIVE), ["'Priya'", "lowercase", "'priya'"]),
        ("pri ya!", "Priya Raman", "Europe/London", (NINE, FIVE), ["'pri ya!'", "'pri-ya'"]),
        ("you", "Priya Raman", "Europe/London", (NINE, FIVE), ["'you'", "set-owner"]),
        ("priya", "Priya Raman", "Mars/Olympus", (NINE, FIVE), ["'Mars/Olympus'", "Europe/London"]),
        ("priya", "Priya Raman", "Europe/London", (FIVE, NINE), ["17:00-09:00", "09:00-17:00"]),
        ("priya", "   ", "Europe/London", (NINE, FIVE), ["name is empty", "--name"]),
    ],
)
def test_add_person_refuses_bad_values(
    empty_conn: Connection,
    key: str,
    name: str,
    tz: str,
    hours: tuple[time, time],
    expected: list[str],
) -> None:
    with pytest.raises(CalendarError) as raised:
        add_person(empty_conn, key, name, tz, *hours)
    for part in expected:
        assert part in str(raised.value)
    assert list_people(empty_conn) == []


def test_add_person_refuses_a_taken_key(empty_conn: Connection) -> None:
    add_person(empty_conn, "priya", "Priya Raman", "Europe/London", NINE, FIVE)
    with pytest.raises(CalendarError, match="'priya' is already taken by Priya Raman: choose another key"):
        add_person(empty_conn, "priya", "Priya Patel", "Asia/Kolkata", NINE, FIVE)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("09:00-17:00", (NINE, FIVE)), ("8:30 - 16:45", (time(8, 30), time(16, 45)))],
)
def test_parse_hours(text: str, expected: tuple[time, time]) -> None:
    assert parse_hours(text) == expected


@pytest.mark.parametrize("text", ["9-5", "09:00", "25:00-26:00", "17:00-09:00", "09:00-09:00"])
def test_parse_hours_refuses(text: str) -> None:
    with pytest.raises(CalendarError, match="09:00-17:00"):
        parse_hours(text)


def test_find_person_by_key_full_name_or_first_name(empty_conn: Connection) -> None:
    add_person(empty_conn, "priya", "Priya Raman", "Europe/London", NINE, FIVE)
    add_person(empty_conn, "alex-k", "Alex Kim", "Europe/London", NINE, FIVE)
    add_person(empty_conn, "alex-m", "Alex Moore", "Europe/London", NINE, FIVE)
    for text in ("priya", "PRIYA", "Priya Raman", "priya  raman"):
        found = find_person(empty_conn, text)
        assert found is not None
        assert found.key == "priya"
    found = find_person(empty_conn, "alex moore")
    assert found is not None
    assert found.key == "alex-m"
    assert find_person(empty_conn, "alex") is None  # two people: not a guess
    assert find_person(empty_conn, "sam") is None


# --- events -------------------------------------------------------------------------------


def test_add_event_and_events_for_overlap(empty_conn: Connection) -> None:
    set_owner(empty_conn, "Jordan Lee", "Europe/London", NINE, FIVE)
    add_person(empty_conn, "priya", "Priya Raman", "Europe/London", NINE, FIVE)
    event = add_event(empty_conn, "Design review", utc("2026-08-31T09:00"), utc("2026-08-31T10:00"), ["priya", "you"])
    assert event.attendees == ("you", "priya")
    assert get_event(empty_conn, event.id) == event
    row = empty_conn.execute(sql("SELECT start_utc, end_utc FROM events WHERE id = :id"), {"id": event.id}).fetchone()
    assert tuple(row) == ("2026-08-31T09:00:00Z", "2026-08-31T10:00:00Z")

    def ids(person: str, start: str, end: str) -> list[int]:
        return [e.id for e in events_for(empty_conn, person, utc(start), utc(end))]

    assert ids("priya", "2026-08-31T09:59", "2026-08-31T11:00") == [event.id]
    assert ids("you", "2026-08-31T08:00", "2026-08-31T09:01") == [event.id]
    assert ids("you", "2026-08-31T10:00", "2026-08-31T11:00") == []  # touching is not overlapping
    assert ids("you", "2026-08-31T08:00", "2026-08-31T09:00") == []


@pytest.mark.parametrize(
    ("title", "attendees", "start", "end", "expected"),
    [
        ("Sync", ["you", "sam"], "2026-08-31T09:00", "2026-08-31T10:00", "unknown attendee key(s): sam"),
        ("  ", ["you"], "2026-08-31T09:00", "2026-08-31T10:00", "title is empty"),
        ("Sync", [], "2026-08-31T09:00", "2026-08-31T10:00", "at least one attendee"),
        ("Sync", ["you"], "2026-08-31T10:00", "2026-08-31T09:00", "ends"),
    ],
)
def test_add_event_refuses_bad_values(
    empty_conn: Connection, title: str, attendees: list[str], start: str, end: str, expected: str
) -> None:
    set_owner(empty_conn, "Jordan Lee", "Europe/London", NINE, FIVE)
    with pytest.raises(CalendarError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        add_event(empty_conn, title, utc(start), utc(end), attendees)
    assert empty_conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0] == 0


# --- fixtures -----------------------------------------------------------------------------


def counts(conn: Connection) -> tuple[int, ...]:
    return tuple(
        conn.execute(sql(f"SELECT count(*) FROM {table}")).fetchone()[0]
        for table in ("people", "events", "event_attendees")
    )


def test_seed_demo_is_idempotent(empty_conn: Connection) -> None:
    added = seed_demo(empty_conn)
    before = counts(empty_conn)
    assert added == len(demo_fixture()["events"]) == before[1]
    assert seed_demo(empty_conn) == 0
    assert counts(empty_conn) == before


def test_seed_demo_adds_back_only_what_is_missing(empty_conn: Connection) -> None:
    seed_demo(empty_conn)
    before = counts(empty_conn)
    empty_conn.execute(sql("DELETE FROM events WHERE id = 1"))
    assert seed_demo(empty_conn) == 1
    assert counts(empty_conn) == before


def test_the_demo_calendar(empty_conn: Connection) -> None:
    fixture = demo_fixture()
    assert json.loads(json.dumps(fixture)) == fixture  # plain JSON, to embed in a cassette
    seed_demo(empty_conn)
    owner = get_owner(empty_conn)
    assert (owner.name, owner.tz, owner.work_start, owner.work_end) == ("Jordan Lee", "Europe/London", NINE, FIVE)
    people = {p.key: p for p in list_people(empty_conn)}
    assert people["priya"].name == "Priya Raman"
    assert people["priya"].tz == "Europe/London"
    assert len({p.tz for p in people.values()}) >= 3
    assert find_person(empty_conn, "sam") is None  # a later lesson needs Sam to be unknown
    # The current week (the demo clock is Thu 2026-08-27) is lived-in.
    assert events_for(empty_conn, "you", utc("2026-08-24T00:00"), utc("2026-08-29T00:00"))


def test_a_fixture_never_overwrites_another_owner(empty_conn: Connection) -> None:
    set_owner(empty_conn, "Someone Else", "Asia/Tokyo", NINE, FIVE)
    with pytest.raises(CalendarError) as raised:
        seed_demo(empty_conn)
    assert "Someone Else" in str(raised.value)
    assert "--db" in str(raised.value)
    assert counts(empty_conn) == (1, 0, 0)  # one transaction: nothing half-loaded


def test_load_fixture_needs_offsets_on_event_starts(empty_conn: Connection) -> None:
    fixture: dict[str, Any] = {
        "owner": {"name": "Jordan Lee", "tz": "Europe/London", "hours": "09:00-17:00"},
        "events": [{"title": "Sync", "start": "2026-08-31T09:00", "minutes": 30, "attendees": ["you"]}],
    }
    with pytest.raises(CalendarError, match="no offset"):
        load_fixture(empty_conn, fixture)


# --- repeating events -----------------------------------------------------------------------


def london(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo("Europe/London"))


def test_a_repeating_event_gives_its_occurrences_in_the_range(empty_conn: Connection) -> None:
    set_owner(empty_conn, "Jordan Lee", "Europe/London", NINE, FIVE)
    weekly = Recurrence("FREQ=WEEKLY;BYDAY=MO", exdates=(london("2026-11-02T09:00"),))
    event = add_event(
        empty_conn,
        "Standup",
        london("2026-10-12T09:00"),
        london("2026-10-12T09:15"),
        ["you"],
        tz="Europe/London",
        recurrence=weekly,
    )
    assert event.recurring
    found = events_for(empty_conn, "you", utc("2026-10-20T00:00"), utc("2026-11-10T00:00"))
    assert [(e.id, e.start, e.end) for e in found] == [
        (event.id, utc("2026-10-26T09:00"), utc("2026-10-26T09:15")),  # 09:00 GMT, after the change
        (event.id, utc("2026-11-09T09:00"), utc("2026-11-09T09:15")),  # 11-02 left out
    ]
    assert events_for(empty_conn, "you", utc("2026-10-01T00:00"), utc("2026-10-12T08:00")) == []  # before it begins
    assert get_event(empty_conn, event.id) == event  # the event itself is its first occurrence


def test_occurrences_keep_the_wall_clock_length_and_overlap_the_range_edges() -> None:
    first = (london("2026-10-24T23:30"), utc("2026-10-25T01:30"))  # to 01:30 GMT: 2 hours on the clock, 3 real
    found = occurrences(
        first, "Europe/London", Recurrence("FREQ=DAILY;COUNT=3"), utc("2026-10-25T01:00"), utc("2026-10-26T00:00")
    )
    assert found == [
        (utc("2026-10-24T22:30"), utc("2026-10-25T01:30")),  # the first one still overlaps the start
        (utc("2026-10-25T23:30"), utc("2026-10-26T01:30")),
    ]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("FREQ=SOMETIMES", "FREQ=SOMETIMES"),
        ("FREQ=MINUTELY", "repeats every minute"),
        ("FREQ=DAILY;COUNT=2;UNTIL=20261231T000000Z", "both COUNT and UNTIL"),
        ("FREQ=DAILY;INTERVAL=0", "INTERVAL=0: RFC 5545 says it is a positive whole number"),  # looped for ever
        ("FREQ=DAILY;COUNT=-1", "COUNT=-1: RFC 5545 says it is a positive whole number"),
        ("FREQ=HOURLY;BYHOUR=24", "BYHOUR=24: RFC 5545 allows 0..23 only"),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31", "gives no date at all"),  # walked to 9999
    ],
)
@pytest.mark.timeout(10)
def test_a_rule_dateutil_cannot_expand_is_refused(empty_conn: Connection, rule: str, expected: str) -> None:
    set_owner(empty_conn, "Jordan Lee", "Europe/London", NINE, FIVE)
    with pytest.raises(CalendarError, match=expected):
        add_event(
            empty_conn,
            "X",
            utc("2026-10-12T09:00"),
            utc("2026-10-12T10:00"),
            ["you"],
            tz="UTC",
            recurrence=Recurrence(rule),
        )
    with pytest.raises(CalendarError, match="time zone it repeats in"):
        add_event(
            empty_conn,
            "X",
            utc("2026-10-12T09:00"),
            utc("2026-10-12T10:00"),
            ["you"],
            recurrence=Recurrence("FREQ=DAILY"),
        )
    assert counts(empty_conn) == (1, 0, 0)


@pytest.mark.parametrize("frequency", ["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY"])
@pytest.mark.parametrize("start", ["2028-02-29T09:00", "2026-01-31T23:30", "2026-12-31T00:00", "2026-10-25T01:30"])
@pytest.mark.parametrize("ends", ["", ";COUNT=1", ";INTERVAL=7;UNTIL=20200101T000000Z", ";WKST=SU;INTERVAL=400"])
def test_a_rule_with_no_by_part_always_gives_a_date(frequency: str, start: str, ends: str) -> None:
    """check_rule walks a rule to see that some date fits it only when the rule has a BYxxx part: without
    one, the walk it leaves out finds a date for any start (a 29 February, a 31st, a changed clock)."""
    from dateutil.rrule import rrulestr

    from scheduler_agent.calendar.recurrence import _check_it_occurs

    rule = f"FREQ={frequency}{ends}"
    _check_it_occurs(rule, rrulestr(rule, dtstart=london(start)))  # raises if no date fits


def test_import_events_is_keyed_by_uid_and_person(empty_conn: Connection) -> None:
    seed_demo(empty_conn)
    before = counts(empty_conn)
    item = ImportedEvent("a@x", None, "Gym", utc("2026-10-12T07:00"), utc("2026-10-12T08:00"), "UTC")
    first = import_events(empty_conn, "priya", [item])
    again = import_events(empty_conn, "priya", [item])
    moved = import_events(
        empty_conn,
        "priya",
        [ImportedEvent("a@x", None, "Gym", utc("2026-10-12T08:00"), utc("2026-10-12T09:00"), "UTC")],
    )
    assert (first.new, again.unchanged, moved.updated) == (1, 1, 1)
    assert counts(empty_conn)[1] == before[1] + 1
    with pytest.raises(CalendarError):  # one bad event: none of them
        import_events(
            empty_conn,
            "priya",
            [item, ImportedEvent("b@x", None, "Bad", utc("2026-10-12T09:00"), utc("2026-10-12T08:00"), "UTC")],
        )
    assert counts(empty_conn)[1] == before[1] + 1
    assert import_events(empty_conn, "priya", [], cancelled=[("a@x", None)]).removed == 1
    assert counts(empty_conn) == before


def test_a_fixture_keeps_repeating_events(empty_conn: Connection, tmp_path: Path) -> None:
    seed_demo(empty_conn)
    add_event(
        empty_conn,
        "Standup",
        london("2026-08-03T09:00"),
        london("2026-08-03T09:15"),
        ["you", "priya"],
        tz="Europe/London",
        recurrence=Recurrence("FREQ=WEEKLY;BYDAY=MO,WE", (london("2026-09-04T16:00"),), (london("2026-09-02T09:00"),)),
    )
    fixture = export_fixture(empty_conn)
    assert json.loads(json.dumps(fixture)) == fixture
    assert fixture["events"][-1]["rrule"] == "FREQ=WEEKLY;BYDAY=MO,WE"
    assert all("rrule" not in event and "tz" not in event for event in fixture["events"][:-1])  # cassettes unchanged
    copy = db.connect(tmp_path / "copy.db")
    load_fixture(copy, fixture)
    week = (utc("2026-08-31T00:00"), utc("2026-09-05T00:00"))
    assert events_for(copy, "priya", *week) == events_for(empty_conn, "priya", *week)
    assert [r.recurrence for r in event_records(copy)] == [r.recurrence for r in event_records(empty_conn)]


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=DAILY",
        "FREQ=DAILY;INTERVAL=3",
        "FREQ=DAILY;BYDAY=MO,WE,FR;BYHOUR=9,15",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH",
        "FREQ=WEEKLY;INTERVAL=3;WKST=SU;BYDAY=SU,MO",
        "FREQ=WEEKLY;BYDAY=TU;BYSETPOS=1",
        "FREQ=WEEKLY;INTERVAL=2;UNTIL=20290101T000000Z",
        "FREQ=DAILY;COUNT=2000",
        "FREQ=MONTHLY;BYDAY=-1FR",
    ],
)
def test_a_long_running_rule_gives_the_same_occurrences_when_expanded_from_near_the_range(rule: str) -> None:
    """`occurrences` starts a DAILY/WEEKLY rule near the range; a full walk from DTSTART must agree."""
    from dateutil.rrule import rruleset, rrulestr

    first = (london("2020-01-07T09:00"), london("2020-01-07T10:30"))  # a Tuesday, in GMT
    wall = timedelta(minutes=90)
    for start, end in [
        (utc("2026-10-19T00:00"), utc("2026-11-09T00:00")),  # across the change back to GMT
        (utc("2027-03-22T00:00"), utc("2027-04-05T00:00")),  # across the change to BST
        (utc("2020-01-01T00:00"), utc("2020-01-20T00:00")),  # the first weeks
    ]:
        full = rruleset()
        full.rdate(first[0])
        full.rrule(rrulestr(rule, dtstart=first[0]))
        expected = [
            (begins.astimezone(UTC), (begins.replace(tzinfo=None) + wall).replace(tzinfo=begins.tzinfo).astimezone(UTC))
            for begins in full.between(start - wall, end)
        ]
        assert expected or "COUNT" in rule  # not a vacuous comparison (COUNT=2000 ends in 2025)
        assert occurrences(first, "Europe/London", Recurrence(rule), start, end) == expected, (rule, start)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 8, 31, 14, 0, tzinfo=ZoneInfo("Europe/London")),  # summer time: 13:00 UTC
        datetime(2026, 12, 31, 23, 30, 59, 999_999, tzinfo=ZoneInfo("America/New_York")),  # next year in UTC
        datetime(2026, 3, 29, 1, 0, tzinfo=UTC),
        datetime(1000, 1, 1, 0, 0, 1, tzinfo=UTC),
        datetime(999, 12, 31, 23, 59, tzinfo=UTC),  # strftime writes it unpadded: kept so
        datetime(9999, 12, 31, 12, 0, tzinfo=ZoneInfo("Asia/Tokyo")),
        datetime(2030, 6, 1, 9, 15, 30, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
    ],
)
def test_an_event_time_is_stored_as_the_utc_format_writes_it(moment: datetime) -> None:
    text = to_utc_text(moment)
    assert text == moment.astimezone(UTC).strftime(UTC_FORMAT)
    if moment.year >= 1000:
        assert from_utc_text(text) == moment.replace(microsecond=0)  # the same instant, to the second


def test_a_naive_time_is_refused_with_what_to_give() -> None:
    with pytest.raises(ValueError, match="has no time zone; give an aware datetime"):
        to_utc_text(datetime(2026, 8, 31, 14, 0))
