"""m012_series, m013_feeds and m035_length_indexes on a calendar made before them: what was imported, and
what the range reads need, keep working."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Connection
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from scheduler_agent.calendar import busy
from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.fixtures import demo_fixture, load_fixture, seed_demo
from scheduler_agent.calendar.recurrence import digest, series_text
from scheduler_agent.calendar.types import Recurrence, to_utc_text
from scheduler_agent.storage import db, migrations
from scheduler_agent.storage.migrations import HEAD


def old_people(conn: Connection) -> None:
    """The owner and Priya as the schema before m012 stores people (later columns did not exist yet)."""
    with db.transaction(conn):
        conn.execute(sql("INSERT INTO people VALUES ('you', 'Jordan Lee', 'Europe/London', '09:00', '17:00')"))
        conn.execute(sql("INSERT INTO people VALUES ('priya', 'Priya Raman', 'Europe/London', '09:00', '17:00')"))


BEFORE_M012 = "m010"  # the revision before m012_series


def test_an_older_calendar_is_migrated_with_its_imported_series_intact(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = db.connect(path, to=BEFORE_M012)
    old_people(old)
    with db.transaction(
        old
    ):  # an imported weekly standup as the code before m012 stored it: columns only, no components
        cursor = old.execute(
            sql(
                "INSERT INTO events (title, start_utc, end_utc, tz, rrule) VALUES "
                "('Standup', '2026-10-12T08:00:00Z', '2026-10-12T08:30:00Z', 'Europe/London', 'FREQ=WEEKLY;BYDAY=MO')"
            )
        )
        old.execute(sql("INSERT INTO event_attendees VALUES (:lastrowid, 'priya')"), {"lastrowid": cursor.lastrowid})
        old.execute(
            sql("INSERT INTO event_sources VALUES (:lastrowid, 'priya', 'standup@t', '')"),
            {"lastrowid": cursor.lastrowid},
        )
    old.close()

    conn = db.connect(path)
    assert db.revision(conn) == HEAD  # m012, m013 and the rest applied, in order, on connect
    row = conn.execute(sql("SELECT person_key, origin, uid, recurrence_id FROM event_sources")).fetchone()
    assert tuple(row) == ("priya", "", "standup@t", "")  # kept, as a file's
    found = events_for(conn, "priya", datetime(2026, 10, 19, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC))
    standups = [(e.title, e.start) for e in found if e.title == "Standup"]
    assert standups == [  # expanded by the library from the columns: 09:00 London across the change
        ("Standup", datetime(2026, 10, 19, 8, 0, tzinfo=UTC)),
        ("Standup", datetime(2026, 10, 26, 9, 0, tzinfo=UTC)),
        ("Standup", datetime(2026, 11, 2, 9, 0, tzinfo=UTC)),
    ]
    with pytest.raises(IntegrityError):  # one (person, origin, UID) once
        conn.execute(sql("INSERT INTO event_sources VALUES (1, 'priya', '', 'standup@t', '')"))
    conn.execute(sql("INSERT INTO feeds (person_key, url) VALUES ('priya', 'https://example.com/x.ics')"))
    conn.close()


def longest_days(conn: Connection) -> float:
    event, _ = busy._LONGEST.first(conn)
    return float(event)


def test_the_length_bound_follows_every_write(any_conn: Connection) -> None:
    """On both databases (PostgreSQL's julianday() is m035's own function): the bound is the longest
    single event's length after an insert, an update and a delete."""
    conn = any_conn
    bound = longest_days(conn)
    at = datetime(2026, 9, 1, tzinfo=UTC)
    long = add_event(conn, "Long", at, at + timedelta(days=3), ["priya"])
    assert longest_days(conn) == pytest.approx(3) and bound < 3
    # a three-day event that began well before the window is still found by the bounded range query
    found = events_for(conn, "priya", at + timedelta(days=2), at + timedelta(days=2, hours=1))
    assert "Long" in [e.title for e in found]
    with db.transaction(conn):
        conn.execute(sql("UPDATE events SET end_utc = '2026-09-06T00:00:00Z' WHERE id = :id"), {"id": long.id})
    assert longest_days(conn) == pytest.approx(5)
    found = events_for(conn, "priya", at + timedelta(days=4), at + timedelta(days=4, hours=1))
    assert "Long" in [e.title for e in found]
    with db.transaction(conn):
        conn.execute(sql("DELETE FROM events WHERE id = :id"), {"id": long.id})
    assert longest_days(conn) == pytest.approx(bound)  # it shrinks again: the triggers' bound only grew


def demo_before(migration: str, path: Path) -> Connection:
    """The demo calendar at `path` as the version before `migration` made it."""
    revisions = migrations.revisions()
    old = db.connect(path, to=revisions[revisions.index(migration.split("_")[0]) - 1])
    seed_demo(old)
    return old


def test_a_calendar_made_before_m035_loses_the_triggers_and_reads_its_long_events(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = demo_before("m035_length_indexes", path)
    at = datetime(2026, 9, 1, 9, tzinfo=UTC)
    add_event(old, "Four days", at, at + timedelta(days=4), ["priya"])
    # A daily series as that version stored it (today's writer also fills columns later revisions added):
    # its row, its components, and one materialised occurrence (of which m035's index reads the length).
    daily = (at, at + timedelta(hours=2))
    text = series_text(daily, "UTC", Recurrence("FREQ=DAILY"), "Daily")
    event_id = old.execute(
        sql(
            "INSERT INTO events (title, start_utc, end_utc, tz, rrule) "
            "VALUES ('Daily', :start, :end, 'UTC', 'FREQ=DAILY')"
        ),
        {"start": to_utc_text(daily[0]), "end": to_utc_text(daily[1])},
    ).lastrowid
    old.execute(
        sql("INSERT INTO event_attendees (event_id, person_key) VALUES (:event_id, 'priya')"), {"event_id": event_id}
    )
    old.execute(
        sql(
            "INSERT INTO event_series (event_id, components, version, zone, day_zone) VALUES (:event_id, "
            ":text, :text2, 'UTC', 'UTC')"
        ),
        {"event_id": event_id, "text": text, "text2": digest(text, "UTC", "UTC")},
    )
    old.execute(
        sql("INSERT INTO occurrences (event_id, start_utc, end_utc, title) VALUES (:event_id, :start, :end, 'Daily')"),
        {"event_id": event_id, "start": to_utc_text(daily[0]), "end": to_utc_text(daily[1])},
    )
    assert old.execute(sql("SELECT seconds FROM length_bounds WHERE what = 'event'")).fetchone()[0] == 4 * 86400
    old.close()

    conn = db.connect(path)
    kinds = {name: kind for kind, name in conn.execute(sql("SELECT type, name FROM sqlite_master"))}
    assert "length_bounds" not in kinds and "trigger" not in kinds.values()
    assert kinds["events_single_by_length"] == kinds["occurrences_by_length"] == "index"
    assert busy._LONGEST.first(conn) == pytest.approx((4, 2 / 24))
    found = events_for(conn, "priya", at + timedelta(days=3), at + timedelta(days=3, hours=1))
    assert {"Daily", "Four days"} <= {e.title for e in found}  # priya's annual leave is there too
    conn.close()


def test_reimporting_a_series_stored_the_old_way_folds_its_override_rows_into_it(tmp_path: Path) -> None:
    """Before m012 an override was an event of its own (keyed by its RECURRENCE-ID) and an EXDATE on the
    master; imported again, the override lives in the series and its old row goes."""
    from click.testing import CliRunner

    from scheduler_agent.cli.calendar import calendar_app

    path = tmp_path / "old.db"
    old = db.connect(path, to=BEFORE_M012)
    old_people(old)
    with db.transaction(old):
        master = old.execute(
            sql(
                "INSERT INTO events (title, start_utc, end_utc, tz, rrule, exdates) VALUES ('Sync', "
                "'2026-10-05T09:00:00Z', '2026-10-05T10:00:00Z', 'Europe/London', 'FREQ=WEEKLY;COUNT=6', "
                "'2026-10-19T09:00:00Z')"
            )
        ).lastrowid
        moved = old.execute(
            sql(
                "INSERT INTO events (title, start_utc, end_utc) VALUES ('Sync (later)', "
                "'2026-10-19T14:00:00Z', '2026-10-19T15:00:00Z')"
            )
        ).lastrowid
        for event_id, rid in ((master, ""), (moved, "2026-10-19T09:00:00Z")):
            old.execute(sql("INSERT INTO event_attendees VALUES (:event_id, 'priya')"), {"event_id": event_id})
            old.execute(
                sql("INSERT INTO event_sources VALUES (:event_id, 'priya', 'tf@t', :rid)"),
                {"event_id": event_id, "rid": rid},
            )
    old.close()

    data = Path(__file__).parent / "data" / "ics" / "thisandfuture.ics"
    result = CliRunner().invoke(calendar_app, ["import", str(data), "--person", "priya", "--db", str(path)])
    assert result.exit_code == 0, result.output
    assert ": 0 new, 1 updated." in result.stdout
    conn = db.connect(path)
    rows = conn.execute(sql("SELECT event_id, recurrence_id FROM event_sources WHERE uid = 'tf@t'")).fetchall()
    assert [tuple(row) for row in rows] == [(master, "")]  # the old override row is gone; the master kept its id
    found = events_for(conn, "priya", datetime(2026, 10, 19, tzinfo=UTC), datetime(2026, 10, 27, tzinfo=UTC))
    assert [(e.title, e.start) for e in found if e.title.startswith("Sync")] == [
        ("Sync (later)", datetime(2026, 10, 19, 14, 0, tzinfo=UTC)),
        ("Sync (later)", datetime(2026, 10, 26, 15, 0, tzinfo=UTC)),  # THISANDFUTURE: 15:00 GMT after the change
    ]
    conn.close()


def test_a_calendar_made_before_m036_loses_two_indexes_and_its_feeds_still_count_and_go(tmp_path: Path) -> None:
    from scheduler_agent.calendar.feeds import list_feeds, unsubscribe
    from scheduler_agent.calendar.imports import import_events
    from scheduler_agent.calendar.people import find_person
    from scheduler_agent.calendar.types import ImportedEvent

    path = tmp_path / "old.db"
    old = demo_before("m036_fewer_indexes_to_write", path)
    at = datetime(2026, 9, 1, 9, tzinfo=UTC)
    feeds = []
    for key in ("priya", "marco"):
        person = find_person(old, key)
        assert person is not None
        with db.transaction(old):  # as that version subscribed: today's `subscribe` writes m037's columns too
            old.execute(
                sql("INSERT INTO feeds (person_key, url) VALUES (:key, :p2)"),
                {"key": key, "p2": f"https://example.com/{key}.ics"},
            )
        (feed_id,) = old.execute(sql("SELECT id FROM feeds WHERE person_key = :key"), {"key": key}).fetchone()
        feeds.append(feed_id)
        items = [
            ImportedEvent(f"{key}-{n}@t", None, "Busy", at + timedelta(days=n), at + timedelta(days=n, hours=1), "UTC")
            for n in range(3)
        ]
        import_events(old, key, items, origin=f"feed:{feed_id}", replace_all=True)
    old.close()

    conn = db.connect(path)
    indexes = {name for (name,) in conn.execute(sql("SELECT name FROM sqlite_master WHERE type = 'index'"))}
    assert not {"events_by_time", "event_sources_by_origin"} & indexes
    assert [(feed.person_key, feed.events) for feed in list_feeds(conn)] == [("priya", 3), ("marco", 3)]
    unsubscribe(conn, feeds[0])
    assert [(feed.person_key, feed.events) for feed in list_feeds(conn)] == [("marco", 3)]
    left = conn.execute(sql("SELECT s.uid FROM event_sources s ORDER BY s.uid")).fetchall()
    assert [row[0] for row in left] == ["marco-0@t", "marco-1@t", "marco-2@t"]
    standup = {"title": "Standup", "start": "2026-09-01T09:00+01:00", "minutes": 15, "attendees": ["you"]}
    fixture = demo_fixture() | {"events": [standup | {"tz": "Europe/London", "rrule": "FREQ=DAILY"}]}
    assert load_fixture(conn, fixture) == 1
    assert seed_demo(conn) == load_fixture(conn, fixture) == 0  # the fixture check finds each again, repeating too
    conn.close()
